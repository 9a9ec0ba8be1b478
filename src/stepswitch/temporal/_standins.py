"""The stand-ins the workflow's resolver holds for what touches the world.

The loop runs in the workflow on the machine's own tables, but its resolver's entries
for effects are stand-ins: calling one makes an awaitable (:class:`HookRun`,
:class:`SessionRun`, :class:`StepRun`) or a job (:class:`ToolFn`) that only the
workflow's driver (:class:`stepswitch.temporal._driver.Driver`) performs, as a
(local) activity. :func:`workflow_core` and :func:`workflow_flow` build the machine's
core and flow with them.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from stepswitch._dataclass import dataclass
from stepswitch.context import RunContext
from stepswitch.errors import UserError
from stepswitch.ir import HandoffTo, RunFunction
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.flow import FlowCore
from stepswitch.temporal._codec import HookCall, SessionCall, jsonable, write_items

if TYPE_CHECKING:
    from stepswitch.flow_ir import FlowNode
    from stepswitch.runtime.machine import StateMachine

__all__ = [
    "Hook",
    "HookRun",
    "RemoteModel",
    "RemoteSession",
    "RemoteStep",
    "RemoteTool",
    "SessionRun",
    "Snapshot",
    "StepRun",
    "ToolFn",
    "Verdict",
    "workflow_core",
    "workflow_flow",
]


class HookRun:
    """The awaitable a stand-in hook returns; the driver runs it as a local activity."""

    __slots__ = ("call",)

    def __init__(self, call: HookCall) -> None:
        self.call = call

    def __await__(self) -> Generator[Any, None, Any]:  # pragma: no cover - never awaited
        raise RuntimeError("a Temporal hook stand-in is performed by the workflow driver")


class Hook:
    def __init__(self, kind: str, ref: str) -> None:
        self.kind = kind
        self.ref = ref

    def __call__(self, ctx: RunContext[Any], *args: Any) -> HookRun:
        agent = ""
        rest: list[Any] = []
        if self.kind in ("instructions", "input_guardrail", "output_guardrail", "is_enabled"):
            agent = args[0].agent
            rest = [jsonable(a) for a in args[1:]]
        else:  # on_handoff(ctx[, value])
            rest = [jsonable(a) for a in args]
        return HookRun(HookCall(self.kind, self.ref, agent, rest, ctx.context))


class ToolFn:
    __slots__ = ("ref",)

    def __init__(self, ref: str) -> None:
        self.ref = ref

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise RuntimeError("a Temporal tool stand-in is performed by the workflow driver")


class RemoteTool:
    """A function tool as the workflow sees it: its parameters model (arguments are
    validated in the workflow), a stand-in function, approvals as a local activity."""

    def __init__(self, tool: Any, ref: str) -> None:
        self._tool = tool
        self.ref = ref
        self.fn = ToolFn(ref)
        self.params_model = tool.params_model

    def needs_approval(self, ctx: RunContext[Any], params: Any, call_id: str) -> HookRun:
        return HookRun(HookCall("needs_approval", self.ref, "", [params, call_id], ctx.context))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tool, name)


class SessionRun:
    """The awaitable a stand-in session's method returns; the driver runs it as a
    local activity."""

    __slots__ = ("call",)

    def __init__(self, call: SessionCall) -> None:
        self.call = call

    def __await__(self) -> Generator[Any, None, Any]:  # pragma: no cover - never awaited
        raise RuntimeError("a Temporal session stand-in is performed by the workflow driver")


@dataclass(frozen=True)
class Snapshot:
    items: tuple[Any, ...]
    version: int
    current_agent: str | None


class RemoteSession:
    """The conversation as the workflow sees it: ``load`` and ``append`` (what the
    runtime's conversation wrapper calls) become activities on the worker's session."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id

    def load(self, limit: int | None = None) -> SessionRun:
        return SessionRun(SessionCall("load", self.session_id, limit=limit))

    def append(
        self, items: list[Any], *, operation_id: str, expected_version: int | None,
        current_agent: str | None,
    ) -> SessionRun:
        return SessionRun(SessionCall(
            "append", self.session_id, items=write_items(items), operation_id=operation_id,
            expected_version=expected_version, current_agent=current_agent,
        ))


class StepRun:
    """The awaitable a stand-in step returns; the driver runs the step as an activity."""

    __slots__ = ("node", "value")

    def __init__(self, node: FlowNode, value: Any) -> None:
        self.node = node
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:  # pragma: no cover - never awaited
        raise RuntimeError("a Temporal step stand-in is performed by the workflow driver")


class RemoteStep:
    """A flow's step as the workflow sees it: calling it makes a :class:`StepRun`,
    which the flow loop awaits (``performed_by_driver``) and the driver performs."""

    performed_by_driver = True

    def __init__(self, node: FlowNode) -> None:
        self.node = node

    def __call__(self, *args: Any) -> StepRun:
        return StepRun(self.node, args[-1])  # (ctx, value) or (value,)


class RemoteModel:
    __slots__ = ("ref",)

    def __init__(self, ref: str | None) -> None:
        self.ref = ref


def workflow_core(machine: StateMachine) -> MachineCore:
    original = machine._core
    resolver: dict[str, object] = dict(original.resolver)
    from stepswitch.temporal import _hooks  # it builds on these stand-ins

    _hooks.stand_ins(original, resolver)  # tool guardrails, gates, agent hooks
    for s in machine.ir.states:
        if s.model_ref is not None:
            resolver[s.model_ref] = RemoteModel(s.model_ref)
        if s.instructions_fn is not None:
            resolver[s.instructions_fn] = Hook("instructions", s.instructions_fn)
        for g in s.input_guardrails:
            resolver[g.ref] = Hook("input_guardrail", g.ref)
        for g in s.output_guardrails:
            resolver[g.ref] = Hook("output_guardrail", g.ref)
        for t in s.tools:
            a = t.action
            if type(a) is RunFunction:
                resolver[a.ref] = RemoteTool(original.resolver[a.ref], a.ref)
            elif type(a) is HandoffTo and a.on_handoff is not None:
                resolver[a.on_handoff] = Hook("on_handoff", a.on_handoff)
    if machine.ir.flow is not None:
        for n in machine.ir.flow.nodes:
            if n.kind == "step" and n.ref:
                resolver[n.ref] = RemoteStep(n)
    return MachineCore(machine.ir, resolver, original.steps)


def workflow_flow(machine: StateMachine, core: MachineCore) -> FlowCore | None:
    """The flow as the workflow runs it: its steps are stand-ins, its branch predicates
    and generated exit functions the machine's own (pure: they run in the workflow).
    Every value a step takes or gives crosses to its activity as JSON: a type that
    cannot is a ``UserError`` now, not a workflow task failing at the first run."""
    if machine._flow is None:
        return None
    flow = FlowCore(core, machine._flow.steps)
    for node in flow.flow.nodes:
        if node.kind != "step":
            continue
        step: Any = machine._core.obj(node.ref or "")
        context_type = getattr(step, "context_type", None)
        what, shown = "input", node.input_type
        try:
            flow.input_adapter(node)
            what, shown = "output", node.output_type
            flow.output_adapter(node)
            if node.takes_context and context_type not in (None, Any):
                what, shown = "context", getattr(context_type, "__name__", repr(context_type))
                _adapter(context_type)
        except Exception as exc:
            said = str(exc).strip()
            first = said.splitlines()[0].split(". ")[0] if said else repr(exc)
            site = getattr(step, "site", None)
            where = f"{site}: " if site is not None else ""
            raise UserError(
                f"{where}flow step {node.name!r} ({node.ref}): its {what} type {shown} cannot "
                f"cross to a Temporal activity as JSON ({first}); use a pydantic model, "
                "a dataclass or builtin types"
            ) from None
    return flow


def _adapter(tp: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(tp)


@dataclass
class Verdict:
    """A guardrail's answer, as its local activity returned it (a
    ``GuardrailFunctionOutput``'s two fields)."""

    output_info: Any
    tripwire_triggered: bool

