"""``workflow_for(machine)``: the run loop as a Temporal workflow.

The workflow drives the very generator the in-process drivers drive
(:func:`stepswitch.runtime.loop.run_loop`), so every decision of the loop (what the
model is sent, which tool runs, handoffs, budgets, approvals, the step rule) is made
inside the deterministic workflow and replays from history. What touches the world
becomes an activity: the model call, each function tool, and the hooks that may do
I/O (local activities). A flow's ``@ss.step`` functions are activities too (user code
that may do I/O); the flow's own decisions (its edges, branch predicates, routes,
budgets, fan-out and join) are made in the workflow by the flow loop
(:func:`stepswitch.runtime.flow.flow_loop`), as in-process. Pure user callables
(tool-use-behaviour functions, handoff input filters, output extractors, failure
formatters, and a flow's branch predicates, which like handoff input filters are pure
functions of a value already in the workflow) run inside the workflow and must be
deterministic.

The workflow reads the user's objects through a resolver whose entries for those
effects are stand-ins (:class:`_RemoteTool`, :class:`_Hook`, :class:`_RemoteModel`,
:class:`_RemoteStep`); the driver here turns the effects they produce into activity
calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.converter import value_to_type
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

from stepswitch._dataclass import dataclass
from stepswitch.compiler.ir import HandoffTo, RunFunction
from stepswitch.context import RunContext, Usage
from stepswitch.errors import ModelProviderError, StepswitchError, UserError
from stepswitch.runtime import conversation
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import Await, CallJob, CallModel, Emit, Err, NestedJob, Ok, RunJobs
from stepswitch.runtime.events import FlowNodeStreamEvent
from stepswitch.runtime.flow import FlowCore, FlowRun, flow_loop, flow_run, misfit
from stepswitch.runtime.items import ToolApprovalItem
from stepswitch.runtime.loop import run_loop
from stepswitch.runtime.result import RunResult
from stepswitch.runtime.run import Run
from stepswitch.runtime.state import RunState
from stepswitch.runtime.tracing import tracer_for
from stepswitch.temporal import _hooks
from stepswitch.temporal._activities import activity_names, machine_digest
from stepswitch.temporal._codec import (
    HookCall,
    ModelCall,
    SessionCall,
    StepCall,
    ToolCall,
    error_class,
    jsonable,
    read_items,
    read_response,
    write_call,
    write_items,
    write_request,
)
from stepswitch.temporal._messages import (
    Decision,
    Interruption,
    RunInput,
    RunOutput,
    input_problem,
)
from stepswitch.temporal._tracing import (
    Segment,
    WorkflowTrace,
    traceparent_of,
)
from stepswitch.temporal._tracing import error as span_error

if TYPE_CHECKING:
    from stepswitch.flow_ir import FlowNode
    from stepswitch.runtime.machine import StateMachine

__all__ = [
    "Decision",
    "Interruption",
    "RunInput",
    "RunOutput",
    "workflow_for",
    "workflow_name",
]


def workflow_name(machine: StateMachine) -> str:
    """The Temporal workflow type of ``machine``'s runs."""
    return f"stepswitch.{machine.name}"


class ToolFailure(Exception):
    """A function tool raised on the worker; ``str()`` is its message."""

    def __init__(self, message: str, kind: str | None) -> None:
        super().__init__(message)
        self.kind = kind


class StepFailure(Exception):
    """A flow's step raised on the worker: the run fails with the step's exception's
    type name (``kind``) and message, as in-process it fails with the exception."""

    def __init__(self, message: str, kind: str | None) -> None:
        super().__init__(message)
        self.kind = kind


class _Stop(BaseException):
    """Leaves the loop for good (the machine changed, or continue-as-new): never an
    outcome the loop could turn into a tool's error output."""

    def __init__(self, error: ApplicationError | None = None, state: RunState | None = None):
        super().__init__()
        self.error = error
        self.state = state


# -- stand-ins the workflow's resolver holds for effects -----------------------------------


class _HookCall:
    """The awaitable a stand-in hook returns; the driver runs it as a local activity."""

    __slots__ = ("call",)

    def __init__(self, call: HookCall) -> None:
        self.call = call

    def __await__(self) -> Generator[Any, None, Any]:  # pragma: no cover - never awaited
        raise RuntimeError("a Temporal hook stand-in is performed by the workflow driver")


class _Hook:
    def __init__(self, kind: str, ref: str) -> None:
        self.kind = kind
        self.ref = ref

    def __call__(self, ctx: RunContext[Any], *args: Any) -> _HookCall:
        agent = ""
        rest: list[Any] = []
        if self.kind in ("instructions", "input_guardrail", "output_guardrail", "is_enabled"):
            agent = args[0].agent
            rest = [jsonable(a) for a in args[1:]]
        else:  # on_handoff(ctx[, value])
            rest = [jsonable(a) for a in args]
        return _HookCall(HookCall(self.kind, self.ref, agent, rest, ctx.context))


