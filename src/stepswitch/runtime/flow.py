"""The flow loop: agents and steps chained by the flow IR's exits.

One generator, like :func:`~.loop.run_loop`, and driven by the same three drivers: it
yields the same effects (an agent node runs the agent loop inline, so its model calls,
tools, approvals and stream events pass straight through; a fan-out is one
``RunJobs`` of nested loops). A node's step ends in Final (``END``), Handoff (a move
to the next node, by :func:`next_node`, the flow's step switch), Interruption (an
agent node, or a fan-out branch, waits for approvals) or RunAgain (an agent node's
own turns).

The run's items are every agent node's items, node after node; a fan-out's branches'
items follow in element order once the fan-out joins. A pause saves a
:class:`~.state.FlowState`: the node, its input as JSON, the edge budgets used, and the
paused run(s); finished fan-out branches keep their outputs and are not run again.
"""

from __future__ import annotations

import contextlib
import enum
import json
from collections.abc import Callable, Generator, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from stepswitch._dataclass import dataclass
from stepswitch.context import RunContext
from stepswitch.errors import (
    FlowBudgetExceeded,
    ModelBehaviorError,
    StateError,
    StepswitchError,
    UserError,
)
from stepswitch.flow_ir import FlowExit, FlowIR, FlowNode, edge_key
from stepswitch.runtime.approvals import AlwaysKey, lift
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import Await, Emit, Err, NestedJob, RunJobs
from stepswitch.runtime.events import FlowNodeStreamEvent
from stepswitch.runtime.items import RunItem, ToolApprovalItem
from stepswitch.runtime.loop import run_loop
from stepswitch.runtime.model import InputItem, ModelResponse
from stepswitch.runtime.result import RunErrorDetails, RunResult
from stepswitch.runtime.run import Calls, Run, input_items
from stepswitch.runtime.state import FLOW_KEY, FanState, FlowState, RunState

if TYPE_CHECKING:  # pydantic loads with the first flow that needs it, not the runtime
    from pydantic import TypeAdapter

__all__ = [
    "FlowCore",
    "FlowStep",
    "flow_loop",
    "flow_run",
    "misfit",
    "next_node",
    "no_route",
    "predicate_of",
    "route_key",
    "to_text",
]

Loop = Generator[Any, Any, RunResult]

FlowStep = Callable[[FlowNode, Any], "str | None"]
"""A node's exit as a function: the next node's name for an output, None for END
(fan-outs are the loop's own business)."""


def to_text(value: Any) -> str:
    """What an agent node receives: text as is, anything else as compact JSON."""
    if type(value) is str:
        return value
    from pydantic_core import to_jsonable_python

    return json.dumps(to_jsonable_python(value), separators=(",", ":"), ensure_ascii=False)


