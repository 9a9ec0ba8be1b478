"""SW2xx termination: unbudgeted handoff cycles, unbounded agent-tool recursion, the
worst-case model-call bound, and a max_turns too small for any run to end."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from stepswitch.analysis._budget import CAP, model_call_bound, unproved_limit
from stepswitch.analysis._context import Ctx
from stepswitch.analysis._graphalgo import path_within
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.graph.spec import AgentToolSpec
from stepswitch.graph.workflow_graph import Edge

__all__ = ["RULES", "recursion_cycles"]

Recursion = tuple[list[tuple[list[Edge], int]], bool]


def handoff_cycles(ctx: Ctx) -> Iterator[Diagnostic]:
    """Components of the *unbudgeted* handoff edges: a cycle with a budgeted edge can
    only go round as often as that budget allows."""
    index = ctx.index()
    succ = index.adjacency("unbudgeted")
    comps, _ = index.components("unbudgeted")
    names = index.names
    for comp in comps:
        start = min(comp)  # the first declared agent of the component
        if len(comp) == 1 and start not in succ[start]:
            continue
        members = frozenset(comp)
        cycle = path_within(start, start, succ, members)
        nxt = cycle[1]
        edge = next(e for e in index.handoffs[start]
                    if e.max_uses is None and index.pos[e.target] == nxt)
        shown = " → ".join(names[i] for i in cycle)
        internal = sum(1 for i in comp for t in succ[i] if t in members)
        others = f" (one of several cycles among {len(comp)} agents)" if internal > len(
            cycle) - 1 else ""
        yield ctx.diag(
            "SW201",
            f"handoff cycle {shown} has no max_uses on any handoff{others}: a run can pass "
            "control round it until max_turns runs out",
            ctx.edge_loc(edge),
            help=f"give a handoff of the cycle a budget, e.g. handoff({names[nxt]!r}, "
            "max_uses=2); for an OpenAI Agents SDK app, whose handoff() has no budget, "
            "ss.from_sdk(agent, handoff_max_uses=2) (docs/migrating.md)",
        )


def recursion_cycles(ctx: Ctx) -> Recursion:
    """Agent-tool recursion, computed once per analysis: one witness cycle (as edges)
    per component of the nesting graph that holds an agent tool without ``max_depth``,
    with the component's size; and whether any agent tool lies on a cycle at all."""
    cached = ctx.memo.get("recursion")
    if cached is None:
        cached = ctx.memo["recursion"] = _recursion_cycles(ctx)
    result: Recursion = cached
    return result


def _recursion_cycles(ctx: Ctx) -> Recursion:
    index = ctx.index()
    pos = index.pos
    succ = index.adjacency("nesting")
    comps, comp_of = index.components("nesting")
    _, full_comp_of = index.components("all")
    any_cycle = False
    found: list[tuple[list[Edge], int]] = []
    done: set[int] = set()
    for i, edges in enumerate(index.tools):
        for edge in edges:
            j = pos[edge.target]
            if full_comp_of[i] == full_comp_of[j]:
                any_cycle = True
            k = comp_of[i]
            if k in done or comp_of[j] != k or _bounded(edge):
                continue
            done.add(k)
            members = frozenset(comps[k])
            path = path_within(j, i, succ, members) if i != j else [i]
            cycle = [edge, *(_edge_between(ctx, a, b) for a, b in itertools.pairwise(path))]
            found.append((cycle, len(members)))
    return found, any_cycle


def _bounded(edge: Edge) -> bool:
    return isinstance(edge.spec, AgentToolSpec) and edge.spec.max_depth is not None


def _edge_between(ctx: Ctx, a: int, b: int) -> Edge:
    """An edge a → b of the nesting graph, agent tools first (they make the recursion)."""
    index = ctx.index()
    for edge in index.tools[a]:
        if index.pos[edge.target] == b and not _bounded(edge):
            return edge
    return next(e for e in index.handoffs[a] if index.pos[e.target] == b)


def _describe(cycle: list[Edge]) -> str:
    parts = [cycle[0].source]
    for edge in cycle:
        arrow = "calls" if edge.kind == "agent_tool" else "hands off to"
        parts.append(f"{arrow} {edge.target}")
    return " ".join(parts)


def recursion(ctx: Ctx) -> Iterator[Diagnostic]:
    cycles, _ = recursion_cycles(ctx)
    for cycle, size in cycles:
        first = cycle[0]
        others = f" (among {size} agents that reach each other)" if size > len(cycle) else ""
        yield ctx.diag(
            "SW202",
            f"agent-tool recursion with no max_depth: {_describe(cycle)}{others}; nested runs "
            "can nest until Workflow(max_depth) stops them with an error",
            ctx.edge_loc(first),
            help=f"bound the recursion: as_tool(..., max_depth=N) on {first.tool_name!r} or "
            "another agent tool of the cycle",
        )


def model_calls(ctx: Ctx) -> Iterator[Diagnostic]:
    graph = ctx.graph
    if graph.entry is None or graph.spec.flow is not None:  # a flow's bound: rules.flow
        return
    cycles, any_cycle = recursion_cycles(ctx)
    limit = ctx.max_model_calls
    if cycles:
        return  # unbounded recursion: SW202 says so; a number would mislead
    bound = model_call_bound(ctx.index(), any_cycle)
    ctx.memo["model_call_bound"] = bound.calls
    loc = ctx.workflow_loc()
    if bound.calls is None:
        yield ctx.diag(
            "SW203",
            f"worst case: unbounded model calls per run ({bound.unbounded_by})",
            loc,
            help="set max_turns on the workflow (and on agent tools) to bound every run",
        )
        if limit is not None:
            yield ctx.diag(
                "SW204",
                f"the number of model calls per run is unbounded ({bound.unbounded_by}), "
                f"over the limit max_model_calls={limit}",
                loc,
                help="set max_turns so the worst case fits the limit",
            )
        return
    shown = f"more than {CAP:.0e}" if bound.calls >= CAP else str(bound.calls)
    detail = (
        f"max_turns={graph.spec.max_turns} top-level turns × up to {bound.per_turn} call(s) "
        "each, nested agent-tool runs included"
    )
    yield ctx.diag(
        "SW203",
        f"worst case: {shown} model calls per run ({detail})",
        loc,
        help="`stepswitch explain SW203` describes how the bound is computed",
    )
    if limit is not None and bound.calls > limit:
        yield ctx.diag(
            "SW204",
            f"worst case {shown} model calls per run exceeds the limit max_model_calls={limit}",
            loc,
            help="lower max_turns (workflow or agent tools), drop agent tools, or set "
            "parallel_tool_calls=False on agents that call several",
        )
    elif limit is not None:  # within the limit as counted: can a run make more?
        yield from unproved_limit(ctx, limit, shown)


def shortest_run(ctx: Ctx) -> Iterator[Diagnostic]:
    graph = ctx.graph
    turns = graph.spec.max_turns
    if graph.entry is None or turns is None or graph.spec.flow is not None:
        return
    distance = graph.facts()[graph.entry].end_calls
    if distance is not None and distance > turns:
        yield ctx.diag(
            "SW205",
            f"the shortest run that ends needs {distance} model calls (one per agent on "
            f"the handoff path, two where a forced tool call comes first), more than "
            f"max_turns={turns}: every run fails",
            ctx.workflow_loc(),
            help=f"raise max_turns to at least {distance}, or shorten the handoff chain",
        )


RULES = (handoff_cycles, recursion, model_calls, shortest_run)
