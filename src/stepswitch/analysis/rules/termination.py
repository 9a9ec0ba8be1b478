"""SW2xx termination: unbudgeted handoff cycles, unbounded agent-tool recursion, the
worst-case model-call bound, and a max_turns too small for any run to end."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from stepswitch.analysis._budget import CAP, model_call_bound
from stepswitch.analysis._context import Ctx
from stepswitch.analysis._graphalgo import cycle_through, strongly_connected
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.graph.workflow_graph import Edge

__all__ = ["RULES", "recursion_cycles"]


def handoff_cycles(ctx: Ctx) -> Iterator[Diagnostic]:
    """Components of the *unbudgeted* handoff edges: a cycle with a budgeted edge can
    only go round as often as that budget allows."""
    graph = ctx.graph
    names = graph.agent_names()
    succ: dict[str, list[str]] = {n: [] for n in names}
    first_edge: dict[tuple[str, str], Edge] = {}
    for edge in graph.edges("handoff"):
        if edge.max_uses is None:
            succ[edge.source].append(edge.target)
            first_edge.setdefault((edge.source, edge.target), edge)
    comps, _ = strongly_connected(names, succ)
    order = {n: i for i, n in enumerate(names)}
    for comp in comps:
        members = frozenset(comp)
        start = min(comp, key=order.__getitem__)
        if len(comp) == 1 and start not in succ[start]:
            continue
        cycle = cycle_through(start, succ, members)
        assert cycle is not None
        nxt = cycle[1] if len(cycle) > 1 else start
        edge = first_edge[(start, nxt)]
        shown = " → ".join([*cycle, start])
        internal = sum(1 for n in comp for t in succ[n] if t in members)
        others = f" (one of several cycles among {len(comp)} agents)" if internal > len(
            cycle) else ""
        yield ctx.diag(
            "SW201",
            f"handoff cycle {shown} has no max_uses on any handoff{others}: a run can pass "
            "control round it until max_turns runs out",
            ctx.edge_loc(edge),
            help=f"give a handoff of the cycle a budget, e.g. handoff({nxt!r}, max_uses=2)",
        )


def recursion_cycles(ctx: Ctx) -> tuple[list[tuple[list[Edge], int]], bool]:
    cached = ctx.memo.get("recursion")
    if cached is None:
        cached = ctx.memo["recursion"] = _recursion_cycles(ctx)
    result: tuple[list[tuple[list[Edge], int]], bool] = cached
    return result


def _recursion_cycles(ctx: Ctx) -> tuple[list[tuple[list[Edge], int]], bool]:
    """Agent-tool recursion: components of (every handoff + agent tools without
    ``max_depth``) that hold an agent tool. Returns one witness cycle per component
    (as edges) with the component's size, and whether any agent tool lies on a cycle
    at all (bounded or not)."""
    graph = ctx.graph
    names = graph.agent_names()
    succ: dict[str, list[str]] = {n: [] for n in names}
    full: dict[str, list[str]] = {n: [] for n in names}
    edge_of: dict[tuple[str, str], Edge] = {}
    tool_edges: list[Edge] = []
    for edge in graph.edges():
        full[edge.source].append(edge.target)
        if edge.kind == "handoff" or edge.spec.max_depth is None:  # type: ignore[union-attr]
            succ[edge.source].append(edge.target)
            key = (edge.source, edge.target)
            # Prefer naming the agent-tool edge when both kinds join the same pair.
            if key not in edge_of or (edge.kind == "agent_tool" and edge_of[key].kind != edge.kind):
                edge_of[key] = edge
        if edge.kind == "agent_tool":
            tool_edges.append(edge)
    comps, comp_of = strongly_connected(names, succ)
    full_comps, full_comp_of = strongly_connected(names, full)
    del full_comps
    any_cycle = any(full_comp_of[e.source] == full_comp_of[e.target] for e in tool_edges)
    found: list[tuple[list[Edge], int]] = []
    done: set[int] = set()
    for edge in tool_edges:
        k = comp_of[edge.source]
        if k in done or edge.spec.max_depth is not None or comp_of[edge.target] != k:  # type: ignore[union-attr]
            continue
        done.add(k)
        members = frozenset(comps[k])
        if edge.source == edge.target:
            found.append(([edge], len(members)))
            continue
        path = _path_within(edge.target, edge.source, succ, members)
        cycle = [edge, *(edge_of[(a, b)] for a, b in itertools.pairwise(path))]
        found.append((cycle, len(members)))
    return found, any_cycle


def _path_within(
    start: str, goal: str, succ: dict[str, list[str]], members: frozenset[str]
) -> list[str]:
    """Shortest path start → goal inside one component (BFS)."""
    from collections import deque

    parent: dict[str, str] = {}
    seen = {start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for child in succ[node]:
            if child in members and child not in seen:
                seen.add(child)
                parent[child] = node
                queue.append(child)
    path = [goal]
    while path[-1] != start:
        path.append(parent[path[-1]])
    path.reverse()
    return path


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
    if graph.entry is None:
        return
    cycles, any_cycle = recursion_cycles(ctx)
    limit = ctx.max_model_calls
    if cycles:
        return  # unbounded recursion: SW202 says so; a number would mislead
    bound = model_call_bound(graph, any_cycle)
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
    spec = graph.spec
    detail = (
        f"max_turns={spec.max_turns} top-level turns × up to {bound.per_turn} call(s) each, "
        "nested agent-tool runs included"
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


def shortest_run(ctx: Ctx) -> Iterator[Diagnostic]:
    graph = ctx.graph
    turns = graph.spec.max_turns
    if graph.entry is None or turns is None:
        return
    distance = ctx.ending().distance.get(graph.entry)
    if distance is not None and distance > turns:
        yield ctx.diag(
            "SW205",
            f"the shortest run that ends needs {distance} model calls (one per agent on "
            f"the handoff path), more than max_turns={turns}: every run fails",
            ctx.workflow_loc(),
            help=f"raise max_turns to at least {distance}, or shorten the handoff chain",
        )


RULES = (handoff_cycles, recursion, model_calls, shortest_run)