class FlowCore:
    """The flow IR with its live objects resolved and its tables indexed, once."""

    def __init__(self, core: MachineCore, steps: Mapping[str, FlowStep] | None = None) -> None:
        flow = core.ir.flow
        assert flow is not None
        self.core = core
        self.flow: FlowIR = flow
        self.nodes: dict[str, FlowNode] = {n.name: n for n in flow.nodes}
        if flow.entry not in self.nodes:
            raise UserError(f"machine {core.ir.name!r}: flow entry {flow.entry!r} is no node")
        self.fns: dict[str, Callable[..., Any]] = {}
        self.checks: dict[str, Callable[[Any], None]] = {}
        """Per step, what checks its output against its return annotation (the step's
        own ``output_check``, built by the DSL with pydantic; none for a plain function)."""
        self.cases: dict[str, dict[str, str | None]] = {}
        self.preds: dict[str, Callable[[Any], Any]] = {}
        self.awaits: set[str] = set()
        """Steps whose call returns an awaitable: async ones, and those a driver performs
        itself (a resolver entry with ``performed_by_driver``, as on Temporal, where a
        step is an activity)."""
        for n in flow.nodes:
            if n.kind == "step":
                obj = core.obj(n.ref or "")
                self.fns[n.name] = getattr(obj, "fn", obj)
                if n.is_async or getattr(obj, "performed_by_driver", False):
                    self.awaits.add(n.name)
                output_check = getattr(obj, "output_check", None)
                if callable(output_check):
                    self.checks[n.name] = output_check()
            elif n.name not in core.states:
                raise UserError(
                    f"machine {core.ir.name!r}: flow node {n.name!r} is no agent state"
                )
            ex = n.exit
            if ex is None:
                continue
            for target in (ex.target, ex.otherwise, ex.each, *(t for _, t in ex.cases)):
                if target is not None and target not in self.nodes:
                    raise UserError(
                        f"machine {core.ir.name!r}: flow node {n.name!r} leads to "
                        f"{target!r}, which is no node"
                    )
            if ex.kind == "route":
                self.cases[n.name] = dict(ex.cases)
            elif ex.kind == "branch":
                self.preds[n.name] = core.obj(ex.predicate or "")
        self.steps: dict[str, FlowStep] = dict(steps or {})
        unknown = set(self.steps) - set(self.nodes)
        if unknown:
            raise UserError(f"flow step functions for unknown nodes: {sorted(unknown)}")
        self._adapters: dict[str, TypeAdapter[Any]] = {}

    def adapter(self, ref: str | None, *, text: bool = False) -> TypeAdapter[Any]:
        """Validates a saved value as the type at ``ref``: ``str`` with ``text``, any
        JSON value when the type has no path (a generic alias such as ``list[int]``)."""
        key = ref or ("<text>" if text else "")
        adapter = self._adapters.get(key)
        if adapter is None:
            from pydantic import TypeAdapter

            tp: Any = self.core.obj(ref) if ref else str if text else Any
            adapter = TypeAdapter(tp)
            self._adapters[key] = adapter
        return adapter

    def input_adapter(self, node: FlowNode) -> TypeAdapter[Any]:
        return self.adapter(node.input_type) if node.kind == "step" else self.adapter(
            None, text=True)

    def output_adapter(self, node: FlowNode) -> TypeAdapter[Any]:
        if node.kind == "agent" and node.output_type is None:
            return self.adapter(None, text=True)
        return self.adapter(node.output_type)


def misfit(exc: ValueError) -> str:
    """A value's validation error on one line: where and what, for each error
    (pydantic's own message takes several lines and ends in a link)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return " ".join(str(exc).split())
    parts: list[str] = []
    for e in errors():
        where = ".".join(str(p) for p in e.get("loc", ()))
        shown = repr(e.get("input"))
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        parts.append(f"{where + ': ' if where else ''}{e.get('msg', '?')} (got {shown})")
    return "; ".join(parts)


def route_key(out: Any, field_name: str) -> str:
    """The case a route takes: ``str`` of the output's field (an Enum's value)."""
    value = out.get(field_name) if isinstance(out, dict) else getattr(out, field_name)
    if isinstance(value, enum.Enum):
        value = value.value
    return str(value)


def no_route(node: FlowNode, field_name: str, key: str) -> UserError:
    """The error of a route whose field holds a value no case names."""
    cases = [c for c, _ in node.exit.cases] if node.exit is not None else []
    return UserError(
        f"flow node {node.name!r}: route on {field_name!r} has no case for {key!r} "
        f"(cases: {', '.join(map(repr, cases))})"
    )


def predicate_of(objects: Mapping[str, object], path: str) -> Callable[[Any], object]:
    """The branch predicate bound at ``path`` (for generated exit functions)."""
    fn = objects[path]
    if not callable(fn):
        raise UserError(f"branch predicate {path!r} is not callable")
    return fn


def next_node(fc: FlowCore, node: FlowNode, out: Any) -> str | None:
    """The interpreter of a node's exit (not a fan-out): where ``out`` goes."""
    ex = node.exit
    assert ex is not None
    kind = ex.kind
    if kind == "then":
        return ex.target
    if kind == "branch":
        return ex.target if fc.preds[node.name](out) else ex.otherwise
    assert kind == "route"
    field_name = ex.field or ""
    key = route_key(out, field_name)
    cases = fc.cases[node.name]
    if key not in cases:
        raise no_route(node, field_name, key)
    return cases[key]


