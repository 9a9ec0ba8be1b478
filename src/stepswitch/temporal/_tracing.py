"""OpenTelemetry spans from durable runs, with nothing but ``opentelemetry-api``.

The tree is the in-process one (docs/tracing.md)::

    (the client's span, when RunInput carried its traceparent)
      invoke_workflow {workflow}          the workflow, while not replaying
        invoke_agent {agent}              the workflow, one per agent segment
          chat {model}                    the model activity, around the model call
          execute_tool {tool}             the tool's activity, around the tool
          execute_tool {agent tool}       the workflow, around a nested run
            invoke_agent {nested} …

What touches the world is traced where it happens: the model and tool activities open
their spans as children of the ``traceparent`` the workflow hands them, so their
durations are the calls' own and a tool's own spans nest under its ``execute_tool``.
The workflow opens the workflow and agent spans only while it is not replaying: a
replay (a new worker after a crash, an evicted run) emits nothing twice. Spans the
workflow held when its worker died are lost; the run's next spans go under a new
``invoke_workflow`` span (event ``stepswitch.resumed``) in the same trace. A run that
pauses for an approval ends its spans, and its resumption opens a new
``invoke_workflow`` span under the first one, as a resumed state does in-process.

Nothing here may fail a run: an exception from the tracing SDK turns tracing off for
the rest of the run (or activity).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from temporalio import workflow

from stepswitch.runtime import semconv as sc

__all__ = ["Segment", "WorkflowTrace", "context_of", "current_traceparent", "traceparent_of"]

_log = logging.getLogger("stepswitch.tracing")


def traceparent_of(span: Any) -> str | None:
    """The W3C ``traceparent`` of ``span``."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def current_traceparent() -> str | None:
    """The ``traceparent`` of the caller's current span (None without one, or when
    ``opentelemetry`` was never imported): what ``RunInput`` carries by default."""
    api = sys.modules.get("opentelemetry.trace")
    if api is None:
        return None
    try:
        return traceparent_of(api.get_current_span())
    except Exception:  # pragma: no cover - a broken SDK must not stop a run's start
        return None


def context_of(traceparent: str | None) -> Any:
    """An OpenTelemetry context whose parent is the span ``traceparent`` names."""
    if not traceparent:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator().extract({"traceparent": traceparent})


