"""Recorded cases: ``*.trail.json`` files that ``stepswitch test`` and the pytest plugin run.

A case is ``{"workflow": TARGET, "trail": <a recorded trail, embedded>, "expect": {…}}``
with any of the expectations ``last_agent``, ``tools_called`` (in order), ``output_type``
(the final output's type name), ``final_output`` (a string is a regular expression the
final output's text must match; anything else must equal it) and ``findings`` (the
replay codes expected, default none). A relative TARGET path resolves from the case's
folder. :func:`run_case` replays the trail on the workflow as it is now and lists every
expectation that does not hold.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.errors import CaseError
from stepswitch.review.replay import Divergence, ReplayError, read_recording, replay_run

__all__ = ["CaseError", "CaseResult", "case_doc", "find_cases", "load_case", "run_case"]

_EXPECT = frozenset({"last_agent", "tools_called", "output_type", "final_output", "findings"})


@dataclass(frozen=True, slots=True)
class Case:
    path: Path
    workflow: str
    trail: Any
    expect: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CaseResult:
    path: Path
    failures: tuple[str, ...]
    divergence: Divergence | None
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.failures


def find_cases(paths: list[str]) -> list[Path]:
    """Every ``*.trail.json`` under the paths (a file is taken as it is), sorted."""
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend(sorted(p.rglob("*.trail.json")))
        elif p.is_file():
            found.append(p)
        else:
            raise CaseError(f"{raw}: no such file or folder")
    return found


def load_case(path: Path) -> Case:
    try:
        doc = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise CaseError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CaseError(f"{path}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("workflow"), str):
        raise CaseError(f"{path}: a case is an object with a \"workflow\" target string")
    if "trail" not in doc:
        raise CaseError(f"{path}: the case has no \"trail\"")
    expect = doc.get("expect", {})
    if not isinstance(expect, dict):
        raise CaseError(f"{path}: \"expect\" must be an object")
    unknown = sorted(set(expect) - _EXPECT)
    if unknown:
        raise CaseError(f"{path}: unknown expectation {unknown[0]!r} (known: "
                        f"{', '.join(sorted(_EXPECT))})")
    _check_expect(path, expect)
    return Case(path, resolve_target(doc["workflow"], path.parent), doc["trail"], expect)


def _check_expect(path: Path, expect: dict[str, Any]) -> None:
    """Each expectation is of a kind it can be compared as: said now, as the case's own
    error, rather than as a failure (or a crash) of the replay."""
    for key in ("last_agent", "output_type"):
        if key in expect and not isinstance(expect[key], str):
            raise CaseError(f"{path}: expect.{key}: expected a string, got "
                            f"{json.dumps(expect[key])}")
    for key in ("tools_called", "findings"):
        value = expect.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise CaseError(f"{path}: expect.{key}: expected a list of strings, got "
                            f"{json.dumps(value)}")
    want = expect.get("final_output")
    if isinstance(want, str):
        try:
            re.compile(want)
        except re.error as exc:
            raise CaseError(f"{path}: expect.final_output: {want!r} is not a regular "
                            f"expression ({exc}); a string is matched as one (escape "
                            "what it must match literally)") from None


def resolve_target(target: str, folder: Path) -> str:
    """A case's TARGET, which names its file relative to the case's ``folder``, as a
    target from the working folder."""
    part, sep, name = target.rpartition(":")
    if not sep:
        part, name = target, ""
    if (part.endswith(".py") or "/" in part) and not Path(part).is_absolute():
        part = str(folder / part)
    return f"{part}:{name}" if name else part


def relative_target(target: str, folder: Path) -> str:
    """``target`` (relative to the working folder) as a case in ``folder`` names it."""
    part, sep, name = target.rpartition(":")
    if not sep:
        part, name = target, ""
    if (part.endswith(".py") or "/" in part) and not Path(part).is_absolute():
        part = os.path.relpath(Path(part).resolve(), folder.resolve())
    return f"{part}:{name}" if name else part


def run_case(path: Path, machines: dict[str, Any] | None = None) -> CaseResult:
    """Replay the case at ``path``; ``CaseError`` when it cannot be run at all."""
    started = time.perf_counter()
    case = load_case(path)
    cache = machines if machines is not None else {}
    loaded = cache.get(case.workflow)
    if loaded is None:
        from stepswitch.errors import UserError
        from stepswitch.targets.context import load_machine

        try:
            loaded = load_machine(case.workflow, flag="its workflow")  # the case's field
        except UserError as exc:  # a TargetError, or a context_type that does not build
            raise CaseError(f"{path}: {exc}") from None
        cache[case.workflow] = loaded
    machine, _, context = loaded
    try:
        outcome = replay_run(read_recording(json.dumps(case.trail)), machine, context=context)
    except ReplayError as exc:
        raise CaseError(f"{path}: trail: {exc}") from None
    failures: list[str] = []
    expect = case.expect
    found = outcome.divergence
    codes = [found.code] if found is not None else []
    wanted = expect.get("findings", [])
    if codes != list(wanted):
        failures.append(f"findings: expected {wanted or 'none'}, got "
                        f"{str(found) if found is not None else 'none'}")
    last = outcome.last
    if found is None and last is not None:
        _expect_run(expect, outcome.results, failures)
    return CaseResult(path, tuple(failures), found, time.perf_counter() - started)


def _expect_run(expect: dict[str, Any], results: tuple[Any, ...], out: list[str]) -> None:
    last = results[-1]
    if "last_agent" in expect and last.last_agent != expect["last_agent"]:
        out.append(f"last_agent: expected {expect['last_agent']!r}, got {last.last_agent!r}")
    if "tools_called" in expect:
        called = [i.name for r in results for i in r.new_items
                  if i.type == "tool_call_item"]
        if called != list(expect["tools_called"]):
            out.append(f"tools_called: expected {expect['tools_called']}, got {called}")
    final = last.final_output
    if "output_type" in expect and type(final).__name__ != expect["output_type"]:
        out.append(f"output_type: expected {expect['output_type']!r}, got "
                   f"{type(final).__name__!r}")
    if "final_output" in expect:
        want = expect["final_output"]
        value = final.model_dump(mode="json") if hasattr(final, "model_dump") else final
        if isinstance(want, str):
            text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            if re.search(want, text) is None:
                out.append(f"final_output: {text!r} does not match {want!r}")
        elif value != want:
            out.append(f"final_output: expected {want!r}, got {value!r}")


def case_doc(workflow: str, trail: Any, result: Any) -> dict[str, Any]:
    """A case that pins what ``result`` (a run of ``trail``) did."""
    final = result.final_output
    return {
        "workflow": workflow,
        "trail": trail,
        "expect": {
            "last_agent": result.last_agent,
            "tools_called": [i.name for i in result.new_items if i.type == "tool_call_item"],
            "output_type": type(final).__name__,
            **_pinned_output(final),
            "findings": [],
        },
    }


def _pinned_output(final: Any) -> dict[str, Any]:
    """The ``final_output`` expectation of a recorded case: a text as the regular
    expression that matches only it; a structured output (or any JSON value) as itself;
    nothing for an output that has no JSON form."""
    if isinstance(final, str):
        return {"final_output": f"^{re.escape(final)}$"}
    value = final.model_dump(mode="json") if hasattr(final, "model_dump") else final
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return {}
    return {"final_output": value}


def junit_xml(results: list[CaseResult], errors: dict[Path, str]) -> str:
    """JUnit XML, one testcase per case file."""
    from xml.sax.saxutils import escape, quoteattr

    total = len(results) + len(errors)
    failed = sum(1 for r in results if not r.ok)
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<testsuite name="stepswitch" tests="{total}" failures="{failed}" '
             f'errors="{len(errors)}">']
    for r in results:
        head = (f'  <testcase classname="stepswitch.trail" name={quoteattr(str(r.path))} '
                f'time="{r.seconds:.3f}"')
        if r.ok:
            lines.append(head + "/>")
        else:
            text = "\n".join(r.failures)
            lines.append(head + ">")
            lines.append(f"    <failure message={quoteattr(r.failures[0])}>{escape(text)}"
                         "</failure>")
            lines.append("  </testcase>")
    for path, message in errors.items():
        lines.append(f'  <testcase classname="stepswitch.trail" name={quoteattr(str(path))}>')
        lines.append(f"    <error message={quoteattr(message)}/>")
        lines.append("  </testcase>")
    lines.append("</testsuite>")
    return "\n".join(lines) + "\n"