def run_key(node: str, branch: int | None = None) -> str:
    """Where a paused run of ``node`` (or of its fan-out branch) sits in ``nested``."""
    return f"{FLOW_KEY}{node}" if branch is None else f"{FLOW_KEY}{node}#{branch}"


def lifted(items: list[RunItem], key: str) -> list[RunItem]:
    """A node run's items as the flow lists them: approvals under the run's key."""
    return [lift(i, key) if type(i) is ToolApprovalItem else i for i in items]


@dataclass(slots=True)
class _Fan:
    """A fan-out in progress (live values)."""

    source: str
    elements: list[Any]
    results: dict[int, Any] = field(default_factory=dict)
    paused: dict[int, RunState] = field(default_factory=dict)


@dataclass(slots=True)
class FlowRun:
    """The mutable state of one flow run. Only the flow loop touches it."""

    workflow: str
    input: tuple[InputItem, ...]
    raw_input: Any
    ctx: RunContext[Any]
    max_turns: int | None
    node: str
    value: Any
    items: list[RunItem] = field(default_factory=list)
    uses: dict[str, int] = field(default_factory=dict)
    responses: list[ModelResponse] = field(default_factory=list)
    always: dict[AlwaysKey, bool] = field(default_factory=dict)
    child: RunState | None = None
    fan: _Fan | None = None
    fresh: bool = True
    """The entry node has not started: it gets the run's input as given."""
    model: Any = None
    emit: bool = False
    live: list[RunItem] = field(default_factory=list)
    """Items of the agent node running now (shown in errors and pauses)."""
    trace_context: str | None = None
    """The W3C traceparent of the flow's first workflow span (kept in its states, so a
    resumed flow continues the same trace)."""
    calls: Calls = field(default_factory=Calls)
    """The model calls of every node's run (each node's run counts into it)."""
    running: Run | None = None
    """The agent node's run while it runs (not a fan-out branch's): what a driver saves
    to continue the flow elsewhere between two of its turns (see :meth:`mid_turn`)."""
    spent: str | None = None
    """The edge whose max_uses ran out (its key), when that stopped the run."""

    def all_items(self) -> list[RunItem]:
        items = list(self.items)
        fan = self.fan
        if fan is not None:
            for i in sorted(fan.paused):
                items.extend(lifted(fan.paused[i].items, run_key(self.node, i)))
        elif self.child is not None:
            items.extend(lifted(self.child.items, run_key(self.node)))
        else:
            items.extend(self.live)
        return items

    def mid_turn(self, fc: FlowCore) -> RunState | None:
        """The flow's state at the start of the running agent node's turn (the turn not
        yet taken), to go on with elsewhere; None outside an agent node's run."""
        run = self.running
        if run is None or self.fan is not None:
            return None
        child = run.snapshot(pending=None, status="stopped")
        child.current_turn = run.turn - 1
        self.child, self.live = child, []
        try:
            return self.snapshot(fc, status="stopped")
        finally:
            self.child, self.live = None, run.items

    def paused_runs(self) -> dict[str, RunState]:
        if self.fan is not None:
            return {run_key(self.node, i): s.copy() for i, s in self.fan.paused.items()}
        if self.child is not None:
            return {run_key(self.node): self.child.copy()}
        return {}

    def snapshot(self, fc: FlowCore, *, status: str) -> RunState:
        from pydantic_core import PydanticSerializationError, to_jsonable_python

        def saved(value: Any) -> Any:
            try:
                return to_jsonable_python(value)
            except PydanticSerializationError as exc:
                raise UserError(
                    f"flow {self.workflow!r}: the value at node {self.node!r} has no JSON "
                    f"form, so the run's state cannot be saved ({exc}); give the flow's steps "
                    "types with one: BaseModel subclasses, dataclasses, builtin types"
                ) from None

        items = self.all_items()
        fan = self.fan
        fan_state = None
        if fan is not None:
            fan_state = FanState(
                source=fan.source,
                elements=[saved(e) for e in fan.elements],
                results={i: saved(v) for i, v in fan.results.items()},
            )
        value = self.raw_input if self.fresh else self.value
        flow = FlowState(
            node=self.node,
            value=saved(value),
            uses=dict(self.uses),
            done=len(self.items),
            fan=fan_state,
            spent=self.spent,
        )
        return RunState(
            workflow=self.workflow,
            input=self.input,
            items=items,
            current_agent=self.node,
            current_turn=0,
            max_turns=self.max_turns,
            always=dict(self.always),
            nested=self.paused_runs(),
            status="finished" if status == "finished" else (
                "interrupted" if status == "interrupted" else "stopped"),
            flow=flow,
            trace_context=self.trace_context,
            model_calls=self.calls.n,
        )

    def result(self, fc: FlowCore, final: Any, *, paused: bool) -> RunResult:
        state = self.snapshot(fc, status="interrupted") if paused else None
        result = RunResult(
            input=self.input,
            new_items=self.all_items(),
            final_output=final,
            last_agent=self.node,
            interruptions=state.interruptions if state is not None else [],
            raw_responses=self.responses,
            usage=self.ctx.usage,
            max_turns=self.max_turns,
            _state=(lambda: state.copy()) if state is not None
            else (lambda: self.snapshot(fc, status="finished")),
        )
        return result

    def error_details(self, fc: FlowCore) -> RunErrorDetails:
        return RunErrorDetails(
            input=self.input,
            new_items=self.all_items(),
            last_agent=self.node,
            raw_responses=self.responses,
            usage=self.ctx.usage,
            _state=lambda: self.snapshot(fc, status="stopped"),
        )