class _ToolFn:
    __slots__ = ("ref",)

    def __init__(self, ref: str) -> None:
        self.ref = ref

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise RuntimeError("a Temporal tool stand-in is performed by the workflow driver")


class _RemoteTool:
    """A function tool as the workflow sees it: its parameters model (arguments are
    validated in the workflow), a stand-in function, approvals as a local activity."""

    def __init__(self, tool: Any, ref: str) -> None:
        self._tool = tool
        self.ref = ref
        self.fn = _ToolFn(ref)
        self.params_model = tool.params_model

    def needs_approval(self, ctx: RunContext[Any], params: Any, call_id: str) -> _HookCall:
        return _HookCall(HookCall("needs_approval", self.ref, "", [params, call_id], ctx.context))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tool, name)


class _SessionCall:
    """The awaitable a stand-in session's method returns; the driver runs it as a
    local activity."""

    __slots__ = ("call",)

    def __init__(self, call: SessionCall) -> None:
        self.call = call

    def __await__(self) -> Generator[Any, None, Any]:  # pragma: no cover - never awaited
        raise RuntimeError("a Temporal session stand-in is performed by the workflow driver")


@dataclass(frozen=True)
class _Snapshot:
    items: tuple[Any, ...]
    version: int
    current_agent: str | None


class _RemoteSession:
    """The conversation as the workflow sees it: ``load`` and ``append`` (what the
    runtime's conversation wrapper calls) become activities on the worker's session."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id

    def load(self, limit: int | None = None) -> _SessionCall:
        return _SessionCall(SessionCall("load", self.session_id, limit=limit))

    def append(
        self, items: list[Any], *, operation_id: str, expected_version: int | None,
        current_agent: str | None,
    ) -> _SessionCall:
        return _SessionCall(SessionCall(
            "append", self.session_id, items=write_items(items), operation_id=operation_id,
            expected_version=expected_version, current_agent=current_agent,
        ))


class _StepRun:
    """The awaitable a stand-in step returns; the driver runs the step as an activity."""

    __slots__ = ("node", "value")

    def __init__(self, node: FlowNode, value: Any) -> None:
        self.node = node
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:  # pragma: no cover - never awaited
        raise RuntimeError("a Temporal step stand-in is performed by the workflow driver")


class _RemoteStep:
    """A flow's step as the workflow sees it: calling it makes a :class:`_StepRun`,
    which the flow loop awaits (``performed_by_driver``) and the driver performs."""

    performed_by_driver = True

    def __init__(self, node: FlowNode) -> None:
        self.node = node

    def __call__(self, *args: Any) -> _StepRun:
        return _StepRun(self.node, args[-1])  # (ctx, value) or (value,)


class _RemoteModel:
    __slots__ = ("ref",)

    def __init__(self, ref: str | None) -> None:
        self.ref = ref


def _workflow_core(machine: StateMachine) -> MachineCore:
    original = machine._core
    resolver: dict[str, object] = dict(original.resolver)
    _hooks.stand_ins(original, resolver)  # tool guardrails, gates, agent hooks
    for s in machine.ir.states:
        if s.model_ref is not None:
            resolver[s.model_ref] = _RemoteModel(s.model_ref)
        if s.instructions_fn is not None:
            resolver[s.instructions_fn] = _Hook("instructions", s.instructions_fn)
        for g in s.input_guardrails:
            resolver[g.ref] = _Hook("input_guardrail", g.ref)
        for g in s.output_guardrails:
            resolver[g.ref] = _Hook("output_guardrail", g.ref)
        for t in s.tools:
            a = t.action
            if type(a) is RunFunction:
                resolver[a.ref] = _RemoteTool(original.resolver[a.ref], a.ref)
            elif type(a) is HandoffTo and a.on_handoff is not None:
                resolver[a.on_handoff] = _Hook("on_handoff", a.on_handoff)
    if machine.ir.flow is not None:
        for n in machine.ir.flow.nodes:
            if n.kind == "step" and n.ref:
                resolver[n.ref] = _RemoteStep(n)
    return MachineCore(machine.ir, resolver, original.steps)


def _workflow_flow(machine: StateMachine, core: MachineCore) -> FlowCore | None:
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


# -- options ---------------------------------------------------------------------------------

_NOT_RETRYABLE = ["UserError", "StateError", "ModelBehaviorError", "AssertionError",
                  "ScriptExhausted", "SessionError", "SessionConflict"]


@dataclass(frozen=True)
class _Options:
    model_timeout: timedelta
    tool_timeout: timedelta
    hook_timeout: timedelta
    model_retry: RetryPolicy
    tool_retry: RetryPolicy
    continue_as_new_after: int | None
    local_models: bool = False
    local_tools: bool = False
    tracer_provider: Any = None
    run_hooks: Any = None
    """The stand-in of the worker's run hooks (``worker_for(..., hooks=)``), or None."""

    def execute(
        self, name: str, arg: Any, timeout: timedelta, retry: RetryPolicy, *, local: bool
    ) -> Any:
        """Schedule an activity (or a local one): an awaitable of its result."""
        if local:
            return workflow.execute_local_activity(
                name, arg, result_type=dict, start_to_close_timeout=timeout, retry_policy=retry
            )
        return workflow.execute_activity(
            name, arg, result_type=dict, start_to_close_timeout=timeout, retry_policy=retry
        )


