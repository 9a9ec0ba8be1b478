"""The workflows whose diagrams are golden-tested, by golden-file stem."""

from __future__ import annotations

from collections.abc import Callable

from graphs.support import support
from stepswitch.render import to_dot, to_mermaid
from tests.render.hostile import hostile, hostile_closed
from tests.render.mcp_case import mcp_workflow
from tests.render.reports import report

SUPPORT_REPORT = report(
    ("SW201", "warning", "agent 'researcher' is unreachable", "agents.researcher"),
    ("SW302", "error", "handoff cycle triage -> refund -> triage", "agents.triage.handoffs[0]"),
    ("SW401", "info", "process_refund pauses for approval", "agents.refund.tools[0]"),
    ("SW110", "error", "max_turns is too small", "workflow"),
)

SUPPORT_MACHINE_REPORT = report(
    ("SW501", "info", "refund can pause", "agents.refund"),
    ("SW201", "error", "cycle", "agents.refund.handoffs[0]"),
    ("SW202", "error", "recursion", "agents.triage.agent_tools[0]"),
    ("SW402", "error", "not strict", "agents.triage.tools[0]"),
)

CASES: dict[str, Callable[[Callable[..., str]], str]] = {
    "support": lambda fn: fn(support),
    "support-tools": lambda fn: fn(support, tools=True),
    "support-report": lambda fn: fn(support, report=SUPPORT_REPORT),
    "support-tools-report": lambda fn: fn(support, tools=True, report=SUPPORT_REPORT),
    "hostile": lambda fn: fn(hostile),
    "hostile-tools": lambda fn: fn(hostile, tools=True),
    "support-machine": lambda fn: fn(support, view="machine"),
    "support-machine-report": lambda fn: fn(support, view="machine", report=SUPPORT_MACHINE_REPORT),
    "hostile-machine": lambda fn: fn(hostile_closed, view="machine"),
    "mcp": lambda fn: fn(mcp_workflow),
    "mcp-tools": lambda fn: fn(mcp_workflow, tools=True),
}

WRITERS: dict[str, Callable[..., str]] = {"mmd": to_mermaid, "dot": to_dot}
