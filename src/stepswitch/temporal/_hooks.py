"""Tool guardrails, ``is_enabled`` gates and run/agent hooks on Temporal.

All three are user code that may do I/O, so, like input guardrails and instructions
functions, each call is a local activity: the workflow's resolver holds stand-ins whose
calls make a ``HookCall`` (:func:`stand_ins`, and :func:`remote_run_hooks` for the hooks
``worker_for(..., hooks=)`` gives), the driver runs it on the worker, and
:func:`perform` there calls the real object with the values rebuilt from JSON (the
agent's state, the tool, a ``ToolContext`` with the call's name, id and arguments, the
model response, the items). A stand-in exists only for the hook methods the real
object overrides, so a run pays an activity only for the events it listens to. The
verdicts cross back as JSON (``output_info`` as JSON values) and become objects of the
shape the loop reads.
"""

from __future__ import annotations

from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.context import RunContext, Usage
from stepswitch.ir import RunFunction
from stepswitch.lifecycle import HOOK_METHODS, AgentHooks, RunHooks
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.hooks import hook_set
from stepswitch.temporal._codec import (
    HookCall,
    jsonable,
    read_items,
    read_response,
    write_items,
    write_response,
)
from stepswitch.temporal._standins import Hook, HookRun

__all__ = ["KINDS", "perform", "remote_run_hooks", "stand_ins", "verdict"]

KINDS = frozenset({"tool_input_guardrail", "tool_output_guardrail", "is_enabled",
                   "run_hook", "agent_hook"})
"""The ``HookCall`` kinds this module performs."""


def _call(call: HookCall) -> Any:
    return HookRun(call)


class _ToolGuard:
    """A tool guardrail as the workflow sees it: called with its data, it asks the worker."""

    def __init__(self, kind: str, ref: str, original: Any) -> None:
        self.kind = kind
        self.ref = ref
        self.name = getattr(original, "name", ref)
        self.site = getattr(original, "site", None)

    def __call__(self, data: Any) -> Any:
        ctx = data.context
        args: list[Any] = [ctx.tool_name, ctx.tool_call_id, ctx.tool_arguments]
        if self.kind == "tool_output_guardrail":
            args.append(jsonable(data.output))
        return _call(HookCall(self.kind, self.ref, data.agent.agent, args, ctx.context))


def _tool_args(context: Any, tool: Any) -> list[Any]:
    return [tool.name, getattr(context, "tool_call_id", ""),
            getattr(context, "tool_arguments", "")]


def _encode(method: str, context: Any, rest: tuple[Any, ...]) -> list[Any]:
    """The arguments after ``(context, agent)`` of a hook method, as JSON."""
    if method in ("on_agent_end", "on_end"):
        return [jsonable(rest[0])]
    if method == "on_llm_start":
        return [rest[0], write_items(rest[1])]
    if method == "on_llm_end":
        return [write_response(rest[0])]
    if method == "on_tool_start":
        return _tool_args(context, rest[0])
    if method == "on_tool_end":
        return [*_tool_args(context, rest[0]), jsonable(rest[1])]
    return []


def _stand_in_method(kind: str, ref: str, method: str) -> Any:
    if method == "on_handoff" and kind == "run_hook":
        def handoff(self: Any, context: Any, from_agent: Any, to_agent: Any) -> Any:
            return _call(HookCall(kind, ref, from_agent.agent, [method, to_agent.agent],
                                  context.context))

        return handoff
    if method == "on_handoff":
        def agent_handoff(self: Any, context: Any, agent: Any, source: Any) -> Any:
            return _call(HookCall(kind, ref, source.agent, [method, agent.agent],
                                  context.context))

        return agent_handoff

    def hook(self: Any, context: Any, agent: Any, *rest: Any) -> Any:
        return _call(HookCall(kind, ref, agent.agent, [method, *_encode(method, context, rest)],
                              context.context))

    return hook


def _remote(original: Any, kind: str, ref: str) -> Any:
    """An instance of a subclass of our hooks base with a stand-in for each method
    ``original`` overrides (the others stay the base's no-ops, which the loop skips)."""
    which = "run" if kind == "run_hook" else "agent"
    found = hook_set(original, which)
    base: type = RunHooks if which == "run" else AgentHooks
    methods: dict[str, Any] = {}
    if found is not None:
        events = ("agent_start", "agent_end", "handoff", "tool_start", "tool_end",
                  "llm_start", "llm_end")
        for event, method in zip(events, HOOK_METHODS[which], strict=True):
            if getattr(found, event) is not None:
                methods[method] = _stand_in_method(kind, ref, method)
    cls = type(f"Remote{type(original).__name__}", (base,), methods)
    return cls()


