"""SW5xx human in the loop: every point where a run can pause for approval.

Where each agent's turn can pause is one of the facts the graph stage works out once
(:mod:`stepswitch.graph.facts`) and ``lower()`` stores in the IR; this rule reports
them, so the check, the diagrams and the runners cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch.analysis._context import Ctx
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.ir import PausePoint

__all__ = ["RULES"]


def _shown(point: PausePoint) -> str:
    when = "always" if point.approval == "always" else "per call"
    if point.kind == "tool":
        return f"{point.tool} ({when})"
    if point.kind == "agent_tool":
        return f"{point.tool} (agent tool, {when})"
    return f"{point.tool} (its nested run of {point.target!r} can pause)"


def pause_points(ctx: Ctx) -> Iterator[Diagnostic]:
    """Per agent: its approval tools and agent tools, and agent tools whose nested run
    can pause (a nested approval, through handoffs inside the nested run or deeper
    agent tools, pauses the outer run)."""
    facts = ctx.graph.facts()
    index = ctx.index()
    for agent in index.agents:
        points = facts[agent.name].pauses
        if points:
            yield ctx.diag(
                "SW501",
                f"agent {agent.name!r} can pause a run for a human's approval at: "
                f"{', '.join(map(_shown, points))}",
                ctx.agent_loc(agent),
                help="a paused run lists these in result.interruptions; approve or reject "
                "them on result.to_state() and run again with that state",
            )


RULES = (pause_points,)
