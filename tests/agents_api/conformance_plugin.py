"""A pytest plugin: every conformance scenario the hosted Agents API can express, run on it
too, with the same item trace as the local run.

    pytest tests/conformance -p tests.agents_api.conformance_plugin

``tests.conformance.harness.run_all`` is wrapped before the conformance modules import
it. After the scenario ran locally (on every surface, as the harness insists), its script
is served by a fresh ``AgentsAPIServer`` (call ids numbered as ``ScriptedModel`` numbers
them) and the run repeated with ``AgentsAPIModel`` over real HTTP: its items (pins left
out), final output, last agent, interruptions and error type must equal the local run's.

A scenario the API cannot express is counted apart, with its reason, never compared
silently wrong: input that is not user text (a resumed state, items), a script step that
is an exception or a hosted item, concurrent agent-tool runs sharing one script (their
order over HTTP is not fixed), run settings the API has no place for, and whatever the
adapter itself refuses ("the Agents API cannot express this"). The hosted run happens
after the test's own assertions (it calls the scenario's tools and hooks again). The
terminal summary prints the counts and every mismatch;
``tests/agents_api/test_conformance_on_agents_api.py`` runs it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from stepswitch import RunState, StateMachine, UserError
from stepswitch.ir import RunAgent
from stepswitch.models import AgentsAPIModel, AgentsAPIServer
from stepswitch.runtime.model import ModelResponse, OutputFunctionCall, OutputMessage
from tests.conformance import harness

_original = harness.run_all
COUNTS: Counter[str] = Counter()
SKIPPED: Counter[str] = Counter()
MISMATCHES: list[str] = []
_PENDING: list[tuple[Any, str, list[Any], dict[str, Any], Any, dict[str, Any]]] = []
KNOWN: dict[str, str] = {
    "tests/conformance/test_sdk_semantics.py::test_agent_tool_output_extractor":
        "the extractor counts the nested run's new_items, which hold its session's pin",
}
"""Scenarios whose hosted run differs on purpose, each with why. Strict: an entry that no
longer differs fails the check (tests/agents_api/test_conformance_on_agents_api.py)."""
SEEN_KNOWN: set[str] = set()
_KWARGS = frozenset({"context", "max_turns", "run_config", "hooks"})


def _steps(script: Any) -> list[Any] | str:
    """The script as server steps with ScriptedModel's call ids; or why it cannot be."""
    if callable(script):
        return "a model that answers by its input"
    steps: list[Any] = []
    ids = 0
    for index, step in enumerate(script):
        if isinstance(step, BaseException):
            return "a script step that raises"
        if isinstance(step, ModelResponse):
            return "a whole ModelResponse step"
        items = list(step) if isinstance(step, list | tuple) else [step]
        out: list[Any] = []
        for item in items:
            if type(item) is OutputFunctionCall:
                if not item.call_id:
                    ids += 1
                    item = replace(item, call_id=f"call_{index + 1}_{ids}")
            elif type(item) is not OutputMessage or item.refusal is not None:
                return "a refusal or a hosted item (the API has neither)"
            out.append(item)
        steps.append(out)
    return steps


def _concurrent_agent_tools(machine: StateMachine, steps: list[Any]) -> bool:
    names = {t.name for s in machine.ir.states for t in s.tools
             if isinstance(t.action, RunAgent)}
    return any(sum(1 for i in step if getattr(i, "name", None) in names) > 1 for step in steps)


def _why_not(machine: Any, input: Any, script: Any, kwargs: dict[str, Any]) -> str | list[Any]:
    if not isinstance(machine, StateMachine):
        return "not a StateMachine"
    if isinstance(input, RunState) or not isinstance(input, str):
        return "input other than user text (a state or items from a local run)"
    extra = sorted(set(kwargs) - _KWARGS)
    if extra:
        return f"run options {', '.join(extra)}"
    config = kwargs.get("run_config")
    if config is not None and (config.model_settings is not None
                               or config.handoff_input_filter is not None):
        return "run-level model settings or a handoff input filter"
    if machine.ir.flow is not None:
        return "a flow"
    steps = _steps(script)
    if isinstance(steps, str):
        return steps
    if _concurrent_agent_tools(machine, steps):
        return "concurrent agent-tool runs sharing one script"
    return steps


