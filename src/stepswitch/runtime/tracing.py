"""OpenTelemetry spans from the run loop, with nothing but ``opentelemetry-api``.

Tracing wraps the one loop generator: :func:`traced` pumps the loop, passes every
effect through to whichever driver runs it (``run``, ``run_sync``, ``run_streamed``,
a generated runner), and opens and closes spans around the effects it sees. So every
surface is traced the same way, and no driver holds tracing logic.

The tree of one run::

    invoke_workflow {workflow}            (INTERNAL)
      invoke_agent {agent}                (INTERNAL, one per agent segment)
        chat {model}                      (CLIENT, one per model call; stepswitch.step)
        execute_tool {tool}               (INTERNAL, one per tool that runs)
          invoke_agent {nested}           (an agent tool's nested run)
            chat …

Each turn's step (Final / Handoff / Interruption / RunAgain) is known only after the
loop moves on, so a ``chat`` span is ended then, with the end time of the response.
Handoffs, guardrail trips, approvals requested and decided, and resumes are span
events. Message content, tool arguments and results are recorded only with
``RunConfig(trace_content=True)``.

Cost: with no tracer provider set (or ``opentelemetry`` never imported) the machine
does not wrap the loop at all. Nothing here may fail a run: an exception from the
tracing SDK (a broken exporter or span processor) is logged once and turns tracing
off for the rest of that run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator, Iterable
from dataclasses import asdict, is_dataclass
from time import time_ns
from typing import Any

from stepswitch._json import dumps, escape_surrogates
from stepswitch.errors import GuardrailTripwireTriggered, MaxTurnsExceeded
from stepswitch.runtime import semconv as sc
from stepswitch.runtime.effects import CallJob, CallModel, Emit, NestedJob, Ok, RunJobs
from stepswitch.runtime.events import FlowNodeStreamEvent
from stepswitch.runtime.model import ModelRequest, ModelResponse
from stepswitch.runtime.relay import Relay

__all__ = ["traced", "traceparent", "tracer_for"]

Loop = Generator[Any, Any, Any]

_warned = False
_NOOP_PROVIDERS = frozenset({"ProxyTracerProvider", "NoOpTracerProvider"})
_cache: tuple[object, Any] | None = None


def _warn_once(exc: BaseException) -> None:
    global _warned
    if not _warned:
        _warned = True
        import logging  # only here: a runner's import does not load logging

        logging.getLogger("stepswitch.tracing").warning(
            "stepswitch: tracing failed and is off for this run: %r", exc
        )


def tracer_for(provider: Any | None) -> Any | None:
    """The tracer to use, or None when tracing is off.

    ``provider`` is ``RunConfig.tracer_provider``; without one, the global provider,
    but only if ``opentelemetry`` was imported and a real provider is set.
    """
    global _cache
    if provider is None:
        api = sys.modules.get("opentelemetry.trace")
        if api is None:
            return None
        provider = api.get_tracer_provider()
        if type(provider).__name__ in _NOOP_PROVIDERS:
            return None
    cached = _cache
    if cached is not None and cached[0] is provider:
        return cached[1]
    try:
        from stepswitch._version import __version__

        tracer = provider.get_tracer("stepswitch", __version__)
    except Exception as exc:
        _warn_once(exc)
        return None
    _cache = (provider, tracer)
    return tracer


def traceparent(span: Any) -> str | None:
    """The W3C ``traceparent`` of ``span`` (kept in a saved state to continue the trace)."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def _remote_parent(value: str | None) -> Any:
    """A context whose parent is the span a ``traceparent`` names (None if unreadable)."""
    from opentelemetry import trace

    if not value:
        return None
    parts = value.split("-")
    if len(parts) != 4 or len(parts[1]) != 32 or len(parts[2]) != 16:
        return None
    try:
        trace_id, span_id, flags = int(parts[1], 16), int(parts[2], 16), int(parts[3], 16)
    except ValueError:
        return None
    if not trace_id or not span_id:
        return None
    parent = trace.SpanContext(
        trace_id, span_id, is_remote=True, trace_flags=trace.TraceFlags(flags)
    )
    return trace.set_span_in_context(trace.NonRecordingSpan(parent))