def workflow_for(
    machine: StateMachine,
    *,
    model_timeout: timedelta = timedelta(minutes=5),
    tool_timeout: timedelta = timedelta(minutes=10),
    hook_timeout: timedelta = timedelta(minutes=1),
    model_retry: RetryPolicy | None = None,
    tool_retry: RetryPolicy | None = None,
    continue_as_new_after: int | None = 100,
    local_activities: bool | Literal["models"] = False,
    tracer_provider: Any = None,
    hooks: Any = None,
) -> type:
    """A Temporal workflow class that runs ``machine`` (workflow type
    ``stepswitch.<name>``), started with a :class:`RunInput`, answering a
    :class:`RunOutput`.

    ``continue_as_new_after`` model turns (or when Temporal suggests it), a run goes on
    in a fresh workflow run carrying its ``RunState``, so histories stay bounded.
    ``local_activities`` runs model calls and tools as local activities (in the worker
    that runs the workflow, without a round trip through the server per call: faster,
    for calls well under the workflow task timeout); ``"models"`` runs only the model
    calls so, and tools as activities. A local activity's result is recorded when the
    workflow task that ran it completes, so a worker that dies mid-task runs every local
    activity of that task again: harmless for a model call, a second run for a tool
    (docs/durable.md, "Local activities"). Timeouts bound one attempt of an
    activity; a worker that dies mid-activity is noticed when it runs out, and the
    activity runs again on another worker. ``tracer_provider`` (else the global one, if
    set) gets the run's workflow and agent spans. ``hooks``: the ``ss.RunHooks`` the
    worker's activities call (give the same object to ``activities_for``; ``worker_for``
    does): the workflow calls, as local activities, the methods it overrides.

    A flow runs too: its decisions in the workflow, each ``@ss.step`` as an activity
    (``tool_timeout`` and ``tool_retry``; a local one when tools are, with
    ``local_activities=True``).
    """
    if not isinstance(local_activities, bool) and local_activities != "models":
        raise UserError(
            f"local_activities={local_activities!r}: expected False (every model call and "
            'tool an activity), "models" (model calls local) or True (both local)'
        )
    options = _Options(
        model_timeout,
        tool_timeout,
        hook_timeout,
        model_retry
        or RetryPolicy(
            initial_interval=timedelta(seconds=1),
            maximum_interval=timedelta(seconds=30),
            maximum_attempts=8,
            non_retryable_error_types=_NOT_RETRYABLE,
        ),
        tool_retry or RetryPolicy(maximum_attempts=5, non_retryable_error_types=_NOT_RETRYABLE),
        continue_as_new_after,
        local_activities is not False,
        local_activities is True,
        tracer_provider,
        _run_hooks(hooks),
    )
    core = _workflow_core(machine)
    flow = _workflow_flow(machine, core)
    digest = machine_digest(machine)
    names = activity_names(machine)

    cls_name = f"StepswitchRun_{machine.name}"

    async def run(self, input: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        # the output leaves as a shallow dict, which clients decode as the RunOutput it
        # is (the annotation below): the converter would encode the dataclass through
        # dataclasses.asdict, deep-copying every item, for the same JSON
        driver: _Driver = self._driver
        return dict(vars(await driver.run(read_input(input))))

    # Temporal wants the run method defined on the class itself (it checks by name).
    # The input arrives as plain JSON and becomes a RunInput in the run's first step: a
    # value Temporal's converter cannot decode would fail every workflow task, retried
    # forever, before stepswitch code runs; read_input fails the run for good instead
    run.__qualname__ = f"{cls_name}.run"
    run.__annotations__ = {"input": Any, "return": RunOutput}
    attrs = {
        "run": workflow.run(run),
        "_setup": (core, digest, names, options, flow),
        "__module__": __name__,
    }
    cls = type(cls_name, (_RunBase,), attrs)
    cls.__doc__ = f"A durable run of workflow {machine.name!r}."
    defined: type = workflow.defn(name=workflow_name(machine), sandboxed=False)(cls)
    return defined


def _run_hooks(hooks: Any) -> Any:
    if hooks is None:
        return None
    from stepswitch.lifecycle import check_hooks

    check_hooks(hooks, "run", "workflow_for(hooks=...)")
    return _hooks.remote_run_hooks(hooks)


def read_input(raw: Any) -> RunInput:
    """The run's input as a ``RunInput`` (a client's dataclass arrives as a JSON object),
    or a non-retryable ``UserError`` failure naming what is wrong with it."""
    if isinstance(raw, RunInput):
        return raw
    problem = None
    if not isinstance(raw, dict):
        problem = f"expected a RunInput (a JSON object), got {type(raw).__name__}"
    elif "input" not in raw:
        problem = "RunInput.input is missing"
    else:
        problem = input_problem(raw["input"])
    if problem is None:
        try:
            read: RunInput = value_to_type(RunInput, raw)
            return read
        except (TypeError, ValueError, UserError) as exc:
            problem = str(exc) or type(exc).__name__
    raise ApplicationError(
        f"the run's input is not a RunInput: {problem}; start the run with "
        "RunInput(text) or RunInput([{'role': 'user', 'content': text}, ...])",
        type="UserError",
        non_retryable=True,
    )


class _RunBase:
    """The workflow's handlers; ``workflow_for`` makes one subclass per machine."""

    _setup: tuple[MachineCore, str, dict[str, str], _Options, FlowCore | None]

    def __init__(self) -> None:
        self._driver = _Driver(*type(self)._setup)

    @workflow.query
    def interruptions(self) -> list[Interruption]:
        """The calls waiting for a decision now."""
        return list(self._driver.pending.values())

    @workflow.query
    def items(self) -> list[dict[str, Any]]:
        """The run's items so far (as a saved state writes them)."""
        return write_items(self._driver.items_so_far())

    @workflow.update
    async def decide(self, decision: Decision) -> str:
        """Approve or reject one pending call."""
        return await self._driver.decide(decision)

    @decide.validator
    def _check_decision(self, decision: Decision) -> None:
        self._driver.check_decision(decision, early=True)


# -- the driver ------------------------------------------------------------------------------


_Key = tuple[tuple[str, ...], str]
"""A pending call: ``(path, call id)``, the path being its ``ToolApprovalItem.run_path``."""


def _where(path: tuple[str, ...]) -> str:
    """A call's path as messages show it: ``flow:NODE#0``, nested runs after a ``/``."""
    return "/".join(path) or "the run itself"


def _verdict(approved: bool) -> str:
    return "approved" if approved else "rejected"


def _listing(keys: list[_Key]) -> str:
    """Pending calls by id, each with its path when another shares its id."""
    ids = [k[1] for k in keys]
    return ", ".join(
        f"{k[1]} at {_where(k[0])}" if ids.count(k[1]) > 1 else k[1]
        for k in sorted(keys, key=lambda k: (k[1], k[0]))
    ) or "none"


class _Driver:
    """Performs the loop's effects with Temporal's primitives."""

    def __init__(
        self, core: MachineCore, digest: str, names: dict[str, str], options: _Options,
        flow: FlowCore | None = None,
    ) -> None:
        self.core = core
        self.flow = flow
        self.flow_run: FlowRun | None = None
        """The flow's run now (a flow only; ``top`` stays None)."""
        self.ctx: RunContext[Any] | None = None
        self.digest = digest
        self.names = names
        self.options = options
        self.stamp: str | None = None
        self.top: Run | None = None
        self.context: Any = None
        # a pending call is keyed by (path, call id), as RunState keys its decisions:
        # a flow's fan-out branches may pause on calls of the same id at once
        self.pending: dict[_Key, Interruption] = {}
        self.paused: dict[_Key, ToolApprovalItem] = {}
        """The pause's calls (decided or not), until the next pause."""
        self.decisions: dict[_Key, Decision] = {}
        self.decided: dict[_Key, bool] = {}
        self.waiting = False
        self.finished = False
        self.turns = 0
        self.trace: WorkflowTrace | None = None
        self.segment = Segment(None, lambda: None)

    def items_so_far(self) -> list[Any]:
        """The run's items now: the plain run's, or every node's of a flow."""
        if self.flow_run is not None:
            return self.flow_run.all_items()
        return self.top.items if self.top is not None else []

    def _agent(self) -> str | None:
        """The agent (or flow node) the run is at."""
        if self.flow_run is not None:
            return self.flow_run.node
        return self.top.current if self.top is not None else None

    # -- versioning -------------------------------------------------------------------------

    def _changed(self) -> ApplicationError | None:
        if self.stamp is None or self.stamp == self.digest:
            return None
        return ApplicationError(
            f"the workflow {self.core.ir.name!r} changed under this run: it started on "
            f"machine {self.stamp} and this worker runs {self.digest}. Finish running runs "
            "on workers of the old version (a task queue per version), or start them anew",
            type="MachineChanged",
            non_retryable=True,
        )

    def _check_version(self) -> None:
        changed = self._changed()
        if changed is not None and not workflow.unsafe.is_replaying():
            raise _Stop(changed)

    # -- decisions --------------------------------------------------------------------------

    def check_decision(self, decision: Decision, *, early: bool = False) -> _Key | None:
        """Refuse a decision the run cannot take; else the call it decides (``early``:
        the validator, which may run before the run has come back to its pause; it
        checks what it can, and names no call). A changed machine is not refused here:
        the accepted update fails the run, loudly."""
        call_id = decision.call_id
        path = None if decision.path is None else tuple(decision.path)
        if early and not self.waiting:
            done = [k for k in self.decided if k[1] == call_id and path in (None, k[0])]
            if done:
                raise self._already(done[-1])
            return None
        if path is not None:
            key: _Key | None = (path, call_id)
        else:
            named = [k for k in self.paused if k[1] == call_id]
            if len(named) > 1:
                calls = ", ".join(
                    f"{self.paused[k].name} at {_where(k[0])}"
                    + (f" ({_verdict(self.decided[k])})" if k in self.decided else "")
                    for k in named
                )
                choices = " or ".join(repr(list(k[0])) for k in named)
                raise ApplicationError(
                    f"call id {call_id!r} names {len(named)} pending calls ({calls}); say "
                    f"which with the decision's path: {choices}",
                    type="AmbiguousCall",
                )
            key = named[0] if named else next(
                (k for k in reversed(self.decided) if k[1] == call_id), None)
        if key is not None and key in self.decided:
            raise self._already(key)
        if key is None or key not in self.pending:
            named_as = call_id if path is None else f"{call_id} at {_where(path)}"
            raise ApplicationError(
                f"no approval is pending for call id {named_as!r} "
                f"(pending: {_listing(list(self.pending))})",
                type="UnknownCall",
            )
        return key

    def _at(self, key: _Key) -> str:
        """`` at PATH`` when another call of this pause shares ``key``'s id, else ``""``:
        messages name a call by its id alone unless that is ambiguous."""
        shared = any(k[1] == key[1] and k != key for k in self.paused)
        return f" at {_where(key[0])}" if shared else ""

    def _already(self, key: _Key) -> ApplicationError:
        return ApplicationError(
            f"call {key[1]!r}{self._at(key)} was already decided ({_verdict(self.decided[key])}); "
            "a decision cannot be changed",
            type="AlreadyDecided",
        )

    async def decide(self, decision: Decision) -> str:
        # An update can arrive in the same activation that resumes the run to its
        # pause (a new worker replaying): wait until the run is paused or over.
        await workflow.wait_condition(lambda: self.waiting or self.finished)
        changed = self._changed()
        if changed is not None:
            raise changed
        if self.finished:
            raise ApplicationError(
                f"the run has ended; no approval is pending for call id {decision.call_id!r}",
                type="UnknownCall",
            )
        key = self.check_decision(decision)  # raises with the reason
        assert key is not None
        self.decisions[key] = decision
        self.decided[key] = decision.approve
        item = self.pending.pop(key)
        return f"{_verdict(decision.approve)} {item.name} ({item.call_id}){self._at(key)}"

    # -- the run ----------------------------------------------------------------------------

    async def run(self, input: RunInput) -> RunOutput:
        workflow_id = workflow.info().workflow_id
        if input.session_id is not None and input.session_id != workflow_id:
            raise ApplicationError(
                f"RunInput.session_id {input.session_id!r} is not this workflow's id "
                f"{workflow_id!r}: a conversation on Temporal is one workflow id, so start "
                "each of its runs with id=<conversation id> and the same session_id",
                type="UserError",
                non_retryable=True,
            )
        self.context = input.context
        tracer = tracer_for(self.options.tracer_provider)
        if tracer is not None:
            self.trace = WorkflowTrace(
                tracer, self.core.ir.name, workflow_id, input.traceparent
            )
            self.segment = Segment(self.trace, self.trace.root_context)
        if input.digest is not None:
            self.stamp = input.digest
        else:
            self.stamp = await workflow.execute_local_activity(
                self.names["stamp"],
                result_type=str,
                start_to_close_timeout=self.options.hook_timeout,
            )
        try:
            self._check_version()
            result = await self._run(input)
        except _Stop as stop:
            if stop.error is not None:
                raise stop.error from None
            assert stop.state is not None and self.ctx is not None
            u = self.ctx.usage
            traceparent = input.traceparent
            if self.trace is not None:
                if self.trace.root is not None:
                    traceparent = traceparent_of(self.trace.root)
                self.segment.end()
                self.trace.end(self._agent())
            workflow.continue_as_new(
                RunInput(
                    input=input.input,
                    session_id=input.session_id,
                    context=self.context,
                    max_turns=stop.state.max_turns,
                    state=stop.state.to_json(),
                    digest=self.stamp,
                    usage=[u.requests, u.input_tokens, u.output_tokens, u.total_tokens],
                    runs=input.runs + 1,
                    traceparent=traceparent,
                )
            )
        except (StepswitchError, StepFailure, ToolFailure) as exc:
            # ToolFailure here: a hook of the user's raised on the worker (a tool's own
            # failure is its error output); the run ends with its type, keeping the run
            if self.trace is not None:
                self.segment.end(exc=exc)
                self.trace.end(None, exc)
            raise self._run_failed(exc) from None
        finally:
            self.finished = True
        if self.trace is not None:
            self.segment.end()
            self.trace.end(result.last_agent)
        u = result.usage
        return RunOutput(
            final_output=jsonable(result.final_output),
            last_agent=result.last_agent,
            items=write_items(result.new_items),
            digest=self.digest,
            usage=[u.requests, u.input_tokens, u.output_tokens, u.total_tokens],
            runs=input.runs,
        )

    def _run_failed(self, exc: StepswitchError | StepFailure | ToolFailure) -> ApplicationError:
        """The run's error as the workflow's failure, carrying the run so far (a step's
        failure has the type name of the step's exception)."""
        details: list[Any] = []
        data = getattr(exc, "run_data", None)
        if data is not None:
            try:
                details = [data.to_state().to_json()]
            except StepswitchError:
                details = [write_items(data.new_items)]
        kind = (exc.kind if isinstance(exc, StepFailure | ToolFailure)
                else type(exc).__name__)
        return ApplicationError(str(exc), *details, type=kind, non_retryable=True)

    async def _run(self, input: RunInput) -> RunResult:
        ctx: RunContext[Any] = RunContext(input.context, Usage(*(input.usage or [])))
        self.ctx = ctx
        hooks = self.options.run_hooks
        config = RunConfig() if hooks is None else RunConfig(hooks=hooks)
        if self.flow is not None:
            return await self._run_flow(self.flow, input, ctx, config)
        ir = self.core.ir
        session = None if input.session_id is None else _RemoteSession(input.session_id)

        def make_loop(run: Run) -> Generator[Any, Any, Any]:
            run.model = _RemoteModel(None)
            self.top = run
            return run_loop(self.core, run, config)

        def linked(run: Run, state: RunState) -> Generator[Any, Any, Any]:
            """Go on with a run whose state was taken in this conversation. No claim, as
            a resume elsewhere makes: the workflow id holds the conversation, and its
            next append still expects the version the state pinned."""
            if session is None:
                return make_loop(run)
            pin = state.session
            if pin is None:
                raise ApplicationError("a state without its session pin", non_retryable=True)
            link = conversation.SessionLink(
                session, pin.session_id, pin.version, pin.synced, pin.input_saved
            )
            run.session = link
            return conversation._synced(make_loop(run), run, link, config)

        if input.state is not None:
            state = RunState.from_json(input.state)
            budget = input.max_turns if input.max_turns is not None else state.max_turns
            run = Run.resume(self.core, state, max_turns=budget, ctx=ctx)
            loop = linked(run, state)
        else:
            budget = input.max_turns if input.max_turns is not None else ir.max_turns
            # the run id names the session's appends (<run id>:t<turn>): it must be the
            # same when the run is replayed, or a retried append would not be a no-op
            run_id = workflow.info().run_id

            def make_run(agent: str) -> Run:
                made = Run.start(ir.name, agent, input.input, max_turns=budget, ctx=ctx)
                made.known_id = run_id
                return made

            if session is not None:
                loop = conversation.start(self.core, session, make_run, make_loop, config, None)
            else:
                try:
                    loop = make_loop(make_run(ir.entry))
                except UserError as exc:
                    raise ApplicationError(
                        str(exc), type="UserError", non_retryable=True
                    ) from None
        result: RunResult = await self._drive(loop, top=True, segment=self.segment)
        while result.interruptions:
            state = await self._decisions(result)
            run = Run.resume(self.core, state, max_turns=state.max_turns, ctx=ctx)
            result = await self._drive(linked(run, state), top=True, segment=self.segment)
        return result

    async def _run_flow(
        self, fc: FlowCore, input: RunInput, ctx: RunContext[Any], config: RunConfig
    ) -> RunResult:
        """A flow: the flow loop drives its nodes; each pause waits for decisions and
        resumes the flow's state, as ``machine.run(state)`` does in-process."""
        name = self.core.ir.name
        if input.session_id is not None:
            raise ApplicationError(
                f"workflow {name!r} is a flow: session_id is for handoff workflows (a flow "
                "starts at its first node each run); start it without one",
                type="UserError", non_retryable=True,
            )
        model = _RemoteModel(None)
        emit = self.trace is not None  # node moves, for the spans (else never sent)
        try:
            if input.state is not None:
                state = RunState.from_json(input.state)
                budget = input.max_turns if input.max_turns is not None else state.max_turns
                fr = flow_run(fc, state, model=model, ctx=ctx, max_turns=budget, emit=emit)
            else:
                budget = input.max_turns if input.max_turns is not None else self.core.ir.max_turns
                fr = flow_run(fc, input.input, model=model, ctx=ctx, max_turns=budget,
                              emit=emit)
        except StepswitchError as exc:
            raise ApplicationError(
                str(exc), type=type(exc).__name__, non_retryable=True
            ) from None
        self.flow_run = fr
        result: RunResult = await self._drive(
            flow_loop(fc, fr, config), top=True, segment=self.segment
        )
        while result.interruptions:
            state = await self._decisions(result)
            fr = flow_run(fc, state, model=model, ctx=ctx, max_turns=state.max_turns,
                          emit=emit)
            self.flow_run = fr
            result = await self._drive(flow_loop(fc, fr, config), top=True,
                                       segment=self.segment)
        return result

    async def _decisions(self, result: RunResult) -> RunState:
        """Wait until every pending approval of ``result`` is decided; its state with
        the decisions taken."""
        if self.trace is not None:
            self.segment.end(result.interruptions)
            self.trace.end(result.last_agent)
        state = result.to_state()
        self.paused = {(i.run_path, i.call_id): i for i in result.interruptions}
        self.pending = {
            key: Interruption(i.call_id, i.name, i.arguments, i.agent, list(i.run_path))
            for key, i in self.paused.items()
        }
        for key in self.pending:
            # a new call under a decided call's key (a flow's loop back to a node whose
            # model numbers calls per response, call_0 each round) waits afresh
            self.decided.pop(key, None)
        self.waiting = True
        await workflow.wait_condition(
            lambda: not self.pending
            or (self._changed() is not None and not workflow.unsafe.is_replaying())
        )
        self.waiting = False
        self._check_version()
        for key, decision in self.decisions.items():
            item = self.paused[key]  # the item: its path says which call, not its id alone
            if decision.approve:
                state.approve(item)
            else:
                state.reject(item, decision.message)
        if self.trace is not None:
            # where it resumed, as in-process: a flow's turns are its nodes' model calls
            turn = state.calls_made if state.flow is not None else state.current_turn
            self.trace.resume(
                [(key[1], d.approve) for key, d in self.decisions.items()], turn)
            self.segment = Segment(self.trace, self.trace.root_context)
        self.decisions = {}
        return state

    async def _drive(
        self, loop: Generator[Any, Any, Any], *, top: bool, segment: Segment
    ) -> Any:
        send: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = loop.throw(error) if error is not None else loop.send(send)
            except StopIteration as stop:
                return stop.value
            send, error = None, None
            kind = type(effect)
            if kind is Emit:
                if type(effect.event) is FlowNodeStreamEvent:
                    # a flow moved to a node: the last agent node's span ends (the move
                    # is no handoff); the next agent node opens its own
                    segment.end()
                continue
            try:
                if kind is CallModel:
                    send = await self._model(effect, top, segment)
                elif kind is RunJobs:
                    send = await self._jobs(effect, segment)
                elif kind is Await:
                    awaitable = effect.awaitable
                    if type(awaitable) is _HookCall:
                        send = await self._hook(awaitable.call)
                    elif type(awaitable) is _StepRun:
                        send = await self._step(awaitable, segment)
                    elif type(awaitable) is _SessionCall:
                        send = await self._session(awaitable.call)
                    else:  # a pure async hook: it runs in the workflow
                        send = await awaitable
                else:
                    raise TypeError(f"not an effect: {effect!r}")
            except Exception as exc:
                error = exc

    async def _model(self, effect: CallModel, top: bool, segment: Segment) -> Any:
        self._check_version()
        if top and not effect.alongside:
            self._maybe_continue()
        self.turns += 1
        marker: Any = effect.model
        ref = marker.ref if type(marker) is _RemoteModel else None
        call = ModelCall(
            write_request(effect.request), ref, segment.traceparent(effect.request.agent),
            None if self.trace is None else self.trace.conversation_id,
        )
        task = asyncio.ensure_future(
            self.options.execute(
                self.names["model"], write_call(call), self.options.model_timeout,
                self.options.model_retry, local=self.options.local_models,
            )
        )
        outcomes: list[Any] = []
        for thunk in effect.alongside:
            try:
                hook = thunk()
                outcomes.append(Ok(await self._hook(hook.call)))
            except Exception as exc:
                outcomes.append(Err(exc))
        try:
            raw = await task
        except ActivityError as exc:
            raise _activity_error(exc, "the model call") from None
        response = read_response(raw)
        return (response, tuple(outcomes)) if effect.alongside else response

    def _maybe_continue(self) -> None:
        """At a turn's start (the turn already counted, nothing of it done), hand the run
        to a fresh workflow run when the history is long. A flow goes on at that turn of
        its agent node (not inside a fan-out: its branches run at once)."""
        limit = self.options.continue_as_new_after
        info = workflow.info()
        if self.turns == 0 or not (
            (limit is not None and self.turns >= limit) or info.is_continue_as_new_suggested()
        ):
            return
        if self.flow_run is not None:
            assert self.flow is not None
            state = self.flow_run.mid_turn(self.flow)
            if state is None:
                return
            raise _Stop(state=state)
        run = self.top
        if run is None:
            return
        state = run.snapshot(pending=None, status="stopped")
        state.current_turn = run.turn - 1
        raise _Stop(state=state)

    async def _jobs(self, effect: RunJobs, segment: Segment) -> tuple[Any, ...]:
        sem = asyncio.Semaphore(effect.limit) if effect.limit else None

        async def one(job: Any) -> Any:
            if sem is None:
                return await self._job(job, segment)
            async with sem:
                return await self._job(job, segment)

        if len(effect.jobs) == 1:
            return (await self._job(effect.jobs[0], segment),)
        return tuple(await asyncio.gather(*(one(j) for j in effect.jobs)))

    async def _job(self, job: Any, segment: Segment) -> Any:
        if type(job) is NestedJob:
            span = segment.tool(job.name, job.call_id) if job.name else None
            nested = Segment(segment.trace, segment.context if span is None else (
                lambda: segment.trace.api.set_span_in_context(span)  # type: ignore[union-attr]
            ))
            try:
                value = await self._drive(job.loop, top=False, segment=nested)
            except Exception as exc:
                nested.end(exc=exc)
                self._end_span(span, exc)
                return Err(exc)
            nested.end(getattr(value, "interruptions", ()))
            self._end_span(span, None)
            return Ok(value)
        assert type(job) is CallJob
        self._check_version()
        fn = job.fn
        if type(fn) is not _ToolFn:
            raise TypeError(f"the workflow cannot run {fn!r} itself")
        # a tool runs under its agent's span; the first tool of a resumed run comes
        # before any model call of its segment
        agent = segment.agent or self._agent()
        args = ToolCall(
            jsonable(job.kwargs), self.context, job.call_id, workflow.info().workflow_id,
            job.name, segment.traceparent(agent) if agent else None,
        )
        try:
            raw = await self.options.execute(
                fn.ref, write_call(args), self.options.tool_timeout, self.options.tool_retry,
                local=self.options.local_tools,
            )
        except ActivityError as exc:
            return Err(_activity_error(exc, f"tool {fn.ref}"))
        if "value" in raw:
            return Ok(raw["value"])
        return Ok(raw["text"])

    def _end_span(self, span: Any, exc: BaseException | None) -> None:
        trace = self.trace
        if span is None or trace is None:
            return

        def close() -> None:
            if exc is not None:
                span_error(trace.api, span, exc)
            span.end()

        trace.guard(close)

    async def _step(self, run: _StepRun, segment: Segment) -> Any:
        """A flow's step as an activity: its input out as JSON, its output back in its
        declared type (and, for a step that takes the run context, the context it left)."""
        self._check_version()
        node = run.node
        fc = self.flow
        assert fc is not None and node.ref is not None
        call = StepCall(node.name, jsonable(run.value),
                        self.context if node.takes_context else None,
                        workflow.info().workflow_id, segment.step_parent())
        try:
            raw = await self.options.execute(
                node.ref, write_call(call), self.options.tool_timeout, self.options.tool_retry,
                local=self.options.local_tools,
            )
        except ActivityError as exc:
            error = _activity_error(exc, f"step {node.ref}")
            if type(error) is ToolFailure:
                raise StepFailure(str(error), error.kind) from None
            raise error from None
        if "context" in raw:
            self.context = raw["context"]
            if self.ctx is not None:
                self.ctx.context = self.context
        try:
            return fc.output_adapter(node).validate_python(raw["value"])
        except ValueError as exc:
            raise UserError(
                f"flow step {node.name!r} ({node.ref}) returned a value that does not fit "
                f"its output type: {misfit(exc)}"
            ) from None

    async def _session(self, call: SessionCall) -> Any:
        """A session's load or append, as a local activity. Retrying an append is safe:
        the same operation id with the same items is a no-op in every session store."""
        self._check_version()
        try:
            value = await workflow.execute_local_activity(
                self.names["session"],
                write_call(call),
                result_type=dict,
                start_to_close_timeout=self.options.hook_timeout,
                retry_policy=RetryPolicy(
                    maximum_attempts=5, non_retryable_error_types=_NOT_RETRYABLE
                ),
            )
        except ActivityError as exc:
            raise _activity_error(exc, f"session {call.session_id!r} ({call.op})") from None
        if call.op == "load":
            return _Snapshot(
                tuple(read_items(value["items"])), value["version"], value["current_agent"]
            )
        return value["version"]

    async def _hook(self, call: HookCall) -> Any:
        self._check_version()
        try:
            value = await workflow.execute_local_activity(
                self.names["hook"],
                write_call(call),
                start_to_close_timeout=self.options.hook_timeout,
                retry_policy=RetryPolicy(
                    maximum_attempts=3, non_retryable_error_types=_NOT_RETRYABLE
                ),
            )
        except ActivityError as exc:
            raise _activity_error(exc, f"hook {call.ref}") from None
        except ApplicationError as exc:  # a local activity's failure arrives unwrapped
            cls = error_class(exc.type)
            raise (cls(exc.message) if cls is not None
                   else ToolFailure(exc.message, exc.type)) from None
        if call.kind in ("input_guardrail", "output_guardrail"):
            return _Verdict(value["output_info"], value["tripwire_triggered"])
        if call.kind in ("tool_input_guardrail", "tool_output_guardrail"):
            return _hooks.verdict(value)
        return value


@dataclass
class _Verdict:
    output_info: Any
    tripwire_triggered: bool


def _activity_error(exc: ActivityError, what: str) -> Exception:
    cause = exc.cause
    if isinstance(cause, ApplicationError):
        cls = error_class(cause.type)
        if cls is not None:
            return cls(cause.message)
        return ToolFailure(cause.message, cause.type)
    if isinstance(cause, TimeoutError):
        return ModelProviderError(f"{what} timed out on every attempt ({cause.message})")
    return ModelProviderError(f"{what} failed: {cause or exc}")


