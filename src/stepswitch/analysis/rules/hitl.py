"""SW5xx human in the loop: every point where a run can pause for approval."""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch.analysis._context import Ctx
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.graph.spec import AgentToolSpec

__all__ = ["RULES"]


def _when(mode: str) -> str:
    return "always" if mode == "always" else "per call"


def pause_points(ctx: Ctx) -> Iterator[Diagnostic]:
    """Per agent: its approval tools and agent tools, and agent tools whose nested run
    can pause (a nested approval pauses the outer run). Nested pausing is one pass over
    the components of the whole graph, sinks first."""
    index = ctx.index()
    direct: list[list[str]] = []
    for agent in index.agents:
        gated = False
        for group in (agent.tools, agent.agent_tools):
            for element in group:
                if element.needs_approval != "never":
                    gated = True
        if not gated:
            direct.append([])
            continue
        points = [f"{t.name} ({_when(t.needs_approval)})" for t in agent.tools
                  if t.needs_approval != "never"]
        points += [f"{t.tool_name} (agent tool, {_when(t.needs_approval)})"
                   for t in agent.agent_tools if t.needs_approval != "never"]
        direct.append(points)
    if not any(direct):
        return
    succ = index.adjacency("all")
    comps, comp_of = index.components("all")
    can_pause = [False] * len(comps)
    for k, comp in enumerate(comps):  # sinks first; this component's own flag is False
        flag = False
        for i in comp:
            if direct[i]:
                flag = True
                break
            for t in succ[i]:
                if can_pause[comp_of[t]]:
                    flag = True
                    break
            if flag:
                break
        can_pause[k] = flag
    for i, agent in enumerate(index.agents):
        points = list(direct[i])
        for edge in index.tools[i]:
            gated = isinstance(edge.spec, AgentToolSpec) and edge.spec.needs_approval != "never"
            if not gated and can_pause[comp_of[index.pos[edge.target]]]:
                points.append(f"{edge.tool_name} (its nested run of {edge.target!r} can pause)")
        if points:
            yield ctx.diag(
                "SW501",
                f"agent {agent.name!r} can pause a run for a human's approval at: "
                f"{', '.join(points)}",
                ctx.agent_loc(agent),
                help="a paused run lists these in result.interruptions; approve or reject "
                "them on result.to_state() and run again with that state",
            )


RULES = (pause_points,)
