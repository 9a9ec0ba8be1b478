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

import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from stepswitch._dataclass import dataclass
from stepswitch.analysis._index import Index
from stepswitch.graph.facts import reach
from stepswitch.graph.spec import AgentToolSpec

if TYPE_CHECKING:
    from stepswitch.analysis._context import Ctx
    from stepswitch.analysis.diagnostic import Diagnostic

__all__ = ["CAP", "PARALLEL_HELP", "Bound", "model_call_bound", "parallel_agent_tools",
           "run_costs", "unproved_by_parallel", "unproved_limit"]

CAP = 10**15
"""Past this a bound is reported as "more than 10^15"; exact figures would only cost time."""

_INF = math.inf  # an unbounded cost (max_turns=None somewhere); ints stay exact below CAP


@dataclass(frozen=True, slots=True)
class Bound:
    calls: int | None
    """The worst case (at most ``CAP``), or None when a run is unbounded."""
    unbounded_by: str | None = None
    """Why it is unbounded (which ``max_turns`` is None), when it is."""
    per_turn: int | None = None
    """Model calls one top-level turn can cost at most, nested runs included."""


def capped(value: float) -> float:
    """``value``, or ``CAP`` when it is finite and larger."""
    return CAP if CAP < value < _INF else value


def _capped(value: float) -> float:
    return CAP if CAP < value < _INF else value


def model_call_bound(index: Index, recursive: bool) -> Bound:
    """The bound for a run that starts at the entry. ``recursive`` says whether some
    agent tool lies on a cycle (then depth levels are unrolled)."""
    spec = index.graph.spec
    entry = index.graph.entry
    assert entry is not None
    values = run_costs(index, recursive)
    top_turns: float = spec.max_turns if spec.max_turns is not None else _INF
    per_turn = _capped(1 + values[index.pos[entry]])
    total = _capped(top_turns * per_turn)
    if total == _INF:
        if top_turns == _INF:
            why = f"workflow {spec.name!r} has max_turns=None"
        else:
            why = "an agent tool's nested run has no max_turns and the workflow's is None"
        return Bound(None, why, None if per_turn == _INF else int(per_turn))
    return Bound(int(total), None, int(per_turn))


def parallel_agent_tools(index: Index) -> list[tuple[str, list[str]]]:
    """The agents a run can reach that may call their agent tools several times in one
    response (``parallel_tool_calls`` not False), each with those tools' names: the
    bound counts one call of each per response, so a ceiling over it proves nothing
    while any is listed."""
    entry = index.graph.entry
    if entry is None:
        return []
    if index.graph.spec.flow is not None:  # a flow's nodes run each agent they name
        seen = [True] * len(index)
    else:
        seen = reach([index.pos[entry]], index.adjacency("all"))
    return [
        (index.agents[i].name, [edge.spec.tool_name for edge in index.tools[i]
                                if isinstance(edge.spec, AgentToolSpec)])
        for i in range(len(index))
        if seen[i] and index.tools[i]
        and index.agents[i].model_settings.get("parallel_tool_calls") is not False
    ]


PARALLEL_HELP = ("set ModelSettings(parallel_tool_calls=False) on that agent: then each "
                 "response calls at most one tool, and the bound holds")
"""The fix a ceiling that :func:`unproved_by_parallel` leaves unproved is given."""


def unproved_by_parallel(index: Index) -> str | None:
    """Why a ceiling over the model-call bound is not proved (an agent may call an agent
    tool several times in one response), or None."""
    found = parallel_agent_tools(index)
    if not found:
        return None
    name, tools = found[0]
    more = f" (and {len(found) - 1} more agent(s))" if len(found) > 1 else ""
    return (f"agent {name!r} may call agent tool {', '.join(map(repr, tools))} several "
            f"times in one response{more}, each a nested run, and the bound counts one")


def unproved_limit(ctx: Ctx, limit: int, shown: str) -> Iterator[Diagnostic]:
    """SW204 for a ``max_model_calls`` the worst case fits as counted, but that a run
    can pass (:func:`unproved_by_parallel`); shared by handoff workflows and flows."""
    why = unproved_by_parallel(ctx.index())
    if why is not None:
        yield ctx.diag("SW204", f"max_model_calls={limit} is not proved: {why} (worst case "
                       f"{shown} as counted)", ctx.workflow_loc(), help=PARALLEL_HELP)


def run_costs(index: Index, recursive: bool) -> list[float]:
    """Per agent: the most model calls its nested agent-tool runs can add to one turn
    of a run that reaches it (``inf`` when unbounded); a run's bound is
    ``max_turns * (1 + cost)`` of its first agent."""
    spec = index.graph.spec
    n = len(index)
    pos = index.pos
    default_turns: float = spec.max_turns if spec.max_turns is not None else _INF
    # Per agent: (target, turns, max_depth) of each agent tool, and whether it calls
    # tools one at a time.
    tools: list[list[tuple[int, float, int | None]]] = []
    for edges in index.tools:
        row: list[tuple[int, float, int | None]] = []
        for edge in edges:
            tool = edge.spec
            assert isinstance(tool, AgentToolSpec)
            turns = tool.max_turns if tool.max_turns is not None else default_turns
            row.append((pos[edge.target], turns, tool.max_depth))
        tools.append(row)
    sequential = [a.model_settings.get("parallel_tool_calls") is False for a in index.agents]

    def extra_of(i: int, cost_of: Callable[[int, float, int | None], float | None]) -> float:
        total: float = 0
        for target, turns, max_depth in tools[i]:
            nested = cost_of(target, turns, max_depth)
            if nested is None:
                continue
            total = max(total, nested) if sequential[i] else _capped(total + nested)
        return total

    values: list[float] = [0] * n
    if recursive:
        hsucc = index.adjacency("handoff")
        comps, _ = index.components("handoff")
        # No agent tool starts a run deeper than its own max_depth: levels below the
        # deepest any tool allows cost nothing, so the unrolling starts there.
        deepest = max((spec.max_depth if d is None else min(d, spec.max_depth)
                       for row in tools for _, _, d in row), default=0)
        for depth in range(deepest - 1, -1, -1):
            deeper = values

            def cost_of(target: int, turns: float, max_depth: int | None,
                        deeper: list[float] = deeper, depth: int = depth) -> float | None:
                if max_depth is not None and depth + 1 > max_depth:
                    return None
                return _capped(turns * (1 + deeper[target]))

            extra = [extra_of(i, cost_of) if tools[i] else 0 for i in range(n)]
            values = [0] * n
            _closure_max(extra.__getitem__, hsucc, comps, values)
    else:
        succ = index.adjacency("all")
        comps, _ = index.components("all")

        def final(target: int, turns: float, _: int | None) -> float:
            return _capped(turns * (1 + values[target]))

        # No agent tool inside a component: when a component is reached, the values of
        # every agent its tools call are final.
        _closure_max(lambda i: extra_of(i, final) if tools[i] else 0, succ, comps, values)
    return values


def _closure_max(
    extra: Callable[[int], float],
    succ: list[list[int]],
    comps: list[list[int]],
    values: list[float],
) -> None:
    """Fill ``values`` (all 0) with, for every agent, the max of ``extra`` over the
    agents ``succ`` reaches from it (itself included): one pass over the components,
    sinks first."""
    for comp in comps:
        value = max(extra(i) for i in comp)
        for i in comp:
            for t in succ[i]:
                if values[t] > value:  # members of this component are still 0
                    value = values[t]
        for i in comp:
            values[i] = value
