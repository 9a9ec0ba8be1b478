"""``StateMachine``: a compiled workflow, and the three thin drivers of its one loop.

``await machine.run(...)`` drives the loop with :func:`~.pump.drive`;
``machine.run_sync(...)`` runs that on a per-thread event loop; and
``machine.run_streamed(...)`` returns a :class:`RunResultStreaming` whose
``stream_events()`` drives the same loop with the same :class:`~.pump.Pump`, asking
it for stream events (the loop's ``Emit`` effects and a streaming model's raw
events). No behaviour lives in a driver: they differ only in whether events surface.

asyncio and the pump load with the first run, not with this module: a generated
runner's import stays free of asyncio and what it drags in (ssl, sockets, logging,
subprocess); a server calling ``await machine.run(...)`` has asyncio loaded already.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from stepswitch.context import RunContext, Usage
from stepswitch.errors import StateError, UserError
from stepswitch.ir import MachineIR
from stepswitch.runtime import _lazy
from stepswitch.runtime.config import RunConfig, check_max_turns
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.events import AgentUpdatedStreamEvent, StreamEvent
from stepswitch.runtime.items import RunItem, ToolApprovalItem
from stepswitch.runtime.loop import Loop, run_loop
from stepswitch.runtime.model import InputItem, Model, ModelResponse
from stepswitch.runtime.result import GuardrailResult, RunResult
from stepswitch.runtime.run import Run
from stepswitch.runtime.state import RunState
from stepswitch.runtime.steps import StepFunction

if TYPE_CHECKING:
    import asyncio

    from stepswitch.runtime.flow import FlowCore, FlowStep

__all__ = ["RunResultStreaming", "StateMachine"]

T = TypeVar("T")


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()
_DEFAULT_CONFIG = RunConfig()


class StateMachine:
    """A compiled workflow: the IR (data) and the objects it names, ready to run.

    ``resolver`` maps every import path in the IR to its live object. ``steps``
    optionally gives explicit step functions per agent (generated modules do);
    agents without one use the generic interpreter of the IR's step tables.
    """

    def __init__(
        self,
        ir: MachineIR,
        resolver: Mapping[str, object],
        *,
        steps: Mapping[str, StepFunction] | None = None,
        flow_steps: Mapping[str, FlowStep] | None = None,
    ) -> None:
        self.ir = ir
        declared = resolver.get(ir.context_ref) if ir.context_ref is not None else None
        self._context_class = declared if isinstance(declared, type) else None
        """The class ``Workflow(context_type=)`` declares: a run's ``context`` must be one."""
        self._core = MachineCore(ir, resolver, steps)
        self._flow: FlowCore | None = None
        if ir.flow is not None:  # the flow runtime loads for a flow only
            from stepswitch.runtime.flow import FlowCore

            self._flow = FlowCore(self._core, flow_steps)

    @property
    def name(self) -> str:
        return self.ir.name

    @property
    def entry(self) -> str:
        return self.ir.entry

    @property
    def agents(self) -> tuple[str, ...]:
        return tuple(s.agent for s in self.ir.states)

    def __repr__(self) -> str:
        return f"StateMachine(name={self.ir.name!r}, states={len(self.ir.states)})"

    def _start(
        self,
        input: str | list[Any] | RunState,
        model: Model | None,
        context: Any,
        max_turns: int | None,
        run_config: RunConfig | None,
        *,
        emit: bool = False,
        session: Any = None,
        starting_agent: str | None = None,
        hooks: Any = None,
    ) -> Loop:
        if isinstance(input, RunState) and input.resumed:
            raise _resumed_twice()
        if hooks is not None:
            run_config = _with_hooks(run_config, hooks)
        loop = self._begin(input, model, context, max_turns, run_config, emit=emit,
                           session=session, starting_agent=starting_agent)
        if isinstance(input, RunState):
            # taken: a second resume of this object would run its approved calls again
            input.resumed = True
        return loop

    def _begin(
        self,
        input: str | list[Any] | RunState,
        model: Model | None,
        context: Any,
        max_turns: int | None,
        run_config: RunConfig | None,
        *,
        emit: bool = False,
        session: Any = None,
        starting_agent: str | None = None,
    ) -> Loop:
        if run_config is not None and not isinstance(run_config, RunConfig):
            raise UserError(f"run_config: expected a RunConfig, got {type(run_config).__name__}")
        config = run_config or _DEFAULT_CONFIG
        if max_turns is not _UNSET and max_turns is not None:
            check_max_turns(max_turns, "max_turns")
        if model is not None and not hasattr(model, "get_response"):
            raise UserError(
                f"model: expected an object with async get_response(request), got "
                f"{type(model).__name__}"
            )
        if context is None and self.ir.context_type is not None:
            # the CLI builds context_type() itself; here a missing context would surface
            # as an AttributeError deep in the user's own step or tool
            name = self.ir.context_type
            raise UserError(
                f"workflow {self.ir.name!r} declares context_type={name}; pass "
                f"context={name}(...)"
            )
        if context is not None and self._context_class is not None:
            _check_context(self.ir.name, self._context_class, context)
        # a resumed run's usage goes on from the saved run's, as the SDK's does
        ctx: RunContext[Any] = RunContext(
            context, Usage(*input.usage) if isinstance(input, RunState) else Usage())
        if self._flow is not None:
            tracing = _lazy.tracing
            flow = _lazy.flow
            if session is not None or starting_agent is not None:
                raise UserError(
                    f"workflow {self.ir.name!r} is a flow: session= and starting_agent= are "
                    "for handoff workflows (a flow starts at its first node)"
                )
            if max_turns is _UNSET:
                max_turns = input.max_turns if isinstance(input, RunState) else self.ir.max_turns
            tracer = _tracer(config.tracer_provider)
            # a traced flow announces its nodes (Emit), which the tracer turns into spans;
            # drivers that do not stream drop those effects as they drop every Emit
            fr = flow.flow_run(self._flow, input, model=model, ctx=ctx, max_turns=max_turns,
                          emit=emit or tracer is not None)
            loop: Loop = flow.flow_loop(self._flow, fr, config)
            if tracer is not None:
                # a resumed flow continues the trace its state carries
                loop, fr.trace_context = tracing.start(
                    tracer, loop, workflow=self.ir.name, agent=None,
                    content=config.trace_content, conversation_id=None,
                    saved_context=fr.trace_context,
                    # a flow's decisions are in its paused node runs
                    decisions=input.all_decisions() if isinstance(input, RunState) else (),
                    # where it resumed: the model calls its nodes had made (a flow's
                    # turns are its nodes' turns, one budget across them)
                    turn=fr.calls.n, resumed=isinstance(input, RunState),
                )
            return loop

        if starting_agent is not None and starting_agent not in self._core.states:
            raise UserError(
                f"starting_agent {starting_agent!r} is not an agent of workflow "
                f"{self.ir.name!r} (agents: {', '.join(self.agents)})"
            )
        if session is not None:  # sessions load for a run that has one
            conversation = _lazy.conversation
            conversation_id = conversation.check_session(session)
        else:
            conversation_id = None

        def make_loop(run: Run) -> Loop:
            run.model = model
            run.emit = emit
            if config.mcp_drift != "error":  # read by the run's MCP tool calls
                _lazy.servers.begin_run(run.run_id, config.mcp_drift)
            loop = run_loop(self._core, run, config)
            tracer = _tracer(config.tracer_provider)
            if tracer is not None:
                loop, run.trace_context = _lazy.tracing.start(
                    tracer, loop, workflow=self.ir.name, agent=run.current,
                    content=config.trace_content, conversation_id=conversation_id,
                    saved_context=run.trace_context,
                    decisions=input.all_decisions() if isinstance(input, RunState) else (),
                    turn=run.turn, resumed=isinstance(input, RunState),
                )
            return loop

        if isinstance(input, RunState):
            if starting_agent is not None:
                raise UserError(
                    "starting_agent= starts a new run; a resumed state continues at its "
                    f"own agent ({input.current_agent!r})"
                )
            budget = input.max_turns if max_turns is _UNSET else max_turns
            run = Run.resume(self._core, input.copy(), max_turns=budget, ctx=ctx)
            if session is not None:
                resumed: Loop = conversation.resume(run, input, session, make_loop, config)
                return resumed
            if input.session is not None:
                raise UserError(
                    f"this state was taken with session {input.session.session_id!r}: pass "
                    "session= to resume it, so its turns are appended there"
                )
            return make_loop(run)
        budget = self.ir.max_turns if max_turns is _UNSET else max_turns
        name = self.ir.name

        def make_run(agent: str) -> Run:
            return Run.start(name, agent, input, max_turns=budget, ctx=ctx)

        if session is not None:
            started: Loop = conversation.start(
                self._core, session, make_run, make_loop, config, starting_agent
            )
            return started
        return make_loop(make_run(starting_agent or self.ir.entry))

    async def run(
        self,
        input: str | list[Any] | RunState,
        *,
        model: Model | None = None,
        context: Any = None,
        max_turns: int | None = _UNSET,
        run_config: RunConfig | None = None,
        session: Any = None,
        starting_agent: str | None = None,
        hooks: Any = None,
    ) -> RunResult:
        """Run (or resume, given a ``RunState``) to a final output or an interruption.

        ``max_turns`` defaults to the workflow's for a new run and to the state's when
        resuming; given explicitly, it replaces either. ``starting_agent`` starts a new
        run at that agent instead of the entry. ``session`` (``stepswitch.sessions``):
        the run reads the conversation, continues at its current agent (unless
        ``starting_agent``), and appends each settled turn; resuming a state taken
        with a session needs the same session. ``hooks``: an ``ss.RunHooks`` told of
        every agent of the run, nested agent-tool runs included.
        """
        loop = self._start(
            input, model, context, max_turns, run_config, session=session,
            starting_agent=starting_agent, hooks=hooks,
        )
        timeout = run_config.timeout if run_config is not None else None
        # the pump (and asyncio, loaded already: we run on it) on the first run
        result: RunResult = await _lazy.pump.drive(loop, timeout=timeout)
        if run_config is not None and run_config.record is not None:  # replay's recording
            _lazy.record.write_record(run_config.record, result, self.ir.name)
        return result

    def run_sync(
        self,
        input: str | list[Any] | RunState,
        *,
        model: Model | None = None,
        context: Any = None,
        max_turns: int | None = _UNSET,
        run_config: RunConfig | None = None,
        session: Any = None,
        starting_agent: str | None = None,
        hooks: Any = None,
    ) -> RunResult:
        """``run`` for code without an event loop (raises inside a running loop)."""
        try:  # asyncio loads here, with the first run_sync, not with the runner
            _lazy.asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                "run_sync() cannot be called when an event loop is already running; "
                "use `await machine.run(...)` instead"
            )
        loop = _thread_loop()
        return loop.run_until_complete(
            self.run(input, model=model, context=context, max_turns=max_turns,
                     run_config=run_config, session=session, starting_agent=starting_agent,
                     hooks=hooks)
        )

    def run_streamed(
        self,
        input: str | list[Any] | RunState,
        *,
        model: Model | None = None,
        context: Any = None,
        max_turns: int | None = _UNSET,
        run_config: RunConfig | None = None,
        session: Any = None,
        starting_agent: str | None = None,
        hooks: Any = None,
    ) -> RunResultStreaming:
        """A streamed run: iterate ``stream_events()``; afterwards the object carries the
        result's fields. The run advances as the events are consumed."""
        return RunResultStreaming(
            self._start(input, model, context, max_turns, run_config, emit=True,
                        session=session, starting_agent=starting_agent, hooks=hooks),
            timeout=run_config.timeout if run_config is not None else None,
            record=run_config.record if run_config is not None else None,
            workflow=self.ir.name,
        )