def _shape(items: Any) -> list[tuple[Any, ...]]:
    out = []
    for i in items:
        if i.type == "responses_item" and i.item.get("type") == "agents_api.pin":
            continue
        out.append((i.type, i.agent, getattr(i, "name", None), getattr(i, "call_id", None),
                    getattr(i, "arguments", None), getattr(i, "output", None),
                    getattr(i, "content", None), getattr(i, "is_error", None)))
    return out


def _seen(outcome: Any) -> dict[str, Any]:
    if outcome.error is not None:
        data = getattr(outcome.error, "run_data", None)
        return {"error": type(outcome.error).__name__,
                "items": _shape(data.new_items) if data is not None else None}
    result = outcome.result
    return {"items": _shape(result.new_items), "final_output": result.final_output,
            "last_agent": result.last_agent,
            "interruptions": [(i.name, i.call_id, i.run_path) for i in result.interruptions]}


def _hosted(machine: StateMachine, input: str, steps: list[Any],
            kwargs: dict[str, Any]) -> harness.Outcome:
    with AgentsAPIServer(steps, idle_timeout=60.0) as server:
        model = AgentsAPIModel("scripted", server.client(max_retries=0),
                               race_delays=(0.01,))
        outcome = harness.Outcome("agents_api", None)  # type: ignore[arg-type]
        try:
            outcome.result = machine.run_sync(input, model=model, **kwargs)
        except Exception as exc:
            outcome.error = exc
    return outcome


def _agents_api_run_all(machine: Any, input: Any, script: Any, *args: Any,
                        **kwargs: Any) -> Any:
    outcome = _original(machine, input, script, *args, **kwargs)
    COUNTS["scenarios"] += 1
    options = {k: v for k, v in kwargs.items() if k != "ledger"}
    steps = _why_not(machine, input, script, options)
    if isinstance(steps, str):
        SKIPPED[steps] += 1
        return outcome
    if isinstance(outcome.error, AssertionError):
        SKIPPED["the local run failed its own script (AssertionError)"] += 1
        return outcome
    ledger = kwargs.get("ledger")
    local = _seen(outcome)
    if ledger is not None:
        local["ran"] = list(ledger.ran)
    # run once the test's own assertions are done: the hosted run calls the scenario's
    # tools and hooks again, and what they record is the test's to read, not ours
    _PENDING.append((machine, input, steps, options, ledger, local))
    return outcome


def _compare(machine: Any, input: str, steps: list[Any], options: dict[str, Any],
             ledger: Any, local: dict[str, Any], test: str) -> None:
    if ledger is not None:
        ledger.ran.clear()
    hosted = _hosted(machine, input, steps, options)
    if isinstance(hosted.error, UserError) and "the Agents API cannot express" in str(
        hosted.error
    ):
        SKIPPED[f"the adapter refuses it: {str(hosted.error).rsplit('(', 1)[-1][:-1]}"] += 1
        return
    COUNTS["compared"] += 1
    remote = _seen(hosted)
    if ledger is not None:
        remote["ran"] = list(ledger.ran)
    if local == remote:
        return
    if test in KNOWN:
        SEEN_KNOWN.add(test)
        return
    MISMATCHES.append(f"{test}:\n  local:  {local}\n  hosted: {remote}"
                      + (f"\n  hosted error: {hosted.error}" if hosted.error else ""))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Any:
    _PENDING.clear()
    yield
    for machine, input, steps, options, ledger, local in list(_PENDING):
        _compare(machine, input, steps, options, ledger, local, item.nodeid)
    _PENDING.clear()


harness.run_all = _agents_api_run_all


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(
        f"agents_api: {COUNTS['scenarios']} scenario runs, {COUNTS['compared']} compared on "
        f"the Agents API, {len(MISMATCHES)} mismatches"
    )
    for reason, n in sorted(SKIPPED.items()):
        terminalreporter.write_line(f"agents_api skipped: {n} {reason}")
    for test in sorted(SEEN_KNOWN):
        terminalreporter.write_line(f"agents_api known: {test}: {KNOWN[test]}")
    for test in sorted(set(KNOWN) - SEEN_KNOWN):
        terminalreporter.write_line(f"agents_api known but not seen: {test}")
    for mismatch in MISMATCHES:
        terminalreporter.write_line(f"agents_api mismatch: {mismatch}")
