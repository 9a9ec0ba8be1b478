"""The workflows whose diagrams are golden-tested, by golden-file stem."""

from __future__ import annotations

from collections.abc import Callable

from graphs.support import support
from stepswitch.render import to_dot, to_mermaid
from tests.render.hostile import hostile
from tests.render.reports import report

SUPPORT_REPORT = report(
    ("SW201", "warning", "agent 'researcher' is unreachable", "agents.researcher"),
    ("SW302", "error", "handoff cycle triage -> refund -> triage", "agents.triage.handoffs[0]"),
    ("SW401", "info", "process_refund pauses for approval", "agents.refund.tools[0]"),
    ("SW110", "error", "max_turns is too small", "workflow"),
)

CASES: dict[str, Callable[[Callable[..., str]], str]] = {
    "support": lambda fn: fn(support),
    "support-tools": lambda fn: fn(support, tools=True),
    "support-report": lambda fn: fn(support, report=SUPPORT_REPORT),
    "support-tools-report": lambda fn: fn(support, tools=True, report=SUPPORT_REPORT),
    "hostile": lambda fn: fn(hostile),
    "hostile-tools": lambda fn: fn(hostile, tools=True),
}

WRITERS: dict[str, Callable[..., str]] = {"mmd": to_mermaid, "dot": to_dot}
