"""A pytest plugin: check the trail of every conformance scenario run.

    pytest tests/conformance -p tests.review.trail_plugin

``tests.conformance.harness.run_all`` is wrapped before the conformance modules import
it. After each scenario, the run it produced is checked with ``check_trail`` against the
machine that ran it, in every form a user can save it in: the Responses API item list
(``responses_items(result.to_input_list())``), stepswitch's own item records (which name
the agent of each item), and, for a paused run, the saved ``RunState`` (JSON round trip).
A run that failed is checked from the items its error carries. The terminal summary
prints the count and every finding; ``tests/review/test_trail_conformance.py`` runs it.
"""

from __future__ import annotations

import json
import os
from typing import Any

from stepswitch import StateMachine
from stepswitch.review import check_trail, read_trail, responses_items
from stepswitch.runtime.state_json import _item
from tests.conformance import harness

_original = harness.run_all
# Known runtime discrepancies the trail check finds, each (test id prefix, code). They are
# reported as "known" and must keep occurring (strict, like xfail_strict): when the
# runtime is fixed, the entry goes.
KNOWN: dict[tuple[str, str], str] = {}
SEEN_KNOWN: set[tuple[str, str]] = set()
RUNS: dict[str, int] = {"runs": 0, "trails": 0, "states": 0, "failed": 0, "dangling": 0}
FINDINGS: list[str] = []


def _report(machine: StateMachine, text: str, kwargs: dict[str, Any]) -> Any:
    config = kwargs.get("run_config")
    RUNS["trails"] += 1
    return check_trail(
        read_trail(text), machine.ir, start=kwargs.get("starting_agent"),
        unknown_tool=getattr(config, "unknown_tool", "raise"),
        max_turns=kwargs.get("max_turns", "machine"),  # run(..., max_turns=N) overrides
        on_max_turns=getattr(config, "on_max_turns", None) is not None,
    )


def _note(report: Any, form: str, expected: set[tuple[str, str]] | None = None) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "? ?").rsplit(" ", 1)[0]
    found = {(f.code, f.message.split("'")[1]) for f in report.findings}
    if expected is not None and found == expected:
        RUNS["dangling"] += 1
        return
    for f in report.findings:
        if (test, f.code) in KNOWN:
            SEEN_KNOWN.add((test, f.code))
            continue
        FINDINGS.append(f"{test}: {form}: {f.where}: {f.code} {f.message}")
    if expected is not None and not report.findings:
        FINDINGS.append(f"{test}: {form}: dangling calls {sorted(expected)} not reported")


def _checked_run_all(machine: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
    outcome = _original(machine, input, *args, **kwargs)
    if not isinstance(machine, StateMachine):
        return outcome
    RUNS["runs"] += 1
    result = outcome.result
    if result is not None:
        items = [*result.input, *result.new_items]
        if result.interruptions:  # a paused run: its state keeps the pending calls apart
            RUNS["states"] += 1
            _note(_report(machine, result.to_state().to_json(), kwargs), "state")
            return outcome
    else:
        data = getattr(outcome.error, "run_data", None)
        if data is None:
            return outcome
        RUNS["failed"] += 1
        items = [*data.input, *data.new_items]
        dangling = _dangling(items)
        if dangling:
            # A run that failed mid-turn (a tool raised) leaves calls without outputs; the
            # runtime refuses to resume such a state, and the trail must say TR101 for
            # exactly those calls.
            expected = {("TR101", call_id) for call_id in dangling}
            _note(_report(machine, json.dumps(responses_items(items)), kwargs),
                  "failed run", expected)
            return outcome
        try:
            saved = data.to_state().to_json()
        except RuntimeError:  # this run cannot be resumed: no state to check
            saved = None
        if saved is not None:
            RUNS["states"] += 1
            _note(_report(machine, saved, kwargs), "failed-run state")
    _note(_report(machine, json.dumps(responses_items(items)), kwargs), "responses list")
    _note(_report(machine, json.dumps([_item(i) for i in items]), kwargs), "stepswitch items")
    return outcome


def _dangling(items: list[Any]) -> set[str]:
    answered = {i.call_id for i in items if i.type in ("tool_call_output_item",
                                                       "handoff_output_item")}
    return {i.call_id for i in items
            if i.type in ("tool_call_item", "handoff_call_item") and i.call_id not in answered}


harness.run_all = _checked_run_all


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(
        f"trail: {RUNS['runs']} scenario runs, {RUNS['trails']} trails checked "
        f"({RUNS['states']} saved states, {RUNS['failed']} failed runs, {RUNS['dangling']} "
        "left calls dangling, each reported as TR101), "
        f"{len(FINDINGS)} findings"
    )
    for test, code in sorted(KNOWN):
        state = "seen" if (test, code) in SEEN_KNOWN else "NOT SEEN"
        terminalreporter.write_line(f"trail known: {state}: {test} {code}: {KNOWN[test, code]}")
    for line in FINDINGS:
        terminalreporter.write_line(f"trail finding: {line}")