def _with_hooks(config: RunConfig | None, hooks: Any) -> RunConfig:
    """The run's config with ``run(hooks=)`` in it (hooks travel with the config, so every
    loop of the run, nested and flow node runs included, is told)."""
    from dataclasses import replace

    from stepswitch.lifecycle import check_hooks

    if config is not None and not isinstance(config, RunConfig):
        raise UserError(f"run_config: expected a RunConfig, got {type(config).__name__}")
    if config is not None and config.hooks is not None and config.hooks is not hooks:
        raise UserError("hooks: give run(hooks=...) or RunConfig(hooks=...), not both")
    check_hooks(hooks, "run", "run(hooks=...)")
    return replace(config or _DEFAULT_CONFIG, hooks=hooks)


def _check_context(workflow: str, expected: type, context: object) -> None:
    """Refuse a ``context`` that is not the declared ``context_type``: a dict given for
    a dataclass would surface as an AttributeError deep in a tool or instructions."""
    try:
        fits = isinstance(context, expected)
    except TypeError:  # a TypedDict or a Protocol without runtime_checkable: not checked
        return
    if not fits:
        name = expected.__name__
        raise UserError(f"context: workflow {workflow!r} declares context_type={name}, got "
                        f"{type(context).__name__}; pass context={name}(...)")