# -- starting and resuming ------------------------------------------------------------------


def flow_run(
    fc: FlowCore,
    input: Any,
    *,
    model: Any,
    ctx: RunContext[Any],
    max_turns: int | None,
    emit: bool,
) -> FlowRun:
    """The state of a new flow run (``input``) or a resumed one (a ``RunState``)."""
    name = fc.core.ir.name
    if isinstance(input, RunState):
        fr = _resume(fc, input, ctx=ctx, max_turns=max_turns)
    else:
        entry = fc.nodes[fc.flow.entry]
        items = input_items(input) if isinstance(input, str | list | tuple) else ()
        fr = FlowRun(name, items, input, ctx, max_turns, entry.name, input)
        if entry.kind == "step":  # an input that does not fit fails before the run starts
            fr.value = _entry_value(fc, fr, entry)
    fr.model = model
    fr.emit = emit
    return fr


def _resume(fc: FlowCore, state: RunState, *, ctx: RunContext[Any],
            max_turns: int | None) -> FlowRun:
    state = state.copy()
    if state.workflow != fc.core.ir.name:
        raise StateError(
            f"the state belongs to workflow {state.workflow!r}, not {fc.core.ir.name!r}"
        )
    fs = state.flow
    if fs is None:
        raise StateError(
            f"the state is not a flow's, but workflow {fc.core.ir.name!r} is a flow"
        )
    if state.status == "finished":
        raise StateError("the state is of a flow run that already finished (resuming it "
                         "would run it again): start a new run")
    if fs.spent is not None:
        source, _, target = fs.spent.partition("->")
        raise StateError(
            f"the state stopped when flow edge {source} → {target.strip('<>')} had used up "
            "its max_uses, which it would do again: raise max_uses on that edge or let the "
            "loop end sooner, and start a new run"
        )
    node = fc.nodes.get(fs.node)
    if node is None:
        raise StateError(f"the state stopped at flow node {fs.node!r}, which the flow lacks")
    if not 0 <= fs.done <= len(state.items):
        raise StateError("the state's flow.done does not fit its items")
    if state.decisions or state.pending is not None:
        raise StateError("a flow's state pauses in its nodes' runs, not at the top")
    keys = {run_key(fs.node)} if fs.fan is None else {
        run_key(fs.node, i) for i in range(len(fs.fan.elements))}
    for key in state.nested:
        if key not in keys:
            raise StateError(f"the state has a paused run {key!r} the flow does not wait on")
    for key in fs.uses:
        source = key.split("->", 1)[0]
        if source not in fc.nodes:
            raise StateError(f"the state counts uses of edge {key!r}, which the flow lacks")
    child = state.nested.get(run_key(fs.node)) if fs.fan is None else None
    fresh = not state.items and child is None and fs.fan is None and fs.node == fc.flow.entry
    try:
        if fresh:
            value: Any = fs.value
        elif child is not None or fs.fan is not None:
            value = None
        else:
            value = fc.input_adapter(node).validate_python(fs.value)
    except ValueError as exc:
        raise StateError(f"the state's input for flow node {fs.node!r} does not fit: "
                         f"{misfit(exc)}"
                         ) from None
    # An entry step that has not run yet parses the run's input again (the state keeps it
    # as given, or as JSON); an entry agent starts from the input items
    raw_input: Any = fs.value if fresh and node.kind == "step" else list(state.input)
    fr = FlowRun(
        state.workflow, tuple(state.input), raw_input, ctx, max_turns, fs.node, value,
        items=list(state.items[: fs.done]), uses=dict(fs.uses),
        always=dict(state.always), fresh=fresh, trace_context=state.trace_context,
        calls=Calls(state.calls_made),
    )
    if fresh and node.kind == "step":
        try:
            fr.value = _entry_value(fc, fr, node)
        except UserError as exc:
            raise StateError(f"the state's input: {exc}") from None
    if child is not None:
        if node.kind != "agent" or child.current_agent not in fc.core.states:
            raise StateError(f"the state has a paused run in flow node {fs.node!r}, "
                             "which is no agent node")
        fr.child = child
    if fs.fan is not None:
        fr.fan = _read_fan(fc, fs.fan, fs.node, state.nested)
    return fr


