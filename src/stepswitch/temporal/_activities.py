"""The activities of a compiled machine: what a Temporal worker runs outside the
deterministic workflow.

- ``<workflow>.model``: one model call (retried by Temporal when the provider fails);
- one activity per function tool, named by the tool's import path; an MCP server's tools
  are function tools too (``app:files.tools.read_file``), so each call of one is an
  activity of the worker, which keeps the connection to the server and holds it to its
  lock (``mcp_drift=``);
- one activity per ``@ss.step`` of a flow, named by the step's import path (its input
  and output cross as JSON; a step that takes the run context gets it typed, and sends
  back what it left there);
- ``<workflow>.hook``: instruction functions, guardrails, ``on_handoff`` and per-call
  ``needs_approval`` functions, run as local activities (they may do I/O, so they
  cannot run inside the workflow, and their answers are recorded in the history);
- ``<workflow>.session``: a conversation's load or append, on the worker's sessions
  (a local activity; an append's operation id makes its retry a no-op);
- ``<workflow>.stamp``: the worker's IR digest, recorded once per run.

Errors keep our tree: a ``ModelProviderError`` (or any unexpected error of a model)
is retryable; a ``UserError`` or ``ModelBehaviorError`` is not, and a tool that raises
is never re-run (its error is the model's tool output, as in-process).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from stepswitch.context import RunContext, Usage
from stepswitch.errors import ModelProviderError, StepswitchError, ToolTimeoutError, UserError
from stepswitch.ir import HandoffTo, RunFunction
from stepswitch.runtime import semconv as sc
from stepswitch.runtime.flow import misfit
from stepswitch.runtime.model import Model
from stepswitch.runtime.tools import adapter_for, output_text
from stepswitch.runtime.tracing import tracer_for
from stepswitch.temporal import _hooks
from stepswitch.temporal._codec import (
    HookCall,
    ModelCall,
    SessionCall,
    StepCall,
    ToolCall,
    jsonable,
    read_call,
    read_items,
    request_of,
    write_items,
    write_response,
)
from stepswitch.temporal._tracing import context_of, error, guarded

if TYPE_CHECKING:
    from stepswitch.flow_ir import FlowNode
    from stepswitch.runtime.flow import FlowCore
    from stepswitch.runtime.machine import StateMachine

__all__ = ["activities_for", "activity_names", "machine_digest"]

_log = logging.getLogger("stepswitch.worker")


def machine_digest(machine: StateMachine) -> str:
    """A digest of the compiled machine's IR: what a running workflow is pinned to."""
    import hashlib

    return "sha256:" + hashlib.sha256(repr(machine.ir).encode("utf-8")).hexdigest()


def activity_names(machine: StateMachine) -> dict[str, str]:
    """The names of the machine's own activities (model, hook, stamp)."""
    base = f"stepswitch.{machine.name}"
    return {"model": f"{base}.model", "hook": f"{base}.hook", "stamp": f"{base}.stamp",
            "session": f"{base}.session"}


_JSON_NATIVE = (str, int, float, bool, type(None), dict, list)


def _failure(exc: BaseException, *, retryable: bool) -> ApplicationError:
    """The activity's failure. One of our own errors that ends the run (a script that ran
    out, a model that misbehaved, a session conflict) is what the run's command reports:
    the worker says it in one line, not as the two tracebacks temporalio logs for any
    failed activity (those stay for an exception of the user's own code, and for an
    error a retry may get past)."""
    message = str(getattr(exc, "summary", None) or exc)
    ours = isinstance(exc, StepswitchError) and not retryable
    if ours:
        try:
            info = activity.info()
            where = f"run {info.workflow_id!r}: {info.activity_type}"
        except RuntimeError:  # not in an activity
            where = "an activity"
        _log.warning("stepswitch: %s failed: %s: %s", where, type(exc).__name__, message)
    return ApplicationError(
        message, type=type(exc).__name__, non_retryable=not retryable,
        category=ApplicationErrorCategory.BENIGN if ours else ApplicationErrorCategory.UNSPECIFIED)


async def _value(value: Any) -> Any:
    if inspect.isawaitable(value):
        value = await value
    return value


Sessions = str | Callable[[str], Any]
"""Where a worker keeps conversations: a session URL (``sqlite:///conversations.db``,
``postgresql://…``, ``redis://…``; see ``stepswitch.sessions.open_session``) or a
function from a session id to a session."""


