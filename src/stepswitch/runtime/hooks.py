"""Run hooks and agent hooks on the trusted side: which methods a hooks object really
has, and the points of the loop that call them.

A hooks object is read once (:func:`hook_set`): only the methods its class overrides
are kept, so a run with hooks that care about one event pays for that event alone, and
a run without hooks pays one ``is None`` test per point. Each point calls the run's
hooks, then the agent's (the Agents SDK starts the two together; here they run one
after the other, in that order, except ``on_llm_end``, where the SDK lists the agent's
first). A hook that raises ends the run like any user code that raises: the exception
keeps its type and carries ``run_data`` (the loop attaches it).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from stepswitch.ir import StateIR
from stepswitch.lifecycle import HOOK_METHODS
from stepswitch.runtime.run import Run, call_hook

__all__ = [
    "HookSet",
    "agent_end",
    "agent_start",
    "handoff",
    "hook_set",
    "llm_end",
    "llm_start",
    "tool_end",
    "tool_start",
]

_NO_OP_OWNERS = ("RunHooks.", "AgentHooks.", "RunHooksBase.", "AgentHooksBase.")
_NO_OP_MODULES = ("stepswitch.lifecycle", "agents.lifecycle")


class HookSet:
    """The overridden methods of one hooks object, by event (None: not overridden)."""

    __slots__ = ("agent_end", "agent_start", "handoff", "llm_end", "llm_start", "obj",
                 "tool_end", "tool_start")

    def __init__(self, obj: Any, kind: str) -> None:
        self.obj = obj
        names = HOOK_METHODS[kind]
        found = [_method(obj, name) for name in names]
        (self.agent_start, self.agent_end, self.handoff, self.tool_start, self.tool_end,
         self.llm_start, self.llm_end) = found

    def __bool__(self) -> bool:
        return any(getattr(self, name) is not None for name in self.__slots__ if name != "obj")


def _method(obj: Any, name: str) -> Any:
    """The bound method ``name`` of ``obj``, or None when it is the base class's no-op."""
    fn = getattr(type(obj), name, None)
    if fn is None:
        return None
    qualname = getattr(fn, "__qualname__", "")
    if qualname.startswith(_NO_OP_OWNERS) and getattr(fn, "__module__", "") in _NO_OP_MODULES:
        return None
    return getattr(obj, name)


def hook_set(obj: Any, kind: str) -> HookSet | None:
    """What ``obj`` (checked hooks of ``kind``: ``"run"`` or ``"agent"``) listens to; None
    when it overrides nothing."""
    found = HookSet(obj, kind)
    return found if found else None


def agent_start(run: Run, hooks: HookSet | None, own: HookSet | None, state: StateIR
                ) -> Generator[Any, Any, None]:
    ctx = run.ctx
    if hooks is not None and hooks.agent_start is not None:
        yield from call_hook(hooks.agent_start(ctx, state))
    if own is not None and own.agent_start is not None:
        yield from call_hook(own.agent_start(ctx, state))


def agent_end(run: Run, hooks: HookSet | None, own: HookSet | None, state: StateIR,
              output: Any) -> Generator[Any, Any, None]:
    ctx = run.ctx
    if hooks is not None and hooks.agent_end is not None:
        yield from call_hook(hooks.agent_end(ctx, state, output))
    if own is not None and own.agent_end is not None:
        yield from call_hook(own.agent_end(ctx, state, output))


def llm_start(run: Run, hooks: HookSet | None, own: HookSet | None, state: StateIR,
              instructions: str | None, input_items: Any) -> Generator[Any, Any, None]:
    ctx = run.ctx
    if hooks is not None and hooks.llm_start is not None:
        yield from call_hook(hooks.llm_start(ctx, state, instructions, list(input_items)))
    if own is not None and own.llm_start is not None:
        yield from call_hook(own.llm_start(ctx, state, instructions, list(input_items)))


def llm_end(run: Run, hooks: HookSet | None, own: HookSet | None, state: StateIR,
            response: Any) -> Generator[Any, Any, None]:
    ctx = run.ctx
    if own is not None and own.llm_end is not None:
        yield from call_hook(own.llm_end(ctx, state, response))
    if hooks is not None and hooks.llm_end is not None:
        yield from call_hook(hooks.llm_end(ctx, state, response))


def tool_start(hooks: HookSet | None, own: HookSet | None, ctx: Any, state: StateIR,
               tool: Any) -> Generator[Any, Any, None]:
    if hooks is not None and hooks.tool_start is not None:
        yield from call_hook(hooks.tool_start(ctx, state, tool))
    if own is not None and own.tool_start is not None:
        yield from call_hook(own.tool_start(ctx, state, tool))


def tool_end(hooks: HookSet | None, own: HookSet | None, ctx: Any, state: StateIR,
             tool: Any, result: Any) -> Generator[Any, Any, None]:
    if hooks is not None and hooks.tool_end is not None:
        yield from call_hook(hooks.tool_end(ctx, state, tool, result))
    if own is not None and own.tool_end is not None:
        yield from call_hook(own.tool_end(ctx, state, tool, result))


def handoff(run: Run, hooks: HookSet | None, own: HookSet | None, source: StateIR,
            target: StateIR) -> Generator[Any, Any, None]:
    """The run hooks' ``on_handoff(ctx, from_agent, to_agent)`` and the source agent's
    ``on_handoff(ctx, agent=target, source=source)`` (as the SDK calls them)."""
    ctx = run.ctx
    if hooks is not None and hooks.handoff is not None:
        yield from call_hook(hooks.handoff(context=ctx, from_agent=source, to_agent=target))
    if own is not None and own.handoff is not None:
        yield from call_hook(own.handoff(ctx, agent=target, source=source))