def _read_fan(fc: FlowCore, fan: FanState, node_name: str, nested: dict[str, RunState]
              ) -> _Fan:
    source = fc.nodes.get(fan.source)
    ex = source.exit if source is not None else None
    if ex is None or ex.kind != "fan_out" or ex.each != node_name:
        raise StateError(f"the state's fan-out from {fan.source!r} is no fan-out of the flow")
    each = fc.nodes[node_name]
    n = len(fan.elements)
    paused = {i: nested[run_key(node_name, i)] for i in range(n)
              if run_key(node_name, i) in nested}
    if any(not 0 <= i < n for i in fan.results) or set(fan.results) & set(paused):
        raise StateError("the state's fan-out branches do not line up")
    try:
        in_adapter = fc.input_adapter(each)
        elements = [e if each.kind == "agent" else in_adapter.validate_python(e)
                    for e in fan.elements]
        out_adapter = fc.output_adapter(each)
        results = {i: out_adapter.validate_python(v) for i, v in fan.results.items()}
    except ValueError as exc:
        raise StateError(f"the state's fan-out values do not fit: {misfit(exc)}") from None
    live = _Fan(fan.source, elements, results)
    for i, child in paused.items():
        if each.kind != "agent" or child.current_agent not in fc.core.states:
            raise StateError("the state's paused fan-out branch is no agent run")
        live.paused[i] = child
    return live


# -- the loop -------------------------------------------------------------------------------


def flow_loop(fc: FlowCore, fr: FlowRun, config: RunConfig) -> Loop:
    """Drive a flow to its result, yielding effects; an error carries the run so far."""
    try:
        return (yield from _flow(fc, fr, config))
    except GeneratorExit:
        raise
    except BaseException as exc:
        # Ctrl-C and cancellation too. A node's run attached its own run data on the way
        # out (for a model's or a hook's error as well); the flow's holds every node's
        with contextlib.suppress(AttributeError):  # a type that refuses attributes
            exc.run_data = fr.error_details(fc)  # type: ignore[attr-defined]
        raise


