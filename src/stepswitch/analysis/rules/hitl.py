"""SW5xx human in the loop: every point where a run can pause for approval."""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch.analysis._context import Ctx
from stepswitch.analysis._graphalgo import strongly_connected
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.graph.spec import AgentToolSpec

__all__ = ["RULES"]


def _when(mode: str) -> str:
    return "always" if mode == "always" else "per call"


def pause_points(ctx: Ctx) -> Iterator[Diagnostic]:
    """Per agent: its approval tools and agent tools, and agent tools whose nested run
    can pause (a nested approval pauses the outer run). Nested pausing is one pass over
    the components of the combined graph, sinks first."""
    graph = ctx.graph
    names = graph.agent_names()
    succ = {n: list(graph.successors(n)) for n in names}
    direct: dict[str, list[str]] = {}
    for name in names:
        agent = graph.agent(name)
        points = [f"{t.name} ({_when(t.needs_approval)})" for t in agent.tools
                  if t.needs_approval != "never"]
        points += [f"{t.tool_name} (agent tool, {_when(t.needs_approval)})"
                   for t in agent.agent_tools if t.needs_approval != "never"]
        direct[name] = points
    comps, comp_of = strongly_connected(names, succ)
    can_pause: list[bool] = []
    for comp in comps:
        flag = any(direct[n] for n in comp) or any(
            comp_of[s] < len(can_pause) and can_pause[comp_of[s]] for n in comp for s in succ[n]
        )
        can_pause.append(flag)
    for name in names:
        points = list(direct[name])
        for edge in graph.out_edges(name, "agent_tool"):
            gated = isinstance(edge.spec, AgentToolSpec) and edge.spec.needs_approval != "never"
            if not gated and can_pause[comp_of[edge.target]]:
                points.append(f"{edge.tool_name} (its nested run of {edge.target!r} can pause)")
        if points:
            yield ctx.diag(
                "SW501",
                f"agent {name!r} can pause a run for a human's approval at: {', '.join(points)}",
                ctx.agent_loc(graph.agent(name)),
                help="resume with state.approve(...) or state.reject(...); see the "
                "human-in-the-loop guide",
            )


RULES = (pause_points,)
