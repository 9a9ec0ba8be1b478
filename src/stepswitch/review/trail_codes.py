"""The registry of trail codes: what ``stepswitch trail`` reports.

Codes are ``TR`` plus three digits: TR1xx pins (calls, outputs, ids, pending calls),
TR2xx steps the machine does not allow (checked with ``--workflow``). Like the
analyzer's ``SW`` codes (:mod:`stepswitch.analysis.codes`) a code never changes
meaning, and each has a page (``docs/<CODE>.md`` in this package) that
``stepswitch explain CODE`` prints.
"""

from __future__ import annotations

from importlib import resources

from stepswitch._dataclass import dataclass

__all__ = ["TRAIL_CODES", "TRAIL_GROUPS", "TrailCode", "trail_code_doc"]


@dataclass(frozen=True, slots=True)
class TrailCode:
    """A registered trail code; every finding is an error (exit 1)."""

    code: str
    name: str
    summary: str


TRAIL_GROUPS: dict[str, str] = {"TR1": "pins", "TR2": "steps the machine allows"}

_ALL = (
    TrailCode("TR101", "call-without-output",
              "a function call has no output with its call_id (and is not pending)"),
    TrailCode("TR102", "output-without-call", "an output names a call_id that no call made"),
    TrailCode("TR103", "output-before-call", "an output comes before the call it answers"),
    TrailCode("TR104", "duplicate-output", "a call has more than one output"),
    TrailCode("TR105", "reused-call-id", "two calls share one call_id"),
    TrailCode("TR106", "reused-item-id", "two items share one id"),
    TrailCode("TR107", "pending-call-answered",
              "a call that waits for approval (or a paused nested run) already has an output"),
    TrailCode("TR108", "approval-without-call",
              "an approval request or a decision names a call that no call made"),
    TrailCode("TR109", "pending-turn-mismatch",
              "a state's pending turn does not match the calls recorded for it"),
    TrailCode("TR110", "state-refused",
              "the runtime's own check refuses to resume the saved state"),
    TrailCode("TR111", "required-action-without-call",
              "an Agents API session asks for the result of a call no function_call made"),
    TrailCode("TR112", "unknown-subagent",
              "a subagent item names an agent that no create_subagent_call made"),
    TrailCode("TR113", "closed-subagent-used",
              "a subagent item names an agent after its close_subagent_call"),
    TrailCode("TR201", "tool-not-offered",
              "a call names no tool, agent tool or handoff of the agent the machine is at"),
    TrailCode("TR202", "handoff-target-mismatch",
              "a handoff moved the run to an agent its declaration does not lead to"),
    TrailCode("TR203", "handoff-budget-exceeded",
              "a handoff was taken more often in one run than its max_uses"),
    TrailCode("TR204", "max-turns-exceeded", "a run made more model turns than max_turns"),
    TrailCode("TR205", "agent-mismatch",
              "an item or the state names another agent than the one the machine is at"),
)

TRAIL_CODES: dict[str, TrailCode] = {c.code: c for c in _ALL}
"""Every trail code, in order."""


def trail_code_doc(code: str) -> str:
    """The documentation page of a trail code (Markdown); ``KeyError`` when unknown."""
    if code not in TRAIL_CODES:
        raise KeyError(code)
    return (resources.files("stepswitch.review") / "docs" / f"{code}.md").read_text("utf-8")