class _Cancelled(BaseException):
    """Thrown into a streamed run's loop by ``cancel()``: a BaseException, so that no
    handler of a tool's or a hook's errors takes it for their failure and goes on."""


def _resumed_twice() -> StateError:
    return StateError(
        "this RunState was resumed already: a run took it, and resuming it again would run "
        "its approved calls a second time; resume the state that run left instead "
        "(result.to_state(), or exc.run_data.to_state() of the error that ended it)"
    )


def _tracer(provider: Any) -> Any:
    """``tracing.tracer_for(provider)``, without loading the tracing module for a run
    that cannot be traced (no provider given, and OpenTelemetry's API never imported)."""
    if provider is None and "opentelemetry.trace" not in sys.modules:
        return None
    return _lazy.tracing.tracer_for(provider)


_LOCAL = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop | None = getattr(_LOCAL, "loop", None)
    if loop is None or loop.is_closed():
        loop = _lazy.asyncio.new_event_loop()
        _LOCAL.loop = loop
    return loop


class RunResultStreaming:
    """A run in progress. ``stream_events()`` yields its events; once it is exhausted,
    the fields of :class:`RunResult` are available here too."""

    def __init__(
        self, loop: Loop, *, timeout: float | None = None, record: Any = None,
        workflow: str = "",
    ) -> None:
        self._loop = loop
        self._timeout = timeout
        self._record = record  # RunConfig.record: where the finished run is written
        self._workflow = workflow
        self._result: RunResult | None = None
        """The finished run; after :meth:`cancel`, the run so far (no final output)."""
        self._cancelled = False
        self._started = False
        self.current_agent: str | None = None
        self.is_complete = False

    async def stream_events(self) -> AsyncIterator[StreamEvent]:
        """Agent changes, run items and a streaming model's raw events, as they happen.
        Errors of the run are raised from here. After :meth:`cancel` (called between two
        events) it ends at once."""
        if self._started:
            raise RuntimeError("stream_events() can be iterated only once")
        self._started = True
        if self._cancelled:
            return
        pump = _lazy.pump.Pump(
            self._loop, stream=True, timeout=self._timeout
        )
        events = pump.events()
        left = True  # the consumer stopped iterating before the run ended
        try:
            async for event in events:
                if type(event) is AgentUpdatedStreamEvent:
                    self.current_agent = event.new_agent
                yield event
                if self._cancelled:
                    break
            left = False
        except GeneratorExit:
            raise
        except BaseException:
            left = False  # the run's error: it carries the run so far
            raise
        finally:
            if left:  # stopped where it is, the run so far kept
                self.cancel()
            await events.aclose()
        if self._cancelled:
            return
        self._result = pump.result
        self.is_complete = True
        if self._record is not None:
            _lazy.record.write_record(self._record, self._result, self._workflow)

    def cancel(self, mode: str = "immediate") -> None:
        """Stop the run where it is (the SDK's ``cancel(mode="immediate")``): no further
        model call or tool runs, ``stream_events()`` ends, and the fields here give the
        run so far (``to_state()`` a state that resumes it, as after an error). Call it
        between two events; leaving ``stream_events()`` early does the same once the
        iterator is closed. Cancelling a finished run does nothing."""
        if mode != "immediate":
            raise UserError(f"cancel(mode={mode!r}): only 'immediate' is supported")
        if self.is_complete or self._cancelled:
            return
        self._cancelled = True
        self.is_complete = True
        if not self._started:
            self._loop.close()  # nothing ran
            return
        try:
            self._loop.throw(_Cancelled())
            while True:  # a loop that still yields on its way out: let it finish leaving
                self._loop.send(None)
        except (StopIteration, GeneratorExit):
            pass
        except BaseException as exc:  # _Cancelled, or what the loop raised leaving
            data = getattr(exc, "run_data", None)
            if data is not None:
                self._result = data.as_result()
        finally:
            self._loop.close()

    def _done(self) -> RunResult:
        if self._result is not None:
            return self._result
        if self._cancelled:
            raise RuntimeError("the streamed run was cancelled before it started: nothing ran")
        raise RuntimeError("the streamed run has not finished: consume stream_events() to "
                           "its end, or cancel() it to keep the run so far")

    @property
    def final_output(self) -> Any:
        return self._done().final_output

    @property
    def new_items(self) -> list[RunItem]:
        return self._done().new_items

    @property
    def last_agent(self) -> str:
        return self._done().last_agent

    @property
    def interruptions(self) -> list[ToolApprovalItem]:
        return self._done().interruptions

    @property
    def raw_responses(self) -> list[ModelResponse]:
        return self._done().raw_responses

    @property
    def usage(self) -> Usage:
        return self._done().usage

    @property
    def input(self) -> tuple[InputItem, ...]:
        return self._done().input

    @property
    def max_turns(self) -> int | None:
        return self._done().max_turns

    @property
    def input_guardrail_results(self) -> list[GuardrailResult]:
        return self._done().input_guardrail_results

    @property
    def output_guardrail_results(self) -> list[GuardrailResult]:
        return self._done().output_guardrail_results

    @property
    def tool_input_guardrail_results(self) -> list[Any]:
        return self._done().tool_input_guardrail_results

    @property
    def tool_output_guardrail_results(self) -> list[Any]:
        return self._done().tool_output_guardrail_results

    def to_state(self) -> RunState:
        return self._done().to_state()

    def to_input_list(self) -> list[InputItem]:
        return self._done().to_input_list()

    def final_output_as(self, cls: type[T], raise_if_incorrect_type: bool = False) -> T:
        """The final output typed as ``cls`` (checked when asked), as on ``RunResult``."""
        return self._done().final_output_as(cls, raise_if_incorrect_type)

    def result(self) -> RunResult:
        """The finished run as a plain ``RunResult``."""
        return self._done()