def guarded(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # the tracing SDK must never fail a run
        _log.warning("stepswitch: tracing failed: %r", exc)
        return None


class WorkflowTrace:
    """The workflow's spans of one run (the workflow span and its agent segments)."""

    def __init__(
        self, tracer: Any, workflow_name: str, conversation_id: str, parent: str | None
    ) -> None:
        from opentelemetry import trace

        self.api = trace
        self.tracer = tracer
        self.workflow_name = workflow_name
        self.conversation_id = conversation_id
        self.parent = parent
        """The client's traceparent; after a pause, the first workflow span's."""
        self.root: Any = None
        self.ended: str | None = None
        """The traceparent of the workflow span last ended (a pause's)."""
        self.on = True
        self.events: list[tuple[str, dict[str, Any]]] = []

    def active(self) -> bool:
        return self.on and not workflow.unsafe.is_replaying()

    def guard(self, fn: Callable[..., Any], *args: Any) -> Any:
        if not self.on:
            return None
        try:
            return fn(*args)
        except Exception as exc:
            self.on = False
            _log.warning("stepswitch: tracing failed and is off for this run: %r", exc)
            return None

    def root_context(self) -> Any:
        """The workflow span's context, opening the span if there is none yet."""
        if self.root is None:
            attrs: dict[str, Any] = {
                sc.OPERATION_NAME: sc.OP_INVOKE_WORKFLOW,
                sc.WORKFLOW_NAME: self.workflow_name,
                sc.CONVERSATION_ID: self.conversation_id,
            }
            self.root = self.tracer.start_span(
                f"{sc.OP_INVOKE_WORKFLOW} {self.workflow_name}",
                context=context_of(self.parent), kind=self.api.SpanKind.INTERNAL,
                attributes=attrs,
            )
            for name, event in self.events:
                self.root.add_event(name, event)
            self.events = []
        return self.api.set_span_in_context(self.root)

    def resume(self, decisions: list[tuple[str, bool]], turn: int) -> None:
        """The run goes on after a pause: its next spans go under a new workflow span,
        a child of the first."""
        self.parent = self.ended or self.parent
        self.root = None
        self.events = [(sc.EVENT_RESUMED, {sc.TURN: turn})]
        self.events += [
            (sc.EVENT_APPROVAL_DECIDED, {sc.TOOL_CALL_ID: call_id,
                                         "stepswitch.approved": approved})
            for call_id, approved in decisions
        ]

    def end(self, last_agent: str | None, exc: BaseException | None = None) -> None:
        root, self.root = self.root, None
        if root is None:
            return

        def close() -> None:
            self.ended = traceparent_of(root)
            if last_agent:
                root.set_attribute(sc.AGENT_NAME, last_agent)
            if exc is not None:
                error(self.api, root, exc)
            root.end()

        self.guard(close)


class Segment:
    """An agent segment: the whole run's (under the workflow span) or a nested run's
    (under its ``execute_tool`` span)."""

    def __init__(self, trace: WorkflowTrace | None, parent: Callable[[], Any]) -> None:
        self.trace = trace
        self.parent = parent
        self.agent: str | None = None
        self.span: Any = None

    def traceparent(self, agent: str) -> str | None:
        """The ``traceparent`` of ``agent``'s span (opened, or switched to on a
        handoff), for an activity to open its span under; None when not tracing."""
        trace = self.trace
        if trace is None or not trace.active():
            return None
        value: str | None = trace.guard(self._traceparent, agent)
        return value

    def _traceparent(self, agent: str) -> str | None:
        assert self.trace is not None
        if self.span is not None and self.agent != agent:
            self.span.add_event(sc.EVENT_HANDOFF, {sc.AGENT_NAME: agent})
            self.span.end()
            self.span = None
        if self.span is None:
            self.agent = agent
            self.span = self.trace.tracer.start_span(
                f"{sc.OP_INVOKE_AGENT} {agent}", context=self.parent(),
                kind=self.trace.api.SpanKind.INTERNAL,
                attributes={sc.OPERATION_NAME: sc.OP_INVOKE_AGENT, sc.AGENT_NAME: agent,
                            sc.CONVERSATION_ID: self.trace.conversation_id},
            )
        return traceparent_of(self.span)

    def step_parent(self) -> str | None:
        """The ``traceparent`` a flow step's ``execute_step`` span goes under (the
        segment's parent, the workflow span), for its activity; None when not tracing."""
        trace = self.trace
        if trace is None or not trace.active():
            return None
        value: str | None = trace.guard(
            lambda: traceparent_of(trace.api.get_current_span(self.parent())))
        return value

    def context(self) -> Any:
        assert self.trace is not None
        return self.trace.api.set_span_in_context(self.span) if self.span else self.parent()

    def tool(self, name: str, call_id: str) -> Any:
        """An ``execute_tool`` span for an agent tool's nested run (None: not tracing)."""
        trace = self.trace
        if trace is None or not trace.active() or self.agent is None:
            return None
        return trace.guard(lambda: trace.tracer.start_span(
            f"{sc.OP_EXECUTE_TOOL} {name}", context=self.context(),
            kind=trace.api.SpanKind.INTERNAL,
            attributes={sc.OPERATION_NAME: sc.OP_EXECUTE_TOOL, sc.TOOL_NAME: name,
                        sc.TOOL_CALL_ID: call_id, sc.TOOL_TYPE: "agent"},
        ))

    def end(self, interruptions: Any = (), exc: BaseException | None = None) -> None:
        span, self.span = self.span, None
        if span is None or self.trace is None:
            return

        def close() -> None:
            assert self.trace is not None
            for item in interruptions:
                span.add_event(sc.EVENT_APPROVAL_REQUESTED, {
                    sc.TOOL_NAME: item.name, sc.TOOL_CALL_ID: item.call_id,
                    sc.AGENT_NAME: item.agent,
                })
            if exc is not None:
                error(self.trace.api, span, exc)
            span.end()

        self.trace.guard(close)


def error(api: Any, span: Any, exc: BaseException) -> None:
    span.set_attribute(sc.ERROR_TYPE, type(exc).__qualname__)
    span.set_status(api.Status(api.StatusCode.ERROR, str(exc)[:500]))
