"""One flow run's state: what the flow loop (:mod:`.flow`) keeps while it runs, its
snapshots and results, and how a run starts or resumes from a saved
:class:`~.state.FlowState`.

The run's items are every agent node's items, node after node; a fan-out's branches'
items follow in element order once the fan-out joins. A pause saves a
:class:`~.state.FlowState`: the node, its input as JSON, the edge budgets used, and the
paused run(s); finished fan-out branches keep their outputs and are not run again.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.context import RunContext
from stepswitch.errors import StateError, UserError
from stepswitch.flow_ir import FlowNode
from stepswitch.runtime.approvals import AlwaysKey, lift
from stepswitch.runtime.flow_core import FlowCore, misfit, type_name
from stepswitch.runtime.items import RunItem, ToolApprovalItem
from stepswitch.runtime.model import InputItem, ModelResponse
from stepswitch.runtime.result import RunErrorDetails, RunResult
from stepswitch.runtime.run import Calls, Run, input_items
from stepswitch.runtime.state import FLOW_KEY, FanState, FlowState, RunState, usage_tuple

__all__ = ["Fan", "FlowRun", "flow_run", "lifted", "run_key"]


def run_key(node: str, branch: int | None = None) -> str:
    """Where a paused run of ``node`` (or of its fan-out branch) sits in ``nested``."""
    return f"{FLOW_KEY}{node}" if branch is None else f"{FLOW_KEY}{node}#{branch}"


def lifted(items: list[RunItem], key: str) -> list[RunItem]:
    """A node run's items as the flow lists them: approvals under the run's key."""
    return [lift(i, key) if type(i) is ToolApprovalItem else i for i in items]


@dataclass(slots=True)
class Fan:
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
    fan: Fan | None = None
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
            tool_uses=dict(self.calls.tools),
            spent_usd=self.calls.usd,
            usage=usage_tuple(self.ctx.usage),
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
        calls=Calls(state.calls_made, state.tool_uses, state.spent_usd),
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
              ) -> Fan:
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
    live = Fan(fan.source, elements, results)
    for i, child in paused.items():
        if each.kind != "agent" or child.current_agent not in fc.core.states:
            raise StateError("the state's paused fan-out branch is no agent run")
        live.paused[i] = child
    return live


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
