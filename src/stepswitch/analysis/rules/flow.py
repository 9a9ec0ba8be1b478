"""SW7xx flows: nodes, types along edges, routes, budgets, fan-outs, endings, and the
worst-case model calls of a whole flow (reported as SW203/SW204).

Every rule runs in time linear in nodes plus edges (type checks cost one ``fits`` per
edge), and a workflow without a flow yields nothing here.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import typing
from collections.abc import Iterator
from dataclasses import field
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.analysis._budget import CAP, capped, run_costs, unproved_limit
from stepswitch.analysis._context import Ctx, did_you_mean, where
from stepswitch.analysis._graphalgo import path_within, strongly_connected
from stepswitch.analysis._loops import loop_budget
from stepswitch.analysis._typefit import fits, show_type
from stepswitch.analysis.diagnostic import Diagnostic, DiagnosticLocation
from stepswitch.analysis.rules.termination import recursion_cycles
from stepswitch.graph.spec import FlowEdgeSpec, Location, Ref, StepSpec

__all__ = ["RULES", "flow_index"]

_NO_TYPE: Any = object()
"""A type the bindings do not hold (a hand-written spec): every check passes."""


@dataclass(slots=True)
class FlowIndex:
    """The flow as the rules read it: nodes in order, their exits, numbered edges."""

    names: list[str] = field(default_factory=list)
    pos: dict[str, int] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)
    """``agent``, ``step`` or ``unknown`` per node."""
    exits: list[list[tuple[FlowEdgeSpec, int]]] = field(default_factory=list)
    """Per node, the edges leaving it (with their index in ``spec.flow``)."""
    first_seen: list[tuple[Location, str]] = field(default_factory=list)
    """Where each node is first named, and the spec path there."""
    each_of: dict[int, int] = field(default_factory=dict)
    """A fan-out's ``each`` node → the fan-out's source."""
    succ: list[list[int]] = field(default_factory=list)
    """Control-flow successors (a fan-out's source → its ``then``; END left out)."""


def flow_index(ctx: Ctx) -> FlowIndex:
    cached = ctx.memo.get("flow_index")
    if cached is None:
        cached = ctx.memo["flow_index"] = _build_index(ctx)
    result: FlowIndex = cached
    return result


def _build_index(ctx: Ctx) -> FlowIndex:
    spec = ctx.graph.spec
    fx = FlowIndex()
    steps = {s.name for s in spec.steps}

    def add(name: str, loc: Location, path: str) -> int:
        i = fx.pos.get(name)
        if i is None:
            i = fx.pos[name] = len(fx.names)
            fx.names.append(name)
            kind = "step" if name in steps else "agent" if name in ctx.graph else "unknown"
            fx.kinds.append(kind)
            fx.exits.append([])
            fx.first_seen.append((loc, path))
            fx.succ.append([])
        return i

    if spec.entry is not None:
        add(spec.entry, spec.location, "workflow.entry")
    for k, edge in enumerate(spec.flow or ()):
        path = f"flow[{k}]"
        src = add(edge.source, edge.location, path)
        fx.exits[src].append((edge, k))
        if edge.each is not None:
            fx.each_of.setdefault(add(edge.each, edge.location, path), src)
        for target in edge.targets():
            if target is not None:
                fx.succ[src].append(add(target, edge.location, path))
    return fx


def _edge_loc(edge: FlowEdgeSpec, k: int) -> DiagnosticLocation:
    return where(edge.location, f"flow[{k}]")


def _active(ctx: Ctx) -> bool:
    return ctx.graph.spec.flow is not None


# -- types ------------------------------------------------------------------------------------


def _live(ctx: Ctx, ref: Ref | None) -> Any:
    if ref is None:
        return _NO_TYPE
    obj = ctx.graph.bindings.objects.get(ref.path, _NO_TYPE)
    return obj


def _step(ctx: Ctx, name: str) -> StepSpec | None:
    steps = ctx.memo.get("flow_steps")
    if steps is None:  # the first step of each name, indexed once per analysis
        steps = ctx.memo["flow_steps"] = {}
        for s in ctx.graph.spec.steps:
            steps.setdefault(s.name, s)
    found: StepSpec | None = steps.get(name)
    return found


def _output_type(ctx: Ctx, name: str) -> Any:
    """What a node gives: a step's return type, an agent's output type (or str)."""
    step = _step(ctx, name)
    if step is not None:
        return _live(ctx, step.output_type)
    if name in ctx.graph:
        out = ctx.graph.agent(name).output_type
        return str if out is None else _live(ctx, out.ref)
    return _NO_TYPE


def _input_type(ctx: Ctx, name: str) -> Any:
    """What a node takes; an agent takes anything (it is sent as text or JSON)."""
    step = _step(ctx, name)
    if step is not None:
        return _live(ctx, step.input_type)
    return _NO_TYPE


def _fits(actual: Any, declared: Any) -> bool:
    return actual is _NO_TYPE or declared is _NO_TYPE or fits(actual, declared)


def _field_type(tp: Any, name: str) -> Any:
    """The annotation of field ``name`` of ``tp`` (None: no such field; ``_NO_TYPE``:
    cannot tell)."""
    if tp is _NO_TYPE:
        return _NO_TYPE
    if not isinstance(tp, type) or tp in (str, int, float, bool, list, dict, type(None)):
        return None
    fields = getattr(tp, "model_fields", None)
    if isinstance(fields, dict):
        info = fields.get(name)
        return None if info is None else info.annotation
    try:
        hints = typing.get_type_hints(tp)
    except Exception:
        return _NO_TYPE
    if dataclasses.is_dataclass(tp) or typing.is_typeddict(tp) or hints:
        return hints.get(name)
    return _NO_TYPE


def _field_names(tp: Any) -> list[str]:
    """The field names of a model, dataclass or TypedDict (for a did-you-mean)."""
    fields = getattr(tp, "model_fields", None)
    if isinstance(fields, dict):
        return list(fields)
    try:
        return list(typing.get_type_hints(tp))
    except Exception:
        return []


def _values_of(tp: Any) -> list[str] | None:
    """The values a Literal, Enum or bool field can take, as route case keys."""
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) is typing.Literal:
        return [str(v.value if isinstance(v, enum.Enum) else v) for v in typing.get_args(tp)]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return [str(m.value) for m in tp]
    if tp is bool:
        return ["True", "False"]
    return None


