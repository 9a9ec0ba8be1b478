"""Output formats of ``stepswitch trail``: text and JSON, each a pure function."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import assert_never

from stepswitch._visible import visible
from stepswitch.review.trail import Trail, TrailReport
from stepswitch.review.trail_codes import TRAIL_CODES

__all__ = ["TRAIL_FORMATS", "json_doc", "text"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _what(trail: Trail) -> str:
    match trail.source:
        case "state":
            return "saved run state"
        case "items":
            return "item list"
        case "recording":
            return "recording"
        case _:
            assert_never(trail.source)


def text(file: str, trail: Trail, report: TrailReport, workflow: str | None) -> str:
    """``FILE:WHERE: CODE name: message`` per finding, then a summary line."""
    lines = [f"{file}:{f.where}: {f.code} {TRAIL_CODES[f.code].name}: {f.message}"
             for f in report.findings]
    what = _what(trail)
    against = (f" against {workflow}" if workflow is not None
               else " (pins only: how calls and outputs pair up; --workflow also checks "
               "each step against the workflow)")
    if workflow is not None and not report.machine:
        against = f" against {workflow} (pins only: flows are not replayed)"
    verdict = "clean" if report.ok else _plural(len(report.findings), "finding")
    lines.append(f"{file}: {what}, {_plural(report.items, 'item')} checked{against}: {verdict}")
    # ids, names and arguments in the messages are the model's: shown escaped
    return "\n".join(visible(line) for line in lines) + "\n"


def json_doc(file: str, trail: Trail, report: TrailReport, workflow: str | None) -> str:
    doc = {
        "file": file,
        "source": trail.source,
        "items": report.items,
        "workflow": workflow,
        "machine_checked": report.machine,
        "ok": report.ok,
        "findings": [
            {"code": f.code, "name": TRAIL_CODES[f.code].name, "message": f.message,
             "index": f.index, "where": f.where}
            for f in report.findings
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


TRAIL_FORMATS: dict[str, Callable[[str, Trail, TrailReport, str | None], str]] = {
    "text": text,
    "json": json_doc,
}
