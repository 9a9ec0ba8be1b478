"""The worst-case number of model calls of a whole run, nested runs included. Not API.

The model (documented on SW203's page):

* A run (the top-level one, or the nested run of an agent tool) makes at most ``T``
  model calls, shared across its handoffs: the workflow's ``max_turns`` for the
  top-level run, the agent tool's ``max_turns`` (default: the workflow's) for a
  nested one. ``max_turns=None`` makes the bound unbounded.
* Each model call is made by some agent ``w`` the run can reach through handoffs
  from where it started. Its response may call agent tools; we count **one call per
  agent tool ``w`` offers** (the sum of their nested runs' bounds), or, when
  ``w``'s settings say ``parallel_tool_calls=False``, the single most expensive one.
* So ``cost(v, T) = T * (1 + max over w reachable from v by handoffs of extra(w))``,
  with ``extra(w)`` the sum (or max) of ``cost(target, T_e)`` over ``w``'s agent tools.
* A nested run starts one level deeper; no run starts deeper than
  ``Workflow(max_depth)`` or than an agent tool's own ``max_depth``.

Without agent-tool recursion this is one pass over the strongly connected components
of the combined graph in reverse topological order. With bounded recursion (cycles of
agent tools that carry ``max_depth``) the pass is repeated once per depth level, from
the deepest up: O(max_depth · (V + E)). Numbers are capped at ``CAP``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stepswitch.analysis._graphalgo import strongly_connected
from stepswitch.graph.spec import AgentToolSpec
from stepswitch.graph.workflow_graph import WorkflowGraph

__all__ = ["CAP", "Bound", "model_call_bound"]

CAP = 10**15
"""Past this a bound is reported as "more than 10^15"; exact figures would only cost time."""


@dataclass(frozen=True, slots=True)
class Bound:
    calls: int | None
    """The worst case (at most ``CAP``), or None when a run is unbounded."""
    unbounded_by: str | None = None
    """Why it is unbounded (which ``max_turns`` is None), when it is."""
    per_turn: int | None = None
    """Model calls one top-level turn can cost at most, nested runs included."""


_INF = -1  # marks an unbounded cost inside the pass


def _mul(a: int, b: int) -> int:
    if a == _INF or b == _INF:
        return _INF
    return min(a * b, CAP)


def _add(a: int, b: int) -> int:
    if a == _INF or b == _INF:
        return _INF
    return min(a + b, CAP)


def _max(a: int, b: int) -> int:
    if a == _INF or b == _INF:
        return _INF
    return a if a >= b else b


def model_call_bound(graph: WorkflowGraph, recursive: bool) -> Bound:
    """The bound for a run that starts at the entry. ``recursive`` says whether some
    agent tool lies on a cycle (then depth levels are unrolled)."""
    entry = graph.entry
    spec = graph.spec
    assert entry is not None
    top_turns = spec.max_turns if spec.max_turns is not None else _INF
    names = graph.agent_names()
    hsucc: dict[str, list[str]] = {}
    tools: dict[str, list[AgentToolSpec]] = {}
    sequential: dict[str, bool] = {}
    for name in names:
        hsucc[name] = list(graph.successors(name, "handoff"))
        tools[name] = [
            e.spec for e in graph.out_edges(name, "agent_tool") if isinstance(e.spec, AgentToolSpec)
        ]
        sequential[name] = graph.agent(name).model_settings.get("parallel_tool_calls") is False
    comps, comp_of = strongly_connected(names, hsucc)
    default_turns = spec.max_turns if spec.max_turns is not None else _INF

    def turns_of(tool: AgentToolSpec) -> int:
        return tool.max_turns if tool.max_turns is not None else default_turns

    def level(deeper: dict[str, int] | None, depth: int) -> dict[str, int]:
        """M(v) = max over the handoff closure of v of extra(w), at ``depth``."""
        extra: dict[str, int] = {}
        for name in names:
            total = 0
            for tool in tools[name]:
                if deeper is None:
                    continue
                if tool.max_depth is not None and depth + 1 > tool.max_depth:
                    continue
                cost = _mul(turns_of(tool), _add(1, deeper[tool.target]))
                total = _max(total, cost) if sequential[name] else _add(total, cost)
            extra[name] = total
        best: dict[str, int] = {}
        comp_best: list[int] = []
        for comp in comps:  # sinks first: successors' values are ready
            value = 0
            for name in comp:
                value = _max(value, extra[name])
                for succ in hsucc[name]:
                    k = comp_of[succ]
                    if k < len(comp_best):
                        value = _max(value, comp_best[k])
            comp_best.append(value)
            for name in comp:
                best[name] = value
        return best

    if recursive:
        values: dict[str, int] | None = None
        for depth in range(spec.max_depth, -1, -1):
            values = level(values if depth < spec.max_depth else None, depth)
        assert values is not None
    else:
        values = _acyclic(names, hsucc, tools, sequential, turns_of)
    per_turn = _add(1, values[entry])
    total = _mul(top_turns, per_turn)
    if total == _INF:
        if top_turns == _INF:
            why = f"workflow {spec.name!r} has max_turns=None"
        else:
            why = "an agent tool's nested run has no max_turns and the workflow's is None"
        return Bound(None, why, None if per_turn == _INF else per_turn)
    return Bound(total, None, per_turn)


def _acyclic(
    names: tuple[str, ...],
    hsucc: dict[str, list[str]],
    tools: dict[str, list[AgentToolSpec]],
    sequential: dict[str, bool],
    turns_of: Callable[[AgentToolSpec], int],
) -> dict[str, int]:
    """One pass over the combined graph's components (no agent tool inside one)."""
    combined: dict[str, list[str]] = {
        n: hsucc[n] + [t.target for t in tools[n]] for n in names
    }
    comps, comp_of = strongly_connected(names, combined)
    best: dict[str, int] = {}
    comp_best: list[int] = []
    for comp in comps:
        value = 0
        for name in comp:
            total = 0
            for tool in tools[name]:
                cost = _mul(turns_of(tool), _add(1, comp_best[comp_of[tool.target]]))
                total = _max(total, cost) if sequential[name] else _add(total, cost)
            value = _max(value, total)
            for succ in hsucc[name]:
                k = comp_of[succ]
                if k < len(comp_best):
                    value = _max(value, comp_best[k])
        comp_best.append(value)
        for name in comp:
            best[name] = value
    return best
