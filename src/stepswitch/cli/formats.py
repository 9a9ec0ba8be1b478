"""Output formats of ``stepswitch check``: text, JSON lines, SARIF 2.1.0 and GitHub
Actions annotations. Each is one small pure function from reports to a string."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from stepswitch._version import __version__
from stepswitch.analysis import CODES, Diagnostic, Report
from stepswitch.analysis.codes import code_doc

__all__ = ["FORMATS", "CheckedWorkflow", "github", "json_lines", "sarif", "text"]

CheckedWorkflow = tuple[str, Report]
"""A workflow's label (``graphs/support.py:support``) and its report."""

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def text(checked: Sequence[CheckedWorkflow], unimported: int = 0) -> str:
    """Like ruff: ``path:line:col: CODE [severity] message``, a help line, a summary.
    ``unimported`` files could not be imported: the summary counts them, and fails."""
    lines: list[str] = []
    errors = warnings = infos = 0
    for label, report in checked:
        for d in report.diagnostics:
            loc = d.location
            lines.append(f"{loc.file}:{loc.line}:{loc.column}: {d.code} [{d.severity}] "
                         f"{d.message}")
            if d.trace:
                lines.append("    counterexample:")
                for i, step in enumerate(d.trace, 1):
                    at = step.location
                    lines.append(f"      {i}. {step.message} ({at.file}:{at.line})")
            if d.help:
                lines.append(f"    help: {d.help}")
        lines.append(f"{label}: {report.summary()}")
        errors += len(report.errors)
        warnings += len(report.warnings)
        infos += len(report.infos)
    verdict = "failed" if errors or unimported else "passed"
    files = ""
    if unimported:
        files = (f"; {_plural(unimported, 'file')} could not be imported (stderr says why) "
                 "and went unchecked")
    lines.append(
        f"Checked {_plural(len(checked), 'workflow')}{files}: {verdict} with "
        f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}, {_plural(infos, 'info')}."
    )
    return "\n".join(lines) + "\n"


def _record(label: str, d: Diagnostic) -> dict[str, Any]:
    loc = d.location
    return {
        "file": loc.file,
        "line": loc.line,
        "column": loc.column,
        "end_line": loc.line,
        "end_column": loc.column,
        "code": d.code,
        "severity": d.severity,
        "message": d.message,
        "hint": d.help,
        "path": loc.path,
        "workflow": label,
        **({"trace": [{"message": s.message, "file": s.location.file, "line": s.location.line,
                       "column": s.location.column, "path": s.location.path}
                      for s in d.trace]} if d.trace else {}),
    }


def json_lines(checked: Sequence[CheckedWorkflow]) -> str:
    """One JSON object per finding and line, like ``mypy -O json``."""
    out = [
        json.dumps(_record(label, d), ensure_ascii=False)
        for label, report in checked
        for d in report.diagnostics
    ]
    return "".join(line + "\n" for line in out)


def _artifact(file: str) -> dict[str, Any]:
    path = Path(file)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": file.replace(os.sep, "/"), "uriBaseId": "%SRCROOT%"}


def _rules() -> list[dict[str, Any]]:
    rules = []
    for code in CODES.values():
        doc = code_doc(code.code)
        rules.append({
            "id": code.code,
            "name": code.name,
            "shortDescription": {"text": code.summary},
            "fullDescription": {"text": code.summary},
            "help": {"text": doc, "markdown": doc},
            "defaultConfiguration": {"level": _SARIF_LEVEL[code.severity]},
        })
    return rules


def _code_flow(d: Diagnostic) -> dict[str, Any]:
    """A counterexample as a SARIF codeFlow: one thread, a location per step."""
    steps = []
    for step in d.trace:
        at = step.location
        steps.append({"location": {
            "physicalLocation": {
                "artifactLocation": _artifact(at.file),
                "region": {"startLine": max(at.line, 1), "startColumn": max(at.column, 1)},
            },
            "logicalLocations": [{"fullyQualifiedName": at.path, "kind": "member"}],
            "message": {"text": step.message},
        }})
    return {"message": {"text": "the shortest run that breaks the policy"},
            "threadFlows": [{"locations": steps}]}


def _once(checked: Sequence[CheckedWorkflow]) -> Iterator[tuple[str, Diagnostic]]:
    """Each finding with the label of the first workflow it is found in: a folder check
    reads an agent shared by several apps once per app, and an annotation (or a code
    scanning alert) should say it once."""
    seen: set[tuple[str, str, int, int, str, str]] = set()
    for label, report in checked:
        for d in report.diagnostics:
            loc = d.location
            key = (d.code, loc.file, loc.line, loc.column, loc.path, d.message)
            if key not in seen:
                seen.add(key)
                yield label, d


def sarif(checked: Sequence[CheckedWorkflow], failures: Sequence[str] = ()) -> str:
    """A SARIF 2.1.0 log (one run) for GitHub code scanning and other viewers. Each of
    ``failures`` (a TARGET that did not import) is an error notification of the run's
    invocation, which then did not succeed: the log stays whole, and says so."""
    index = {code: i for i, code in enumerate(CODES)}
    results = []
    for label, d in _once(checked):
        loc = d.location
        message = d.message if not d.help else f"{d.message}\nHelp: {d.help}"
        result: dict[str, Any] = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": _artifact(loc.file),
                    "region": {"startLine": max(loc.line, 1),
                               "startColumn": max(loc.column, 1)},
                },
                "logicalLocations": [{"fullyQualifiedName": loc.path, "kind": "member"}],
            }],
            "properties": {"workflow": label},
        }
        if d.trace:
            result["codeFlows"] = [_code_flow(d)]
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "stepswitch",
                "version": __version__,
                "informationUri": "https://pypi.org/project/stepswitch/",
                "rules": _rules(),
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
            "invocations": [{
                "executionSuccessful": not failures,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": failure}} for failure in failures
                ],
            }],
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def escape_data(value: str) -> str:
    """Escape a workflow command's message (GitHub's ``escapeData``)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a workflow command's property value (GitHub's ``escapeProperty``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(checked: Sequence[CheckedWorkflow], failures: Sequence[str] = ()) -> str:
    """``::error file=…,line=…,col=…,title=…::message`` per finding and nothing else,
    as other linters' GitHub formats: every line is a workflow command. A TARGET that
    did not import (``failures``) is an ``::error`` of its own, so the run's page shows
    why the step failed."""
    lines = [f"::error title={escape_property('stepswitch check')}::{escape_data(failure)}"
             for failure in failures]
    for _, d in _once(checked):
        loc = d.location
        props = ",".join([
            f"file={escape_property(loc.file)}",
            f"line={loc.line}",
            f"col={loc.column}",
            f"title={escape_property(f'{d.code} {CODES[d.code].name}')}",
        ])
        message = d.message if not d.help else f"{d.message}\nhelp: {d.help}"
        if d.trace:
            message += "\ncounterexample:" + "".join(
                f"\n{i}. {s.message} ({s.location.file}:{s.location.line})"
                for i, s in enumerate(d.trace, 1))
        lines.append(f"::{_GITHUB_COMMAND[d.severity]} {props}::{escape_data(message)}")
    return "".join(line + "\n" for line in lines)


FORMATS: dict[str, Callable[[Sequence[CheckedWorkflow]], str]] = {
    "text": text,
    "json": json_lines,
    "sarif": sarif,
    "github": github,
}