def _element_type(tp: Any) -> Any:
    """``X`` for ``list[X]`` / ``tuple[X, ...]`` / ``Sequence[X]``; None: not a list."""
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    origin = typing.get_origin(tp)
    if tp in (list, tuple):
        return Any
    if origin in (list, tuple) or (origin is not None and getattr(origin, "__name__", "") in (
            "Sequence", "MutableSequence")):
        args = typing.get_args(tp)
        return args[0] if args else Any
    return None


# -- the rules --------------------------------------------------------------------------------


def nodes(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW701 unknown nodes; SW710 conflicts (two exits, a name shared, a fan-out's
    ``each`` with an exit of its own)."""
    if not _active(ctx):
        return
    fx = flow_index(ctx)
    spec = ctx.graph.spec
    for i, name in enumerate(fx.names):
        if fx.kinds[i] == "unknown":
            loc, path = fx.first_seen[i]
            yield ctx.diag(
                "SW701",
                f"flow node {name!r} names no agent or step of workflow {spec.name!r}"
                # the workflow's nodes, its agents outside the flow, and the steps
                # declared beside it (a step the flow never passes as an object)
                + did_you_mean(name, [
                    *(n for n, k in zip(fx.names, fx.kinds, strict=True) if k != "unknown"),
                    *ctx.graph.agent_names(), *ctx.graph.nearby_steps]),
                where(loc, path),
                help="pass the Agent or @ss.step object itself, or fix the name",
            )
    seen: dict[str, StepSpec] = {}
    for s in spec.steps:
        other = seen.get(s.name)
        if other is not None:
            yield ctx.diag(
                "SW710",
                f"two steps are named {s.name!r} (the other at {other.location})",
                where(s.location, f"steps.{s.name}"),
                help="give each step its own name: @ss.step(name='...')",
            )
            continue
        seen[s.name] = s
        if s.name in ctx.graph:
            yield ctx.diag(
                "SW710",
                f"step {s.name!r} has the name of an agent: the flow could not tell them apart",
                where(s.location, f"steps.{s.name}"),
                help="rename the step: @ss.step(name='...')",
            )
    for i, exits in enumerate(fx.exits):
        for j, (edge, k) in enumerate(exits[1:], start=2):
            yield ctx.diag(
                "SW710",
                f"flow node {fx.names[i]!r} has {len(exits)} exits: this {edge.kind} edge is "
                f"exit {j} of {len(exits)}; the first is at {exits[0][0].location}",
                _edge_loc(edge, k),
                help="give each node one exit: ss.branch or ss.route choose between targets",
            )
        if i in fx.each_of and exits:
            edge, k = exits[0]
            yield ctx.diag(
                "SW710",
                f"flow node {fx.names[i]!r} runs per element of a fan-out, so its outputs go "
                "to the fan-out's join; it cannot have an exit of its own",
                _edge_loc(edge, k),
                help="remove this edge, or fan out to a node made for it",
            )


def types(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW702 edge types; SW703 route cases; SW704 route/fan-out fields."""
    if not _active(ctx):
        return
    for k, edge in enumerate(ctx.graph.spec.flow or ()):
        loc = _edge_loc(edge, k)
        out = _output_type(ctx, edge.source)
        src = edge.source
        if edge.kind in ("then", "branch"):
            for target in edge.targets():
                if target is None:
                    continue
                yield from _mismatch(ctx, loc, src, out, target)
            if edge.kind == "branch":
                yield from _predicate(ctx, loc, edge, out)
        elif edge.kind == "route":
            yield from _route(ctx, loc, edge, out)
        else:
            yield from _fan_types(ctx, loc, edge, out)


def _mismatch(ctx: Ctx, loc: DiagnosticLocation, src: str, out: Any, target: str,
              what: str = "", shown: str | None = None) -> Iterator[Diagnostic]:
    declared = _input_type(ctx, target)
    if not _fits(out, declared):
        yield ctx.diag(
            "SW702",
            f"flow edge {src} → {target}: {what or src + ' gives'} {shown or show_type(out)}, "
            f"but step "
            f"{target!r} takes {show_type(declared)}",
            loc,
            help=f"change the parameter type of step {target!r}, or put a step between them that "
            "converts the value",
        )


def _predicate(ctx: Ctx, loc: DiagnosticLocation, edge: FlowEdgeSpec, out: Any
               ) -> Iterator[Diagnostic]:
    pred = _live(ctx, edge.predicate)
    if pred is _NO_TYPE or edge.predicate is None:
        return
    from stepswitch._hints import resolved_hints  # the DSL's own annotation reader

    try:
        import inspect

        params = list(inspect.signature(pred).parameters)
    except (TypeError, ValueError):
        return
    if not params:
        yield ctx.diag(
            "SW702",
            f"branch from {edge.source!r}: predicate {edge.predicate.display!r} takes no "
            "parameter; it is called with the node's output",
            loc,
            help="declare one parameter of the node's output type",
        )
        return
    declared = resolved_hints(pred).get(params[0], _NO_TYPE)
    if not _fits(out, declared):
        yield ctx.diag(
            "SW702",
            f"branch from {edge.source!r}: predicate {edge.predicate.display!r} takes "
            f"{show_type(declared)}, but {edge.source!r} gives {show_type(out)}",
            loc,
            help="annotate the predicate's parameter with the node's output type",
        )


def _route(ctx: Ctx, loc: DiagnosticLocation, edge: FlowEdgeSpec, out: Any
           ) -> Iterator[Diagnostic]:
    name = edge.field or ""
    ftype = _field_type(out, name)
    if ftype is None:
        yield ctx.diag(
            "SW704",
            f"route from {edge.source!r} on {name!r}: {show_type(out)} has no field {name!r}"
            + did_you_mean(name, _field_names(out)),
            loc,
            help="route on a Literal or Enum field of the node's output type",
        )
        return
    for case in edge.cases:
        if case.target is not None:
            yield from _mismatch(ctx, loc, edge.source, out, case.target)
    if ftype is _NO_TYPE:
        return
    values = _values_of(ftype)
    if values is None:
        yield ctx.diag(
            "SW704",
            f"route from {edge.source!r} on {name!r}: the field is {show_type(ftype)}, not a "
            "Literal or Enum, so its cases cannot be checked",
            loc,
            help=f"declare {name!r} as Literal['a', 'b', ...] or an Enum, or use ss.branch",
        )
        return
    keys = [c.value for c in edge.cases]
    missing = [v for v in values if v not in keys]
    extra = [v for v in keys if v not in values]
    if missing:
        yield ctx.diag(
            "SW703",
            f"route from {edge.source!r} on {name!r} has no case for "
            f"{', '.join(map(repr, missing))}: a run with that value would have nowhere to go",
            loc,
            help="add a case for every value of the field (ss.END ends the run)",
        )
    if extra:
        yield ctx.diag(
            "SW703",
            f"route from {edge.source!r} on {name!r} has case(s) "
            f"{', '.join(map(repr, extra))}, which the field {show_type(ftype)} never takes",
            loc,
            help="fix the case's spelling, or remove it",
        )


def _fan_types(ctx: Ctx, loc: DiagnosticLocation, edge: FlowEdgeSpec, out: Any
               ) -> Iterator[Diagnostic]:
    name = edge.field or ""
    ftype = _field_type(out, name)
    if ftype is None:
        yield ctx.diag(
            "SW704",
            f"fan-out from {edge.source!r} over {name!r}: {show_type(out)} has no field "
            f"{name!r}{did_you_mean(name, _field_names(out))}",
            loc,
            help="fan out over a list field of the node's output type",
        )
        return
    if ftype is _NO_TYPE:
        return
    element = _element_type(ftype)
    if element is None:
        yield ctx.diag(
            "SW704",
            f"fan-out from {edge.source!r} over {name!r}: the field is {show_type(ftype)}, "
            "not a list",
            loc,
            help=f"declare {name!r} as list[...]",
        )
        return
    each = edge.each or ""
    yield from _mismatch(ctx, loc, edge.source, element, each,
                         what=f"each element of {edge.source}.{name} is")
    if edge.target is not None:
        each_out = _output_type(ctx, each)
        joined = list[each_out] if each_out is not _NO_TYPE else _NO_TYPE  # type: ignore[valid-type]
        yield from _mismatch(ctx, loc, each, joined, edge.target,
                             what=f"the fan-out joins the outputs of {each} as",
                             shown=f"list[{show_type(each_out)}]")


def _unbudgeted_cycles(ctx: Ctx) -> list[list[int]]:
    """Components of the unbudgeted flow edges that hold a cycle (memoized)."""
    cached = ctx.memo.get("flow_cycles")
    if cached is None:
        fx = flow_index(ctx)
        n = len(fx.names)
        unbudgeted: list[list[int]] = [[] for _ in range(n)]
        for i, exits in enumerate(fx.exits):
            for edge, _ in exits[:1]:
                if edge.max_uses is None:
                    unbudgeted[i] = [fx.pos[t] for t in edge.targets() if t is not None]
        comps, _ = strongly_connected(unbudgeted)
        cached = [c for c in comps if len(c) > 1 or c[0] in unbudgeted[c[0]]]
        ctx.memo["flow_cycles"] = cached
        ctx.memo["flow_unbudgeted"] = unbudgeted
    result: list[list[int]] = cached
    return result


def budgets(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW705 cycles of flow edges with no max_uses; SW706 fan-outs with no max_items."""
    if not _active(ctx):
        return
    fx = flow_index(ctx)
    comps = _unbudgeted_cycles(ctx)
    unbudgeted: list[list[int]] = ctx.memo["flow_unbudgeted"]
    for comp in comps:
        start = min(comp)
        cycle = path_within(start, start, unbudgeted, frozenset(comp))
        shown = " → ".join(fx.names[i] for i in cycle)
        edge, k = fx.exits[start][0]
        back, _ = fx.exits[cycle[-2]][0]  # the edge that closes the cycle, back to its start
        if back.kind != "fan_out":  # (a fan-out takes no max_uses)
            loc = back.location
            example = (f"the one back to {fx.names[start]!r}, ss.{back.kind}("
                       f"{back.source!r}, ..., max_uses=3) at {loc.file}:{loc.line}")
        elif edge.kind != "fan_out":
            example = f"this one: ss.{edge.kind}(..., max_uses=3)"
        else:
            example = "ss.then(..., max_uses=3): a fan-out takes none"
        yield ctx.diag(
            "SW705",
            f"flow cycle {shown} has no max_uses on any edge: a run could go round it forever",
            _edge_loc(edge, k),
            help=("give an edge of the cycle a budget (any edge of it will do; the one that "
                  f"goes back reads best), e.g. {example}"),
        )
    for k, edge in enumerate(ctx.graph.spec.flow or ()):
        if edge.kind == "fan_out" and edge.max_items is None:
            yield ctx.diag(
                "SW706",
                f"fan-out from {edge.source!r} over {edge.field!r} has no max_items: one "
                "output could start any number of branches",
                _edge_loc(edge, k),
                help="bound it: ss.fan_out(..., max_items=10)",
            )


def endings(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW707 nodes the entry does not lead to; SW708 nodes from which no run ends.

    Both read the flow facts (:meth:`WorkflowGraph.flow_facts`), the pass ``lower()``
    stores on the flow IR's nodes, so the check and the diagrams cannot disagree."""
    if not _active(ctx):
        return
    fx = flow_index(ctx)
    facts = ctx.graph.flow_facts()
    entry = ctx.graph.spec.entry
    if entry is not None:
        for i, name in enumerate(fx.names):
            if not facts[name].reachable and fx.kinds[i] != "unknown":
                loc, path = fx.first_seen[i]
                yield ctx.diag(
                    "SW707",
                    f"flow node {name!r} is unreachable: no edge leads to it from the "
                    f"entry {entry!r}",
                    where(loc, path),
                    help="connect it with an edge from a reachable node, or remove its edges",
                )
    for i, name in enumerate(fx.names):
        if facts[name].can_end or i in fx.each_of or fx.kinds[i] == "unknown":
            continue
        if not fx.exits[i]:
            loc, path = fx.first_seen[i]
            why = "it has no exit"
            help = f"add an edge out of it, e.g. ss.then({name}, ss.END)"
        else:
            edge, k = fx.exits[i][0]
            loc, path = edge.location, f"flow[{k}]"
            why = "every path from it leads to a node with no way on"
            help = "give the nodes it leads to exits that reach ss.END"
        yield ctx.diag(
            "SW708",
            f"no run that reaches flow node {name!r} can end: {why}",
            where(loc, path),
            help=help,
        )


def importable(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW709: predicates and steps generated code could not import by name."""
    if not _active(ctx):
        return
    for k, edge in enumerate(ctx.graph.spec.flow or ()):
        ref = edge.predicate
        if ref is not None and _nested(ref):
            yield ctx.diag(
                "SW709",
                f"branch from {edge.source!r}: predicate {ref.display or ref.path!r} is a "
                "lambda or a function defined inside a function; a flow's predicates are "
                "module-level functions, in-process runs too: the workflow names each by "
                "its import path, which its diagram labels, `stepswitch diff` compares and "
                "a generated runner imports, and a lambda has none",
                _edge_loc(edge, k),
                help="define the predicate with def at module level and pass it by name, "
                     "e.g. def is_long(text: str) -> bool: return len(text) > 3",
            )
    for s in ctx.graph.spec.steps:
        if _nested(s.ref):
            yield ctx.diag(
                "SW709",
                f"step {s.name!r} is defined inside a function; a flow's steps are "
                "module-level functions, in-process runs too: the workflow names each by "
                "its import path, which `stepswitch diff` compares and a generated runner "
                "imports, and a local function has none",
                where(s.location, f"steps.{s.name}"),
                help="define the step at module level",
            )


def _nested(ref: Ref) -> bool:
    qualname = ref.path.split(":", 1)[-1]
    return "<" in qualname or ref.path.startswith("<object>")


def model_calls(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW203/SW204 for a flow: every node's worst case, fan-out widths and loop budgets
    included."""
    if not _active(ctx):
        return
    cycles, any_cycle = recursion_cycles(ctx)
    if cycles or _unbudgeted_cycles(ctx):
        return  # SW202 / SW705 say it is unbounded; a number would mislead
    fx = flow_index(ctx)
    spec = ctx.graph.spec
    n = len(fx.names)
    entry = spec.entry
    if n == 0 or entry is None or entry not in fx.pos or any(k == "unknown" for k in fx.kinds):
        return
    index = ctx.index()
    costs = run_costs(index, any_cycle) if len(index) else []
    turns: float = spec.max_turns if spec.max_turns is not None else math.inf
    why: str | None = None if spec.max_turns is not None else (
        f"workflow {spec.name!r} has max_turns=None")
    own = [0.0] * n
    for i, name in enumerate(fx.names):
        if fx.kinds[i] == "agent":
            own[i] = capped(turns * (1 + costs[index.pos[name]]))
    cost = list(own)
    for i, exits in enumerate(fx.exits):
        for edge, _ in exits[:1]:
            if edge.kind == "fan_out" and edge.each in fx.pos and own[fx.pos[edge.each]]:
                width: float = edge.max_items if edge.max_items is not None else math.inf
                if edge.max_items is None:
                    why = why or f"the fan-out from {edge.source!r} has no max_items"
                cost[i] = capped(cost[i] + width * own[fx.pos[edge.each]])
    # loops: a strongly connected set of nodes runs at most (1 + its budgets) rounds
    comps, comp_of = strongly_connected(fx.succ)
    weight: list[float] = []
    for comp in comps:
        members = set(comp)
        total = sum(cost[i] for i in comp)
        looping = len(comp) > 1 or comp[0] in fx.succ[comp[0]]
        if looping and total > 0:
            # every cycle crosses a budgeted edge (no SW705): rounds are 1 + the smallest
            # total budget of edges that cut every cycle (never more than all budgets'
            # sum, never more when a budget is added; see analysis/_loops.py)
            budget: dict[tuple[int, int], int] = {}
            for i in comp:
                for edge, _ in fx.exits[i][:1]:
                    if edge.max_uses is None:
                        continue
                    for t in edge.targets():
                        if t is not None and fx.pos[t] in members:
                            budget[(i, fx.pos[t])] = edge.max_uses
            rounds = 1 + loop_budget(comp, fx.succ, budget)
            total = capped(total * rounds)
        weight.append(total)
    best = [0.0] * len(comps)
    for c, comp in enumerate(comps):  # sinks first
        after = 0.0
        for i in comp:
            for j in fx.succ[i]:
                d = comp_of[j]
                if d != c and best[d] > after:
                    after = best[d]
        best[c] = capped(weight[c] + after)
    bound = best[comp_of[fx.pos[entry]]]
    ctx.memo["model_call_bound"] = None if bound == math.inf else int(bound)
    loc = ctx.workflow_loc()
    limit = ctx.max_model_calls
    if bound == math.inf:
        yield ctx.diag(
            "SW203",
            f"worst case: unbounded model calls per run ({why or 'a nested run is unbounded'})",
            loc,
            help="set max_turns, max_items on fan-outs and max_uses on loops",
        )
        if limit is not None:
            yield ctx.diag(
                "SW204",
                f"the number of model calls per run is unbounded, over the limit "
                f"max_model_calls={limit}",
                loc,
                help="bound every agent node's run and every fan-out",
            )
        return
    shown = f"more than {CAP:.0e}" if bound >= CAP else str(int(bound))
    agents = sum(1 for k in fx.kinds if k == "agent")
    yield ctx.diag(
        "SW203",
        f"worst case: {shown} model calls per run (a flow of {n} node(s), {agents} agent "
        f"node(s) of at most max_turns={spec.max_turns} turns each, fan-out widths and loop "
        "budgets included)",
        loc,
        help="`stepswitch explain SW203` describes how the bound is computed",
    )
    if limit is not None and bound > limit:
        yield ctx.diag(
            "SW204",
            f"worst case {shown} model calls per run exceeds the limit max_model_calls={limit}",
            loc,
            help="lower max_turns, max_items on fan-outs or max_uses on loops",
        )
    elif limit is not None:  # within the limit as counted: can a run make more?
        yield from unproved_limit(ctx, limit, shown)


RULES = (nodes, types, budgets, endings, importable, model_calls)
