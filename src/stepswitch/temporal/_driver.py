"""The workflow's driver: it drives the run loop in the workflow and performs each
effect with Temporal's primitives.

:class:`Driver` steps the loop generator (the in-process drivers' own, through
:class:`~stepswitch.runtime.relay.Relay`): a model call, a function tool or a flow's
step becomes an activity, a hook that may do I/O and a session's load or append a local
activity, a nested run (an agent tool) is driven here too. It keeps the run's version
stamp (a machine changed under a running run fails it), hands a long run to a fresh
workflow run (continue-as-new), and waits at a pause for the ``decide`` update
(:mod:`~stepswitch.temporal._approvals`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from stepswitch._dataclass import dataclass
from stepswitch.context import RunContext, Usage
from stepswitch.errors import StepswitchError, UserError
from stepswitch.runtime import conversation
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import Await, CallJob, CallModel, Emit, Err, NestedJob, Ok, RunJobs
from stepswitch.runtime.events import FlowNodeStreamEvent
from stepswitch.runtime.flow import FlowCore, FlowRun, flow_loop, flow_run, misfit
from stepswitch.runtime.loop import run_loop
from stepswitch.runtime.relay import Relay
from stepswitch.runtime.result import RunResult
from stepswitch.runtime.run import Run
from stepswitch.runtime.state import RunState
from stepswitch.runtime.tracing import tracer_for
from stepswitch.temporal import _hooks
from stepswitch.temporal._approvals import Approvals
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
from stepswitch.temporal._failures import (
    NOT_RETRYABLE,
    StepFailure,
    StopRun,
    ToolFailure,
    activity_error,
)
from stepswitch.temporal._messages import Decision, RunInput, RunOutput
from stepswitch.temporal._standins import (
    HookRun,
    RemoteModel,
    RemoteSession,
    SessionRun,
    Snapshot,
    StepRun,
    ToolFn,
    Verdict,
)
from stepswitch.temporal._tracing import Segment, WorkflowTrace, traceparent_of
from stepswitch.temporal._tracing import error as span_error

__all__ = ["Driver", "Options"]


@dataclass(frozen=True)
class Options:
    """How the workflow schedules its activities (``workflow_for``'s arguments)."""

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


class Driver:
    """Performs the loop's effects with Temporal's primitives."""

    def __init__(
        self, core: MachineCore, digest: str, names: dict[str, str], options: Options,
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
        self.approvals = Approvals()
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
            raise StopRun(changed)

    # -- decisions --------------------------------------------------------------------------

    async def decide(self, decision: Decision) -> str:
        """The ``decide`` update: take one decision of the run's pause."""
        # An update can arrive in the same activation that resumes the run to its
        # pause (a new worker replaying): wait until the run is paused or over.
        await workflow.wait_condition(lambda: self.approvals.waiting or self.finished)
        changed = self._changed()
        if changed is not None:
            raise changed
        if self.finished:
            raise ApplicationError(
                f"the run has ended; no approval is pending for call id {decision.call_id!r}",
                type="UnknownCall",
            )
        return self.approvals.record(decision)

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
        except StopRun as stop:
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
        except (StepswitchError, StepFailure) as exc:
            # a ToolFailure among them: a hook of the user's raised on the worker (a tool's
            # own failure is its error output); the run ends with its type, keeping the run
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

    def _run_failed(self, exc: StepswitchError | StepFailure) -> ApplicationError:
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
        session = None if input.session_id is None else RemoteSession(input.session_id)

        def make_loop(run: Run) -> Generator[Any, Any, Any]:
            run.model = RemoteModel(None)
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
        model = RemoteModel(None)
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
        approvals = self.approvals
        approvals.pause(result)
        approvals.waiting = True
        await workflow.wait_condition(
            lambda: not approvals.pending
            or (self._changed() is not None and not workflow.unsafe.is_replaying())
        )
        approvals.waiting = False
        self._check_version()
        taken = approvals.apply(state)
        if self.trace is not None:
            # where it resumed, as in-process: a flow's turns are its nodes' model calls
            turn = state.calls_made if state.flow is not None else state.current_turn
            self.trace.resume(taken, turn)
            self.segment = Segment(self.trace, self.trace.root_context)
        return state

    async def _drive(
        self, loop: Generator[Any, Any, Any], *, top: bool, segment: Segment
    ) -> Any:
        with Relay(loop) as relay:
            send: Any = None
            error: BaseException | None = None
            while (effect := relay.step(send, error)) is not None:
                send, error = None, None
                kind = type(effect)
                if kind is Emit:
                    if type(effect.event) is FlowNodeStreamEvent:
                        # a flow moved to a node: the last agent node's span ends (the
                        # move is no handoff); the next agent node opens its own
                        segment.end()
                    continue
                try:
                    if kind is CallModel:
                        send = await self._model(effect, top, segment)
                    elif kind is RunJobs:
                        send = await self._jobs(effect, segment)
                    elif kind is Await:
                        awaitable = effect.awaitable
                        if type(awaitable) is HookRun:
                            send = await self._hook(awaitable.call)
                        elif type(awaitable) is StepRun:
                            send = await self._step(awaitable, segment)
                        elif type(awaitable) is SessionRun:
                            send = await self._session(awaitable.call)
                        else:  # a pure async hook: it runs in the workflow
                            send = await awaitable
                    else:
                        raise TypeError(f"not an effect: {effect!r}")
                except Exception as exc:
                    error = exc
            return relay.result

    async def _model(self, effect: CallModel, top: bool, segment: Segment) -> Any:
        self._check_version()
        if top and not effect.alongside:
            self._maybe_continue()
        self.turns += 1
        marker: Any = effect.model
        ref = marker.ref if type(marker) is RemoteModel else None
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
            raise activity_error(exc, "the model call") from None
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
            raise StopRun(state=state)
        run = self.top
        if run is None:
            return
        state = run.snapshot(pending=None, status="stopped")
        state.current_turn = run.turn - 1
        raise StopRun(state=state)

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
        if type(fn) is not ToolFn:
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
            return Err(activity_error(exc, f"tool {fn.ref}"))
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

    async def _step(self, run: StepRun, segment: Segment) -> Any:
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
            error = activity_error(exc, f"step {node.ref}")
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
                    maximum_attempts=5, non_retryable_error_types=NOT_RETRYABLE
                ),
            )
        except ActivityError as exc:
            raise activity_error(exc, f"session {call.session_id!r} ({call.op})") from None
        if call.op == "load":
            return Snapshot(
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
                    maximum_attempts=3, non_retryable_error_types=NOT_RETRYABLE
                ),
            )
        except ActivityError as exc:
            raise activity_error(exc, f"hook {call.ref}") from None
        except ApplicationError as exc:  # a local activity's failure arrives unwrapped
            cls = error_class(exc.type)
            raise (cls(exc.message) if cls is not None
                   else ToolFailure(exc.message, exc.type)) from None
        if call.kind in ("input_guardrail", "output_guardrail"):
            return Verdict(value["output_info"], value["tripwire_triggered"])
        if call.kind in ("tool_input_guardrail", "tool_output_guardrail"):
            return _hooks.verdict(value)
        return value

