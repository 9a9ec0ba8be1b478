"""Function tools' run budgets (``function_tool(max_uses=N)``) on the trusted side.

A budget counts the calls of a tool that *ran*, across the whole run: its handoffs, its
nested agent-tool runs and a flow's node runs share one count (``Calls.tools``, saved in
a state as ``tool_uses``), so ``max_uses=1`` means one effect per run however the run
gets there. A call is counted when it is about to run: after its approval and its
arguments' validation (a rejected or invalid call runs nothing and spends nothing),
before its function is called (a call that then raises has spent its use: its effect
may have happened). Once spent, the tool is hidden from the model's offer, and a call
of it anyway (in the same response as the call that spent it, or from a model that
ignores the offer) gets an error output and never runs.
"""

from __future__ import annotations

from stepswitch.ir import StateIR
from stepswitch.runtime.core import MachineCore, ToolRow
from stepswitch.runtime.handoffs import spent_handoffs
from stepswitch.runtime.items import ToolCallOutputItem
from stepswitch.runtime.run import Run

__all__ = ["hidden_tools", "spend"]


def hidden_tools(core: MachineCore, run: Run, state: StateIR) -> frozenset[str]:
    """What ``state`` no longer offers: its spent handoffs and spent function tools."""
    hidden = spent_handoffs(core, run, state)
    used = run.calls.tools
    if not used:
        return hidden
    rows = core.turns[state.agent].rows
    spent = [
        name
        for name, n in used.items()
        if (row := rows.get(name)) is not None
        and row.max_uses is not None
        and n >= row.max_uses
    ]
    return hidden | frozenset(spent) if spent else hidden


def spend(run: Run, row: ToolRow, agent: str, call_id: str) -> ToolCallOutputItem | None:
    """Take one use of a budgeted tool for a call about to run; when none is left, the
    error output the call gets instead (it never runs)."""
    assert row.max_uses is not None
    used = run.calls.tools
    n = used.get(row.name, 0)
    if n >= row.max_uses:
        return ToolCallOutputItem(
            agent,
            call_id,
            f"Tool {row.name} is no longer available: it already ran {n} time(s) in this "
            f"run, its max_uses. Continue without it.",
            row.name,
            True,
        )
    used[row.name] = n + 1
    return None