class _Span:
    """A span an activity opens under the workflow's ``traceparent`` (a no-op without
    tracing); current while the call runs, so the callee's own spans nest under it."""

    def __init__(self, provider: Any, traceparent: str | None, name: str, client: bool,
                 attributes: dict[str, Any]) -> None:
        self.span: Any = None
        self.token: Any = None
        tracer = tracer_for(provider) if traceparent else None
        if tracer is None:
            return
        from opentelemetry import context, trace

        self.api = trace

        def open_() -> None:
            kind = trace.SpanKind.CLIENT if client else trace.SpanKind.INTERNAL
            self.span = tracer.start_span(name, context=context_of(traceparent), kind=kind,
                                          attributes=attributes)
            self.token = context.attach(trace.set_span_in_context(self.span))

        guarded(open_)

    def done(self, attributes: dict[str, Any] | None = None,
             exc: BaseException | None = None) -> None:
        if self.span is None:
            return
        span, token = self.span, self.token
        self.span = None

        def close() -> None:
            from opentelemetry import context

            if token is not None:
                context.detach(token)
            if attributes:
                span.set_attributes(attributes)
            if exc is not None:
                error(self.api, span, exc)
            span.end()

        guarded(close)


async def _call_user(
    span: _Span, fn: Callable[..., Any], is_async: bool, args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """Call a tool's or step's function under ``span``: a coroutine function awaited, a
    plain one in a thread (which runs in a copy of this context, so the function's own
    spans nest under ``span``). What it raises fails the activity for good: retrying
    would run the user's code again."""
    try:
        if is_async:
            value = await fn(*args, **kwargs)
        else:
            value = await _value(await asyncio.to_thread(fn, *args, **kwargs))
    except Exception as exc:
        span.done(exc=exc)
        raise _failure(exc, retryable=False) from exc
    except BaseException as exc:
        span.done(exc=exc)
        raise
    span.done()
    return value


def activities_for(
    machine: StateMachine,
    model: Model | None = None,
    *,
    sessions: Sessions | None = None,
    tracer_provider: Any = None,
    mcp_drift: Literal["error", "allow"] = "error",
    hooks: Any = None,
) -> list[Callable[..., Any]]:
    """The activities a worker needs for ``machine``'s runs.

    ``model`` answers the model calls of agents without a model of their own;
    ``sessions`` keeps the conversations of runs started with ``RunInput(session_id=…)``;
    ``tracer_provider`` (else the global one, if set) gets the ``chat`` and
    ``execute_tool`` spans of the calls; ``mcp_drift="allow"`` lets this worker's runs
    call MCP servers whose tools differ from their lock (``RunConfig(mcp_drift=)``
    in-process; by default such a run fails with ``MCPServerError``). ``hooks``: the
    ``ss.RunHooks`` the runs' hook activities call (``workflow_for(hooks=)`` the same).
    """
    if mcp_drift not in ("error", "allow"):
        raise UserError(f'mcp_drift={mcp_drift!r}: expected "error" or "allow"')
    if hooks is not None:
        from stepswitch.lifecycle import check_hooks

        check_hooks(hooks, "run", "activities_for(hooks=...)")
    core = machine._core
    names = activity_names(machine)
    digest = machine_digest(machine)
    functions: dict[str, RunFunction] = {}
    handoff_types: dict[str, str | None] = {}
    for s in machine.ir.states:
        for t in s.tools:
            a = t.action
            if type(a) is RunFunction:
                functions[a.ref] = a
            elif type(a) is HandoffTo and a.on_handoff is not None:
                handoff_types[a.on_handoff] = a.input_type

    @activity.defn(name=names["model"])
    async def call_model(raw: dict[str, Any]) -> dict[str, Any]:
        call = read_call(ModelCall, raw)
        chosen: Any = model if call.model_ref is None else core.obj(call.model_ref)
        if chosen is None:
            raise ApplicationError(
                f"agent {call.request['agent']!r} has no model of its own and the worker "
                "was started without one: pass model=... to worker_for()/activities_for(), "
                "or --model to `stepswitch worker`",
                type="UserError",
                non_retryable=True,
            )
        request = request_of(call.request)
        name = request.model or getattr(chosen, "model", None)
        name = name if isinstance(name, str) and name else "unknown"
        provider = getattr(chosen, "provider_name", None)
        attrs: dict[str, Any] = {
            sc.OPERATION_NAME: sc.OP_CHAT,
            sc.PROVIDER_NAME: provider if isinstance(provider, str) and provider else "unknown",
            sc.REQUEST_MODEL: name,
        }
        if call.conversation_id:
            attrs[sc.CONVERSATION_ID] = call.conversation_id
        span = _Span(tracer_provider, call.traceparent, f"{sc.OP_CHAT} {name}", True, attrs)
        try:
            response = await chosen.get_response(request)
        except ModelProviderError as exc:
            span.done(exc=exc)
            raise _failure(exc, retryable=True) from exc
        except (StepswitchError, AssertionError) as exc:
            # the model misbehaved, or a scripted model ran dry: retrying cannot help
            span.done(exc=exc)
            raise _failure(exc, retryable=False) from exc
        except BaseException as exc:
            span.done(exc=exc)
            raise
        span.done({sc.USAGE_INPUT_TOKENS: response.usage.input_tokens,
                   sc.USAGE_OUTPUT_TOKENS: response.usage.output_tokens})
        return write_response(response)

    def tool_activity(ref: str, action: RunFunction) -> Callable[..., Any]:
        bound = core.function(ref)
        # the workflow sends the keyword arguments (the model's fields by name); the
        # model reads them by alias (an MCP tool's fields are aliases of its parameters)
        aliases = {n: f.alias or n for n, f in bound.tool.params_model.model_fields.items()}
        is_mcp = getattr(bound.tool, "mcp_server", None) is not None

        @activity.defn(name=ref)
        async def run_tool(raw: dict[str, Any]) -> dict[str, Any]:
            call = read_call(ToolCall, raw)
            given = {aliases.get(k, k): v for k, v in call.arguments.items()}
            params = bound.validator.validate_json(json.dumps(given))
            kwargs = bound.keywords(params)
            # stable across retries of the call, as in-process across resumes; an MCP
            # tool's run (its one listing of the server) is the workflow id's
            key = f"{call.workflow_id}:{call.call_id}" if call.workflow_id else None
            if is_mcp and mcp_drift != "error" and call.workflow_id:
                from stepswitch.mcp.servers import begin_run

                begin_run(call.workflow_id, mcp_drift)
            args = ((RunContext(call.context, Usage(), idempotency_key=key),)
                    if action.takes_context else ())
            name = call.name or ref
            span = _Span(tracer_provider, call.traceparent, f"{sc.OP_EXECUTE_TOOL} {name}",
                         False, {sc.OPERATION_NAME: sc.OP_EXECUTE_TOOL, sc.TOOL_NAME: name,
                                 sc.TOOL_CALL_ID: call.call_id, sc.TOOL_TYPE: "function"})
            # a tool that raised is the model's error output, never run again
            running = _call_user(span, bound.fn, action.is_async, args, kwargs)
            if action.timeout is None:
                value = await running
            else:  # the tool's own timeout=, as the loop applies it in-process
                try:
                    value = await asyncio.wait_for(running, action.timeout)
                except TimeoutError:
                    exc = ToolTimeoutError(call.name or ref, action.timeout)
                    span.done(exc=exc)
                    raise _failure(exc, retryable=False) from None
            if isinstance(value, _JSON_NATIVE):
                try:
                    json.dumps(value)
                    return {"value": value}
                except (TypeError, ValueError):
                    pass
            return {"text": output_text(value)}

        return run_tool

    @activity.defn(name=names["hook"])
    async def run_hook(raw: dict[str, Any]) -> Any:
        try:
            return await _hook(read_call(HookCall, raw))
        except Exception as exc:
            raise _failure(exc, retryable=False) from exc

    async def _hook(call: HookCall) -> Any:
        if call.kind in _hooks.KINDS:  # tool guardrails, gates, run and agent hooks
            return await _hooks.perform(core, call, hooks)
        ctx: RunContext[Any] = RunContext(call.context, Usage())
        fn: Any = core.obj(call.ref)
        if call.kind == "instructions":
            return await _value(fn(ctx, core.state(call.agent)))
        if call.kind in ("input_guardrail", "output_guardrail"):
            state = core.state(call.agent)
            subject = call.args[0]
            if call.kind == "output_guardrail" and state.output.kind == "typed":
                subject = adapter_for(core.obj(state.output.type_ref or "")).validate_python(
                    subject
                )
            verdict = await _value(fn(ctx, state, subject))
            return {
                "output_info": jsonable(verdict.output_info),
                "tripwire_triggered": bool(verdict.tripwire_triggered),
            }
        if call.kind == "on_handoff":
            input_type = handoff_types.get(call.ref)
            if input_type is None:
                await _value(fn(ctx))
            else:
                value = adapter_for(core.obj(input_type)).validate_python(call.args[0])
                await _value(fn(ctx, value))
            return None
        if call.kind == "needs_approval":
            params, call_id = call.args
            return bool(await _value(fn.needs_approval(ctx, params, call_id)))
        raise ApplicationError(f"unknown hook kind {call.kind!r}", non_retryable=True)

    def open_session(session_id: str) -> Any:
        if sessions is None:
            raise ApplicationError(
                f"run with session_id {session_id!r}, but the worker has no sessions: pass "
                "sessions='sqlite:///conversations.db' (a URL, or a function from a session "
                "id to a session) to worker_for()/activities_for()",
                type="UserError",
                non_retryable=True,
            )
        if isinstance(sessions, str):
            from stepswitch.sessions import open_session as from_url

            return from_url(sessions, session_id)
        return sessions(session_id)

    @activity.defn(name=names["session"])
    async def run_session(raw: dict[str, Any]) -> dict[str, Any]:
        call = read_call(SessionCall, raw)
        session = open_session(call.session_id)
        try:
            if call.op == "load":
                snap = await session.load(limit=call.limit)
                return {"items": write_items(snap.items), "version": snap.version,
                        "current_agent": snap.current_agent}
            version = await session.append(
                read_items(call.items), operation_id=call.operation_id,
                expected_version=call.expected_version, current_agent=call.current_agent,
            )
        except (StepswitchError, AssertionError) as exc:
            # a conflict, a reused operation id, a corrupt row: retrying cannot help
            raise _failure(exc, retryable=False) from exc
        return {"version": version}

    @activity.defn(name=names["stamp"])
    async def stamp() -> str:
        return digest

    made: list[Callable[..., Any]] = [call_model, run_hook, run_session, stamp]
    made.extend(tool_activity(ref, a) for ref, a in functions.items())
    flow = machine._flow
    if flow is not None:
        made.extend(_step_activity(flow, node, ref, tracer_provider)
                    for ref, node in step_refs(flow).items())
    return made


def step_refs(flow: FlowCore) -> dict[str, FlowNode]:
    """The flow's step nodes by import path (one activity each)."""
    return {n.ref: n for n in flow.flow.nodes if n.kind == "step" and n.ref}


def _step_activity(
    flow: FlowCore, node: FlowNode, ref: str, tracer_provider: Any
) -> Callable[..., Any]:
    """The activity of one step: the input validated into its type, the run context
    built as its declared type, and the output (and the context after) as JSON."""
    obj = flow.core.obj(ref)
    fn: Any = getattr(obj, "fn", obj)
    context_type: Any = getattr(obj, "context_type", None)
    where = f"step {node.name!r} ({ref})"
    adapters: list[Any] = []

    def context_of(raw: Any) -> Any:
        if context_type is None or context_type is Any:
            return raw
        if raw is None and isinstance(context_type, type):
            try:
                return context_type()
            except Exception as exc:
                raise ApplicationError(
                    f"{where} takes RunContext[{context_type.__name__}], and "
                    f"{context_type.__name__}() raised {type(exc).__name__}: {exc}; start "
                    "the run with RunInput(context=...), the context as JSON",
                    type="UserError", non_retryable=True,
                ) from None
        if not adapters:
            from pydantic import TypeAdapter

            adapters.append(TypeAdapter(context_type))
        try:
            return adapters[0].validate_python(raw)
        except ValueError as exc:
            raise ApplicationError(
                f"{where}: the run's context does not fit its RunContext type: {misfit(exc)}",
                type="UserError", non_retryable=True,
            ) from None

    @activity.defn(name=ref)
    async def run_step(raw: dict[str, Any]) -> dict[str, Any]:
        call = read_call(StepCall, raw)
        try:
            value = flow.input_adapter(node).validate_python(call.value)
        except ValueError as exc:
            raise ApplicationError(
                f"{where}: its input does not fit its input type: {misfit(exc)}",
                type="UserError", non_retryable=True,
            ) from None
        ctx: RunContext[Any] | None = None
        args: tuple[Any, ...] = (value,)
        if node.takes_context:
            ctx = RunContext(context_of(call.context), Usage())
            args = (ctx, value)
        span = _Span(tracer_provider, call.traceparent, f"{sc.SPAN_FLOW_STEP} {node.name}",
                     False, {sc.FLOW_NODE: node.name, sc.FLOW_NODE_KIND: "step"})
        # as in-process, a step that raised ends the run: not run again
        out = await _call_user(span, fn, node.is_async, args, {})
        reply: dict[str, Any] = {"value": jsonable(out)}
        if ctx is not None:
            reply["context"] = jsonable(ctx.context)
        return reply

    return run_step