def remote_run_hooks(hooks: Any) -> Any:
    """The workflow's stand-in for the worker's run hooks (``worker_for(..., hooks=)``)."""
    return _remote(hooks, "run_hook", "")


def stand_ins(core: MachineCore, resolver: dict[str, object]) -> None:
    """Put the stand-ins for ``core``'s tool guardrails, gates and agent hooks in the
    workflow's ``resolver``."""
    for s in core.ir.states:
        if s.hooks is not None:
            resolver[s.hooks] = _remote(core.obj(s.hooks), "agent_hook", s.hooks)
        for t in s.tools:
            if type(t.enabled) is str:
                resolver[t.enabled] = Hook("is_enabled", t.enabled)
            a = t.action
            if type(a) is RunFunction:
                for g in a.input_guardrails:
                    resolver[g.ref] = _ToolGuard("tool_input_guardrail", g.ref,
                                                 core.obj(g.ref))
                for g in a.output_guardrails:
                    resolver[g.ref] = _ToolGuard("tool_output_guardrail", g.ref,
                                                 core.obj(g.ref))


@dataclass(slots=True)
class _Verdict:
    """A tool guardrail's verdict back in the workflow (what ``behavior_of`` reads)."""

    output_info: Any
    behavior: dict[str, Any]


@dataclass(slots=True)
class _Misfit:
    """What a tool guardrail returned that is no verdict: its type's name, for the
    loop's error (``shown_type``)."""

    shown_type: str


def verdict(value: Any) -> Any:
    """The workflow's object for a tool guardrail's JSON verdict."""
    if "misfit" in value:
        return _Misfit(value["misfit"])
    return _Verdict(value["output_info"], dict(value["behavior"]))


async def perform(core: MachineCore, call: HookCall, run_hooks: Any) -> Any:
    """Call, on the worker, the real guardrail, gate or hook a ``HookCall`` names."""
    from stepswitch.tool_guardrails import (
        ToolContext,
        ToolInputGuardrailData,
        ToolOutputGuardrailData,
        behavior_of,
    )

    ctx: RunContext[Any] = RunContext(call.context, Usage())
    state = core.state(call.agent)
    if call.kind == "is_enabled":
        return bool(await _value(core.obj(call.ref)(ctx, state)))
    if call.kind in ("tool_input_guardrail", "tool_output_guardrail"):
        name, call_id, arguments = call.args[:3]
        tctx = ToolContext(call.context, Usage(), None, name, call_id, arguments)
        data: Any = (ToolInputGuardrailData(tctx, state) if call.kind == "tool_input_guardrail"
                     else ToolOutputGuardrailData(tctx, state, call.args[3]))
        found = await _value(core.obj(call.ref)(data))
        if behavior_of(found) is None:
            return {"misfit": "None" if found is None else type(found).__name__}
        return {"output_info": jsonable(found.output_info), "behavior": dict(found.behavior)}
    hooks = run_hooks if call.kind == "run_hook" else core.obj(call.ref)
    method, *rest = call.args
    fn = getattr(hooks, method)
    if method == "on_handoff":
        target = core.state(rest[0])
        if call.kind == "run_hook":
            await _value(fn(context=ctx, from_agent=state, to_agent=target))
        else:
            await _value(fn(ctx, agent=target, source=state))
        return None
    if method in ("on_tool_start", "on_tool_end"):
        tool_name, call_id, arguments = rest[:3]
        tctx = ToolContext(call.context, Usage(), None, tool_name, call_id, arguments)
        tool = _tool(core, call.agent, tool_name)
        extra = rest[3:]
        await _value(fn(tctx, state, tool, *extra))
        return None
    if method == "on_llm_start":
        await _value(fn(ctx, state, rest[0], read_items(rest[1])))
    elif method == "on_llm_end":
        await _value(fn(ctx, state, read_response(rest[0])))
    else:  # on_agent_start / on_start, on_agent_end / on_end
        await _value(fn(ctx, state, *rest))
    return None


def _tool(core: MachineCore, agent: str, name: str) -> Any:
    entry = core.tables[agent][name]
    if type(entry.action) is RunFunction:
        return core.obj(entry.action.ref)
    return entry


async def _value(value: Any) -> Any:
    import inspect

    if inspect.isawaitable(value):
        value = await value
    return value
