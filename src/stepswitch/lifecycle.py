"""Run hooks and agent hooks, with the Agents SDK's method names.

Subclass :class:`RunHooks` and pass it to ``machine.run(..., hooks=MyHooks())`` (every
driver takes it, a generated runner's too) to hear of every agent of a run, nested
agent-tool runs included; subclass :class:`AgentHooks` and declare
``ss.Agent(..., hooks=MyAgentHooks())`` to hear of one agent. Override the methods you
need; each may be ``async`` or plain. The ``agent`` they get is the agent's state (its
``.name`` is the agent's name), ``tool`` the function tool (or, for an agent tool, the
table row, whose ``.name`` is the tool's name), and ``context`` the run's
:class:`~stepswitch.context.RunContext` (a ``ToolContext``, with ``tool_name``,
``tool_call_id`` and ``tool_arguments``, for ``on_tool_start`` / ``on_tool_end``).

When they run, in the SDK's order: ``on_agent_start`` / ``on_start`` before an agent's
first model call of a run and after each handoff to it; ``on_llm_start`` before each
model call and ``on_llm_end`` after it; ``on_tool_start`` before a function or agent tool
runs (after its approval, validation and input guardrails) and ``on_tool_end`` with its
output (after its output guardrails); ``on_handoff`` when a handoff is taken (the run
hooks' ``(context, from_agent, to_agent)``; the source agent's hooks' ``(context, agent,
source)``, with ``agent`` the new agent, as the SDK calls it); ``on_agent_end`` /
``on_end`` with the final output, after the output guardrails. A hook that raises ends
the run, with ``run_data`` (see docs/runtime.md).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

__all__ = ["HOOK_METHODS", "AgentHooks", "RunHooks", "check_hooks", "hooks_kind"]

TContext = TypeVar("TContext")


class RunHooks(Generic[TContext]):
    """Callbacks on every agent of a run (``run(..., hooks=)``); override what you need."""

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        """Before the agent's first model call (each time the current agent changes)."""

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        """When the agent gives the run's final output."""

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        """When a handoff from ``from_agent`` to ``to_agent`` is taken."""

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        """Just before a function tool or agent tool runs."""

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        """Just after a function tool or agent tool ran, with its output."""

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: str | None, input_items: list[Any]
    ) -> None:
        """Just before the model is called for the agent."""

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        """Just after the model answered for the agent."""


class AgentHooks(Generic[TContext]):
    """Callbacks on one agent (``Agent(hooks=)``); override what you need."""

    async def on_start(self, context: Any, agent: Any) -> None:
        """Before this agent's first model call (each time a run moves to it)."""

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        """When this agent gives the run's final output."""

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        """When this agent hands off: ``agent`` is the new agent, ``source`` this one (the
        Agents SDK calls the source agent's hook this way)."""

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        """Just before one of this agent's tools runs."""

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        """Just after one of this agent's tools ran, with its output."""

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: str | None, input_items: list[Any]
    ) -> None:
        """Just before the model is called for this agent."""

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        """Just after the model answered for this agent."""


HOOK_METHODS: dict[str, tuple[str, ...]] = {
    "run": ("on_agent_start", "on_agent_end", "on_handoff", "on_tool_start", "on_tool_end",
            "on_llm_start", "on_llm_end"),
    "agent": ("on_start", "on_end", "on_handoff", "on_tool_start", "on_tool_end",
              "on_llm_start", "on_llm_end"),
}
"""The methods each kind of hooks has (the Agents SDK's ``RunHooksBase`` and
``AgentHooksBase``, same names)."""


_SDK_BASES = {"run": "RunHooksBase", "agent": "AgentHooksBase"}
_OURS = {"run": RunHooks, "agent": AgentHooks}
_NAMES = {"run": "ss.RunHooks", "agent": "ss.AgentHooks"}


def hooks_kind(obj: object) -> str | None:
    """``"run"`` or ``"agent"`` for an instance of ours or of the Agents SDK's hook base
    classes (read by name: the SDK is not imported here); None for anything else."""
    if isinstance(obj, RunHooks):
        return "run"
    if isinstance(obj, AgentHooks):
        return "agent"
    for cls in type(obj).__mro__:
        if cls.__module__ == "agents.lifecycle":
            for kind, name in _SDK_BASES.items():
                if cls.__name__ == name:
                    return kind
    return None


def check_hooks(obj: object, kind: str, what: str) -> None:
    """``obj`` is hooks of ``kind`` whose ``on_*`` methods are all hook methods; else a
    ``UserError`` saying what ``what`` (the declaration, with its place) was given.

    A misspelt method (``on_tool_started``) would never be called: refused, not ignored."""
    from stepswitch.errors import UserError

    found = hooks_kind(obj)
    wanted = _NAMES[kind]
    if found is None:
        raise UserError(
            f"{what}: hooks: expected an instance of a subclass of {wanted}, got "
            f"{type(obj).__name__} {_shown(obj)}"
        )
    if found != kind:
        other = _NAMES[found]
        takes = ("run(..., hooks=) takes run hooks" if kind == "run"
                 else "Agent(hooks=) takes agent hooks")
        raise UserError(
            f"{what}: hooks: expected {wanted}, got a {other} ({type(obj).__name__}); {takes}"
        )
    known = HOOK_METHODS[kind]
    for cls in type(obj).__mro__:
        if cls is object or cls.__module__ in ("stepswitch.lifecycle", "agents.lifecycle"):
            continue
        for name in vars(cls):
            if name.startswith("on_") and name not in known:
                raise UserError(
                    f"{what}: hooks: {type(obj).__name__}.{name} is no hook method, so it "
                    f"would never be called; {wanted} has {', '.join(known)}"
                )


def _shown(obj: object) -> str:
    try:
        text = repr(obj)
    except Exception:
        return ""
    return text if len(text) <= 60 else text[:57] + "..."