def _flow(fc: FlowCore, fr: FlowRun, config: RunConfig) -> Loop:
    nodes = fc.nodes
    steps = fc.steps
    while True:
        node = nodes[fr.node]
        if fr.fan is not None:  # resumed inside a fan-out
            source = nodes[fr.fan.source]
            joined = yield from _fan(fc, fr, config, source)
            if joined is None:
                return fr.result(fc, None, paused=True)
            out: Any = joined
            ex: FlowExit | None = source.exit
            assert ex is not None
            here = source.name
            target = ex.target
        else:
            if node.kind == "step":
                if fr.emit:
                    yield Emit(FlowNodeStreamEvent(node.name, "step"))
                value = fr.value  # an entry step's input was parsed when the run started
                fr.fresh = False
                # _branch_step's body, inline: a generator per step would cost a run
                # ~0.25 µs a step (5% of a run of four plain steps)
                fn = fc.fns[node.name]
                out = fn(fr.ctx, value) if node.takes_context else fn(value)
                if node.name in fc.awaits:
                    out = yield Await(out)
                check = fc.checks.get(node.name)
                if check is not None:
                    check(out)
            else:
                if fr.emit:
                    yield Emit(FlowNodeStreamEvent(node.name, "agent"))
                result = yield from _agent_node(fc, fr, config, node)
                if result.interruptions:
                    fr.child = result.to_state()
                    return fr.result(fc, None, paused=True)
                fr.items.extend(lifted(result.new_items, run_key(node.name)))
                fr.live = []
                out = result.final_output
            ex = node.exit
            assert ex is not None
            here = node.name
            if ex.kind == "fan_out":
                elements = _elements(node, ex, out)
                fr.fan = _Fan(node.name, elements)
                fr.node = ex.each or ""
                joined = yield from _fan(fc, fr, config, node)
                if joined is None:
                    return fr.result(fc, None, paused=True)
                out = joined
                target = ex.target
            else:
                own = steps.get(here)
                target = own(node, out) if own is not None else next_node(fc, node, out)
        if ex.max_uses is not None:
            key = edge_key(here, target)
            used = fr.uses.get(key, 0)
            if used >= ex.max_uses:
                fr.node, fr.value, fr.spent = here, None, key
                raise FlowBudgetExceeded(here, target, used)
            fr.uses[key] = used + 1
        if target is None:
            return fr.result(fc, out, paused=False)
        fr.node = target
        fr.value = out


def _entry_value(fc: FlowCore, fr: FlowRun, node: FlowNode) -> Any:
    """The run's input as the entry step's input type."""
    raw = fr.raw_input
    ref = node.input_type
    if ref is None:
        return raw
    tp = fc.core.obj(ref)
    if tp is str or tp is Any or (isinstance(tp, type) and isinstance(raw, tp)):
        return raw
    try:
        if isinstance(raw, str | bytes):
            return fc.adapter(ref).validate_json(raw)
        return fc.adapter(ref).validate_python(raw)
    except ValueError as exc:
        as_json = " (as JSON)" if isinstance(raw, str | bytes) else ""
        raise UserError(
            f"flow entry {node.name!r} takes {type_name(tp)}{as_json}, and the run's input "
            f"does not fit: {misfit(exc)}"
        ) from None


def type_name(tp: Any) -> str:
    """How a message shows a type: ``Order``, ``int``, ``list[str]``."""
    if isinstance(tp, type) and not getattr(tp, "__args__", None):
        return tp.__name__
    return repr(tp).replace("typing.", "")


def _elements(node: FlowNode, ex: FlowExit, out: Any) -> list[Any]:
    name = ex.field or ""
    value = out.get(name) if isinstance(out, dict) else getattr(out, name, None)
    if not isinstance(value, list | tuple):
        raise UserError(
            f"flow node {node.name!r}: fan-out over {name!r} needs a list, got "
            f"{type(value).__name__}"
        )
    if ex.max_items is not None and len(value) > ex.max_items:
        raise ModelBehaviorError(
            f"flow node {node.name!r} gave {len(value)} elements in {name!r}, more than the "
            f"fan-out's max_items={ex.max_items}"
        )
    return list(value)