def _json(value: Any) -> str:
    def plain(v: Any) -> Any:
        if is_dataclass(v) and not isinstance(v, type):
            return {k: x for k, x in asdict(v).items() if k != "value"}
        return repr(v)

    try:
        return dumps(value, default=plain)  # a lone surrogate as its escape: UTF-8 text
    except (TypeError, ValueError):
        return repr(value)


class _Trace:
    """The spans of one run segment: a whole run (``root``) or a nested agent run."""

    def __init__(
        self,
        tracer: Any,
        *,
        agent: str | None,
        parent: Any,
        workflow: str | None,
        content: bool,
        conversation_id: str | None,
        events: Iterable[tuple[str, dict[str, Any]]] = (),
    ) -> None:
        """``events`` go on the workflow span before its first agent's span opens (a
        resumed run's ``run.resumed`` and ``approval.decided``: they come first)."""
        from opentelemetry import context, trace

        self.api = trace
        self.context = context
        """``opentelemetry.context``, looked up once (a tool call attaches its span)."""
        self.tracer = tracer
        self.content = content
        self.conversation_id = conversation_id
        self.on = True
        self.provider = "unknown"
        self.root: Any = None
        self.parent = parent
        if workflow is not None:
            attrs: dict[str, Any] = {
                sc.OPERATION_NAME: sc.OP_INVOKE_WORKFLOW,
                sc.WORKFLOW_NAME: workflow,
            }
            if conversation_id:
                attrs[sc.CONVERSATION_ID] = conversation_id
            self.root = tracer.start_span(
                f"{sc.OP_INVOKE_WORKFLOW} {workflow}", context=parent,
                kind=trace.SpanKind.INTERNAL, attributes=attrs,
            )
            for name, event in events:
                self.root.add_event(name, event)
            self.parent = trace.set_span_in_context(self.root)
        # the open segment: an agent's span, or (in a flow) a step's or a fan-out's; a
        # flow opens its first segment when its first node starts
        self.agent = agent or ""
        self.agent_span: Any = None
        self.agent_ctx: Any = None
        self.segment = "agent"
        if agent is not None:
            self._open(self._agent_span(agent), "agent")
        # the last model call, ended when the loop shows which step its turn took
        self.chat: Any = None
        self.chat_head: tuple[str, dict[str, Any]] = ("", {})
        """The last chat span's name and its attributes fixed by the model (reused while
        the model is the same)."""
        self.client = trace.SpanKind.CLIENT
        self.chat_end = 0
        self.chat_usage: Any = None
        self.chat_agent = self.agent
        self.chat_model: Any = None
        """The model object of the last call (its provider and model name are read
        again only when a call's model or ``request.model`` differs)."""
        self.chat_request_model: Any = None

    # -- safety ---------------------------------------------------------------------------

    def guard(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, unless tracing is off or it fails (then it is off)."""
        if not self.on:
            return None
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # the tracing SDK must never fail a run
            self.off(exc)
            return None

    def off(self, exc: BaseException) -> None:
        """Tracing failed: it is off for the rest of the run (code that calls the SDK
        on every turn catches its errors itself rather than through :meth:`guard`)."""
        self.on = False
        _warn_once(exc)

    # -- spans ----------------------------------------------------------------------------

    def _agent_span(self, agent: str) -> Any:
        attrs: dict[str, Any] = {
            sc.OPERATION_NAME: sc.OP_INVOKE_AGENT,
            sc.AGENT_NAME: agent,
        }
        if self.conversation_id:
            attrs[sc.CONVERSATION_ID] = self.conversation_id
        return self.tracer.start_span(
            f"{sc.OP_INVOKE_AGENT} {agent}", context=self.parent,
            kind=self.api.SpanKind.INTERNAL, attributes=attrs,
        )

    def _open(self, span: Any, segment: str) -> None:
        self.agent_span = span
        self.agent_ctx = self.api.set_span_in_context(span)
        self.segment = segment

    def _end_agent(self) -> None:
        span, self.agent_span = self.agent_span, None
        if span is None:
            return
        if self.segment == "agent":
            span.set_attribute(sc.PROVIDER_NAME, self.provider)
        span.end()

    def _event(self, name: str, attrs: dict[str, Any]) -> None:
        (self.agent_span or self.root).add_event(name, attrs)

    def flow_node(self, node: str, kind: str, count: int | None) -> None:
        """A flow moved to ``node``: the last node's agent run, if one was open, ended its
        last turn with its final output (Final: the node's output; the flow's move is the
        next node's span, not a handoff); the node gets a span of its own."""
        self._settle_chat("Final")
        self._end_agent()
        self.agent = node
        if kind == "agent":
            self._open(self._agent_span(node), "agent")
            return
        attrs: dict[str, Any] = {sc.FLOW_NODE: node, sc.FLOW_NODE_KIND: kind}
        if count is not None:
            attrs[sc.FLOW_FAN_OUT_COUNT] = count
        name = f"{sc.SPAN_FLOW_STEP} {node}" if kind == "step" else f"{sc.SPAN_FAN_OUT} {node}"
        self._open(self.tracer.start_span(
            name, context=self.parent, kind=self.api.SpanKind.INTERNAL, attributes=attrs,
        ), kind)

    def _settle_chat(self, step: str | None) -> None:
        if self.chat is None:
            return
        chat, self.chat = self.chat, None
        usage = self.chat_usage
        attrs: dict[str, Any] = {
            sc.USAGE_INPUT_TOKENS: usage.input_tokens,
            sc.USAGE_OUTPUT_TOKENS: usage.output_tokens,
        }
        if step is not None:
            attrs[sc.STEP] = step
        chat.set_attributes(attrs)
        chat.end(end_time=self.chat_end)

    def model_call(self, effect: CallModel) -> None:
        request: ModelRequest = effect.request
        if self.chat is not None:
            step = "RunAgain" if request.agent == self.chat_agent else "Handoff"
            self._settle_chat(step)
        in_agent = self.agent_span is not None and self.segment == "agent"
        if not in_agent or request.agent != self.agent:
            if in_agent:  # the same segment, another agent: a handoff
                self.agent_span.add_event(sc.EVENT_HANDOFF, {sc.AGENT_NAME: request.agent})
            self._end_agent()
            self.agent = request.agent
            self._open(self._agent_span(request.agent), "agent")
        name, attrs = self.chat_head
        if effect.model is not self.chat_model or request.model != self.chat_request_model:
            # the provider and model a call names, read again whenever the call's model
            # object or the request's model name is another than the last call's
            self.chat_model, self.chat_request_model = effect.model, request.model
            found = getattr(effect.model, "provider_name", None)
            provider = found if isinstance(found, str) and found else "unknown"
            found = request.model or getattr(effect.model, "model", None)
            model = found if isinstance(found, str) and found else "unknown"
            self.provider = provider
            if attrs.get(sc.PROVIDER_NAME) != provider or attrs.get(sc.REQUEST_MODEL) != model:
                # the same for every call of one model: made once, never changed after
                # (a span copies what it is given; another call may get the same dict)
                attrs = {
                    sc.OPERATION_NAME: sc.OP_CHAT,
                    sc.PROVIDER_NAME: provider,
                    sc.REQUEST_MODEL: model,
                }
                if self.conversation_id:
                    attrs[sc.CONVERSATION_ID] = self.conversation_id
                name = f"{sc.OP_CHAT} {model}"
                self.chat_head = name, attrs
        if self.content:
            attrs = dict(attrs)
            if request.instructions:
                attrs[sc.SYSTEM_INSTRUCTIONS] = request.instructions
            attrs[sc.INPUT_MESSAGES] = _json(list(request.input))
        self.chat = self.tracer.start_span(
            name, context=self.agent_ctx, kind=self.client, attributes=attrs,
        )
        self.chat_agent = request.agent

    def model_done(self, outcome: Any) -> None:
        response: ModelResponse = outcome[0] if type(outcome) is tuple else outcome
        chat = self.chat
        if chat is None:
            return
        self.chat_end = time_ns()
        self.chat_usage = response.usage
        if self.content:
            chat.set_attribute(sc.OUTPUT_MESSAGES, _json(list(response.output)))

    def model_failed(self, exc: BaseException) -> None:
        chat, self.chat = self.chat, None
        if chat is None:
            return
        self._error(chat, exc)
        chat.end()

    def _error(self, span: Any, exc: BaseException) -> None:
        span.set_attribute(sc.ERROR_TYPE, type(exc).__qualname__)
        # free text, cut short: a lone surrogate as its escape, so any exporter can send it
        described = escape_surrogates(str(exc)[:500])
        span.set_status(self.api.Status(self.api.StatusCode.ERROR, described))

    def tool_span(self, name: str, call_id: str, kind: str, args: Any) -> Any:
        attrs: dict[str, Any] = {
            sc.OPERATION_NAME: sc.OP_EXECUTE_TOOL,
            sc.TOOL_NAME: name,
            sc.TOOL_CALL_ID: call_id,
            sc.TOOL_TYPE: kind,
        }
        if self.content and args is not None:  # an agent tool's: the model's JSON text
            attrs[sc.TOOL_CALL_ARGUMENTS] = args if type(args) is str else _json(args)
        return self.tracer.start_span(
            f"{sc.OP_EXECUTE_TOOL} {name}",
            context=self.agent_ctx,
            kind=self.api.SpanKind.INTERNAL,
            attributes=attrs,
        )

    def tool_done(self, span: Any, value: Any = None, exc: BaseException | None = None) -> None:
        if exc is not None:
            self._error(span, exc)
        elif self.content:
            span.set_attribute(sc.TOOL_CALL_RESULT, _json(value))
        span.end()

    def finish(self, result: Any) -> None:
        interruptions = getattr(result, "interruptions", None) or []
        self._settle_chat("Interruption" if interruptions else "Final")
        for item in interruptions:
            self._event(
                sc.EVENT_APPROVAL_REQUESTED,
                {sc.TOOL_NAME: item.name, sc.TOOL_CALL_ID: item.call_id,
                 sc.AGENT_NAME: item.agent},
            )
        self._end_agent()
        if self.root is not None:
            self.root.set_attribute(sc.AGENT_NAME, getattr(result, "last_agent", self.agent))
            self.root.end()

    def fail(self, exc: BaseException) -> None:
        data = getattr(exc, "run_data", None)
        last = getattr(data, "last_agent", None)
        step = None
        if self.chat is not None and isinstance(exc, MaxTurnsExceeded):
            step = "Handoff" if last is not None and last != self.chat_agent else "RunAgain"
        if step is None:
            self.model_failed(exc)
        else:
            self._settle_chat(step)
        if isinstance(exc, GuardrailTripwireTriggered):
            verdict = getattr(exc, "guardrail_result", None)
            self._event(
                sc.EVENT_GUARDRAIL_TRIPPED,
                {"stepswitch.guardrail": str(getattr(verdict, "guardrail", "")),
                 sc.ERROR_TYPE: type(exc).__qualname__},
            )
        if self.agent_span is not None:
            self._error(self.agent_span, exc)
        self._end_agent()
        if self.root is not None:
            self.root.set_attribute(sc.AGENT_NAME, last or self.agent)  # as finish() does
            self._error(self.root, exc)
            self.root.end()

    def abandon(self) -> None:
        """The driver closed the loop early (e.g. a streamed run no one finished)."""
        if self.chat is not None:
            self.chat.end()
            self.chat = None
        self._end_agent()
        if self.root is not None:
            self.root.end()

    # -- jobs -----------------------------------------------------------------------------

    def jobs(self, effect: RunJobs) -> tuple[Any, Any] | None:
        """Trace a turn's jobs. A lone function call runs in the driver's own context
        while the loop waits on its outcome, so its span opens and becomes current here
        and ends when the outcome comes back (:func:`traced`): returned as its span and
        context token. Several calls may run at once, each in a task or thread of its own
        where its span must be current: each function is wrapped to open its span where
        it runs. Returns None then (and for nested runs)."""
        jobs = effect.jobs
        if len(jobs) == 1 and type(jobs[0]) is CallJob:
            return self.enter_tool(jobs[0])
        for job in jobs:
            if type(job) is CallJob:
                job.fn = self._wrap_call(job)
            elif type(job) is NestedJob:
                self._wrap_nested(job)
        return None

    def enter_tool(self, job: CallJob) -> tuple[Any, Any]:
        """Open the tool's span and make it current (user code's spans nest under it)."""
        if not self.on:
            return None, None
        try:
            span = self.tool_span(job.name, job.call_id, "function", job.kwargs)
        except Exception as exc:
            self.off(exc)
            return None, None
        try:
            token = self.context.attach(self.api.set_span_in_context(span))
        except Exception as exc:
            self.off(exc)
            return span, None
        return span, token

    def exit_tool(
        self, span: Any, token: Any, value: Any = None, exc: BaseException | None = None
    ) -> None:
        if token is not None:
            try:  # noqa: SIM105 - a suppress() context costs more than this, per tool call
                self.context.detach(token)
            except Exception:  # a token from another context: nothing to undo
                pass
        if span is not None and self.on:
            try:
                if exc is None and not self.content:  # tool_done's common case
                    span.end()
                else:
                    self.tool_done(span, value, exc)
            except Exception as failure:  # the tracing SDK must never fail a run
                self.off(failure)

    def _wrap_call(self, job: CallJob) -> Callable[..., Any]:
        fn = job.fn
        trace = self

        if job.is_async:
            async def traced_async(*a: Any, **k: Any) -> Any:
                span, token = trace.enter_tool(job)
                try:
                    value = await fn(*a, **k)
                except BaseException as exc:
                    trace.exit_tool(span, token, exc=exc)
                    raise
                trace.exit_tool(span, token, value)
                return value

            return traced_async

        def traced_sync(*a: Any, **k: Any) -> Any:
            span, token = trace.enter_tool(job)
            try:
                value = fn(*a, **k)
            except BaseException as exc:
                trace.exit_tool(span, token, exc=exc)
                raise
            trace.exit_tool(span, token, value)
            return value

        return traced_sync

    def _wrap_nested(self, job: NestedJob) -> None:
        """An agent tool's nested run goes under its ``execute_tool`` span; a flow's
        fan-out branch (a job with no tool name) under the fan-out's span."""
        span = None
        if job.name:
            span = self.guard(
                self.tool_span, job.name, job.call_id, "agent", job.arguments or None
            )
            if span is None:
                return
            parent = self.api.set_span_in_context(span)
        else:
            parent = self.agent_ctx or self.parent
        nested = self.guard(
            _Trace, self.tracer, agent=job.agent or None, parent=parent, workflow=None,
            content=self.content, conversation_id=self.conversation_id,
        )
        if nested is None:
            if span is not None:
                self.guard(span.end)
            return
        job.loop = traced(job.loop, nested, tool_span=span)


def start(
    tracer: Any,
    loop: Loop,
    *,
    workflow: str,
    agent: str | None,
    content: bool,
    conversation_id: str | None,
    saved_context: str | None,
    decisions: Iterable[tuple[str, Any]] = (),
    turn: int = 0,
    resumed: bool = False,
) -> tuple[Loop, str | None]:
    """Wrap a whole run's loop; returns it with the traceparent to keep in its states.

    A ``resumed`` run's workflow span opens with a ``stepswitch.run.resumed`` event (at
    ``turn``) and one ``stepswitch.approval.decided`` event per ``(call id, decision)``
    of ``decisions``. ``saved_context`` is the traceparent its state carries: the run
    continues that trace (its workflow span is a child of the saved one); a state
    saved by an untraced run has none, and its resumed run starts a trace of its own.
    """
    try:
        parent = _remote_parent(saved_context) if saved_context else None
        events: list[tuple[str, dict[str, Any]]] = []
        if resumed or saved_context is not None:
            events.append((sc.EVENT_RESUMED, {sc.TURN: turn}))
        for call_id, decision in decisions:
            events.append((
                sc.EVENT_APPROVAL_DECIDED,
                {sc.TOOL_CALL_ID: str(call_id),
                 "stepswitch.approved": bool(getattr(decision, "approved", False))},
            ))
        trace = _Trace(
            tracer, agent=agent, parent=parent, workflow=workflow, content=content,
            conversation_id=conversation_id, events=events,
        )
    except Exception as exc:
        _warn_once(exc)
        return loop, saved_context
    kept = saved_context or trace.guard(traceparent, trace.root)
    return traced(loop, trace), kept


def traced(loop: Loop, trace: _Trace, *, tool_span: Any = None) -> Loop:
    """Pump ``loop``, passing its effects through and tracing them."""
    with Relay(loop) as relay:
        send: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = relay.step(send, error)
            except BaseException as exc:
                trace.guard(trace.fail, exc)
                if tool_span is not None:
                    trace.guard(trace.tool_done, tool_span, exc=exc)
                raise
            if effect is None:
                break
            send, error = None, None
            kind = type(effect)
            lone: tuple[Any, Any] | None = None  # a lone function call's span and token
            if trace.on:
                try:  # as trace.guard does, without a call through it per effect
                    if kind is CallModel:
                        trace.model_call(effect)
                    elif kind is RunJobs:
                        jobs = effect.jobs
                        if len(jobs) == 1 and type(jobs[0]) is CallJob:  # jobs()' common case
                            lone = trace.enter_tool(jobs[0])
                        else:
                            trace.jobs(effect)
                    elif kind is Emit and type(effect.event) is FlowNodeStreamEvent:
                        event = effect.event
                        trace.flow_node(event.node, event.kind, event.count)
                except Exception as exc:  # the tracing SDK must never fail a run
                    trace.off(exc)
            try:
                send = yield effect
            except GeneratorExit as stop:
                if lone is not None:  # abandoned while its one call ran
                    trace.exit_tool(*lone, exc=stop)
                relay.close()  # the loop's own cleanup first, then the spans end
                trace.guard(trace.abandon)
                if tool_span is not None:
                    trace.guard(tool_span.end)
                raise
            except BaseException as exc:
                if lone is not None:
                    trace.exit_tool(*lone, exc=exc)
                elif kind is CallModel:
                    trace.guard(trace.model_failed, exc)
                error = exc
                continue
            if lone is not None:
                outcome = send[0]
                if type(outcome) is Ok:
                    trace.exit_tool(*lone, outcome.value)
                else:
                    trace.exit_tool(*lone, exc=outcome.error)
            elif kind is CallModel and trace.on and trace.chat is not None:
                if trace.content or type(send) is tuple:
                    try:
                        trace.model_done(send)
                    except Exception as exc:
                        trace.off(exc)
                else:  # model_done's common case, without a call per turn
                    trace.chat_end = time_ns()
                    trace.chat_usage = send.usage
    # the relay hands the result over outside its ``except StopIteration`` clause: an
    # exporter that raises here (and a span processor that logs it, as the SDK's do)
    # chains nothing of the run into the logged traceback
    trace.guard(trace.finish, relay.result)
    if tool_span is not None:  # an agent tool's result: its nested run's final output
        if getattr(relay.result, "interruptions", None):  # paused: no result yet
            trace.guard(tool_span.end)
        else:
            trace.guard(trace.tool_done, tool_span, getattr(relay.result, "final_output", None))
    return relay.result