def _agent_node(fc: FlowCore, fr: FlowRun, config: RunConfig, node: FlowNode
                ) -> Generator[Any, Any, RunResult]:
    """Run (or resume) an agent node inline: its effects and events pass through."""
    child = fr.child
    fr.child = None
    if child is not None:
        run = _resumed_child(fc, fr, child)
    else:
        given = fr.raw_input if fr.fresh else to_text(fr.value)
        fr.fresh = False
        run = Run.start(fr.workflow, node.name, given, max_turns=fr.max_turns, ctx=fr.ctx,
                        calls=fr.calls)
        run.always = dict(fr.always)
    run.model = fr.model
    run.emit = fr.emit
    fr.live = run.items
    fr.running = run
    try:
        result: RunResult = yield from run_loop(fc.core, run, config)
    except StepswitchError:
        fr.child = run.snapshot(pending=None, status="stopped")
        fr.live = []
        raise
    finally:
        fr.running = None
    fr.responses.extend(result.raw_responses)
    return result


def _resumed_child(fc: FlowCore, fr: FlowRun, child: RunState) -> Run:
    """Resume a node's paused run (its decisions are in its own state) with the flow's
    standing 'always' decisions."""
    child.always.update(fr.always)
    budget = fr.max_turns if fr.max_turns is not None else child.max_turns
    return Run.resume(fc.core, child, max_turns=budget, ctx=fr.ctx, calls=fr.calls)


def _branch_step(fc: FlowCore, node: FlowNode, value: Any, ctx: RunContext[Any]
                 ) -> Generator[Any, Any, Any]:
    fn = fc.fns[node.name]
    out = fn(ctx, value) if node.takes_context else fn(value)
    if node.name in fc.awaits:
        out = yield Await(out)
    check = fc.checks.get(node.name)
    if check is not None:
        check(out)
    return out


def _fan(fc: FlowCore, fr: FlowRun, config: RunConfig, source: FlowNode
         ) -> Generator[Any, Any, list[Any] | None]:
    """Run the branches not yet finished; the joined list, or None when some paused."""
    fan = fr.fan
    assert fan is not None
    ex = source.exit
    assert ex is not None
    each = fc.nodes[ex.each or ""]
    if fr.emit:
        yield Emit(FlowNodeStreamEvent(each.name, "fan_out", len(fan.elements)))
    todo = [i for i in range(len(fan.elements)) if i not in fan.results]
    jobs: list[NestedJob] = []
    runs: dict[int, Run] = {}
    for i in todo:
        if each.kind == "step":
            jobs.append(NestedJob(_branch_step(fc, each, fan.elements[i], fr.ctx)))
            continue
        paused = fan.paused.pop(i, None)
        if paused is not None:
            run = _resumed_child(fc, fr, paused)
        else:
            run = Run.start(fr.workflow, each.name, to_text(fan.elements[i]),
                            max_turns=fr.max_turns, ctx=fr.ctx, calls=fr.calls)
            run.always = dict(fr.always)
        run.model = fr.model
        runs[i] = run
        jobs.append(NestedJob(run_loop(fc.core, run, config)))
    outcomes = (yield RunJobs(tuple(jobs), ex.concurrency)) if jobs else ()
    error: BaseException | None = None
    made: list[RunItem] = []
    for i, outcome in zip(todo, outcomes, strict=True):
        if type(outcome) is Err:
            if i in runs:  # what the branch did so far stays resumable
                fan.paused[i] = runs[i].snapshot(pending=None, status="stopped")
            error = error or outcome.error
            continue
        value = outcome.value
        if each.kind == "step":
            fan.results[i] = value
            continue
        result: RunResult = value
        fr.responses.extend(result.raw_responses)
        if result.interruptions:
            fan.paused[i] = result.to_state()
        else:
            fan.results[i] = result.final_output
            made.extend(lifted(result.new_items, run_key(each.name, i)))
    # Finished branches' items join the run now, in element order; a branch that paused
    # adds its items when it finishes, so the items of a paused run stay a prefix.
    fr.items.extend(made)
    if fr.emit and made:
        yield Emit(tuple(made))
    if error is not None:
        raise error
    if fan.paused:
        return None
    joined = [fan.results[i] for i in range(len(fan.elements))]
    fr.fan = None
    fr.node = source.name
    return joined
