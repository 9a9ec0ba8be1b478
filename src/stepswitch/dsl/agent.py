"""Agents and their edges: handoffs (control moves, no return) and agent tools (a
nested run that returns a value).

These are builders: convenient, mutable, cheap to declare. ``Workflow`` snapshots
them into a frozen spec. A target may be an ``Agent`` or an agent's name, so cycles
are easy to write; a name that matches no agent is a diagnostic of ``check()``, not
an exception here.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from stepswitch._dataclass import dataclass
from stepswitch._site import Site, caller_site
from stepswitch.dsl._validate import (
    plain_fn,
    plain_int,
    plain_str,
    require_name,
    validate_fields,
)
from stepswitch.dsl.guardrails import InputGuardrail, OutputGuardrail
from stepswitch.dsl.hosted import HostedTool
from stepswitch.dsl.tools import FunctionTool, check_is_enabled, ctx_agent_misfit
from stepswitch.errors import UserError
from stepswitch.lifecycle import check_hooks

if TYPE_CHECKING:
    # loaded by whoever makes one; the DSL itself only tells one apart (_is_settings)
    from stepswitch.settings import ModelSettings

__all__ = [
    "Agent",
    "AgentTool",
    "Handoff",
    "StopAtTools",
    "ToolUseBehavior",
    "agent_tool",
    "handoff",
]


@dataclass(frozen=True, slots=True)
class StopAtTools:
    """Stop the run with a tool's output when the model calls one of these tools."""

    stop_at_tool_names: tuple[str, ...]

    def __init__(self, stop_at_tool_names: Sequence[str]) -> None:
        # a bare string is a Sequence[str] too, and would become one name per letter
        names = () if isinstance(stop_at_tool_names, str) else tuple(stop_at_tool_names)
        if (not names and stop_at_tool_names) or not all(isinstance(n, str) for n in names):
            raise UserError(
                f"StopAtTools at {caller_site()}: expected a list of tool names, got "
                f"{type(stop_at_tool_names).__name__} {stop_at_tool_names!r}; "
                f"write StopAtTools([...])"
            )
        object.__setattr__(self, "stop_at_tool_names", names)


ToolUseBehavior: TypeAlias = (
    Literal["run_llm_again", "stop_on_first_tool"] | StopAtTools | Callable[..., Any]
)


class _EdgeDecl:
    """What handoffs and agent tools share: a target by object or by name. Not a
    dataclass itself: each subclass declares ``target`` first, so each is a dataclass
    without a dataclass base, which ``stepswitch._dataclass`` makes itself (a subclass of
    a dataclass it hands to :mod:`dataclasses`); the same fields, in the same order."""

    target: Agent | str

    @property
    def target_name(self) -> str:
        return self.target if isinstance(self.target, str) else self.target.name


@dataclass(repr=False, eq=False)
class Handoff(_EdgeDecl):
    """A handoff edge to ``target``. Build it with :func:`handoff`."""

    target: Agent | str
    _: KW_ONLY
    max_uses: int | None
    tool_name: str | None
    description: str | None
    input_type: Any
    on_handoff: Callable[..., Any] | None
    input_filter: Callable[..., Any] | None
    site: Site
    is_enabled: bool | Callable[..., Any] = True
    """Whether the model is offered the handoff: a bool, or ``fn(ctx, agent) -> bool``
    asked every turn."""

    def __repr__(self) -> str:
        return f"Handoff(target={self.target_name!r}, max_uses={self.max_uses!r})"


_HANDOFF_EXPECT = {
    "target": "an Agent or an agent's name",
    "max_uses": "a positive int (how many times the handoff may be taken in a run) or None",
    "tool_name": "a non-empty string",
    "description": "a string",
    "on_handoff": "a function",
    "input_filter": "a function",
}


def handoff(
    target: Agent | str | None = None,
    *,
    max_uses: int | None = None,
    tool_name: str | None = None,
    description: str | None = None,
    input_type: Any = None,
    on_handoff: Callable[..., Any] | None = None,
    input_filter: Callable[..., Any] | None = None,
    agent: Agent | str | None = None,
    tool_name_override: str | None = None,
    tool_description_override: str | None = None,
    is_enabled: bool | Callable[..., Any] = True,
) -> Handoff:
    """A handoff to ``target`` (an ``Agent`` or a name), offered to the model as the tool
    ``transfer_to_<agent>`` unless ``tool_name`` says otherwise.

    ``max_uses=N`` lets the run take it N times; after that it is no longer offered.
    ``input_type`` makes the model send typed arguments, passed to
    ``on_handoff(ctx, input)``; ``input_filter`` rewrites what the next agent sees.
    ``is_enabled``: a bool, or ``fn(ctx, agent) -> bool`` (sync or async) asked every
    turn; while it is false the model is not offered the handoff (a call of it is a call
    of an unknown tool). The Agents SDK's spellings work too: ``agent=`` for ``target``,
    ``tool_name_override=`` and ``tool_description_override=``.
    """
    site = caller_site()
    target = _sdk_alias("handoff", site, "target", target, "agent", agent)
    tool_name = _sdk_alias("handoff", site, "tool_name", tool_name, "tool_name_override",
                           tool_name_override)
    description = _sdk_alias("handoff", site, "description", description,
                             "tool_description_override", tool_description_override)
    if target is None:
        raise UserError(f"handoff at {site}: missing the target: handoff(agent) or "
                        "handoff(\"agent name\")")
    if not _plain_handoff(target, max_uses, tool_name, description, on_handoff, input_filter):
        validate_fields(
            "HandoffArgs",
            {
                "target": target,
                "max_uses": max_uses,
                "tool_name": tool_name,
                "description": description,
                "on_handoff": on_handoff,
                "input_filter": input_filter,
            },
            what="handoff",
            site=site,
            expect=_HANDOFF_EXPECT,
        )
    if isinstance(target, str):
        require_name(target, what="handoff", field="target", site=site)
    if isinstance(max_uses, bool):
        raise UserError(f"handoff at {site}: max_uses: expected a positive int, got bool")
    if is_enabled is not True:
        check_is_enabled(is_enabled, "handoff", site)
    if input_type is not None and on_handoff is None:
        raise UserError(
            f"handoff at {site}: input_type needs an on_handoff function to receive the input"
        )
    if on_handoff is not None:
        wanted = 2 if input_type is not None else 1
        arity = _arity(on_handoff)
        if arity is not None and arity != wanted:
            shape = "(ctx, input)" if input_type is not None else "(ctx)"
            raise UserError(
                f"handoff at {site}: on_handoff must take {shape}, it takes {arity} parameter(s)"
            )
    return Handoff(
        target,
        max_uses=max_uses,
        tool_name=tool_name,
        description=description,
        input_type=input_type,
        on_handoff=on_handoff,
        input_filter=input_filter,
        site=site,
        is_enabled=is_enabled,
    )


def _sdk_alias(what: str, site: Site, ours: str, value: Any, theirs: str, sdk: Any) -> Any:
    """``value``, or the same setting under the Agents SDK's name; both is an error."""
    if sdk is None:
        return value
    if value is not None:
        raise UserError(
            f"{what} at {site}: give {ours}= or {theirs}= (the Agents SDK's spelling), not both"
        )
    return sdk


def _plain_handoff(
    target: Any, max_uses: Any, tool_name: Any, description: Any, on_handoff: Any,
    input_filter: Any,
) -> bool:
    """Plainly what ``HandoffArgs`` accepts (False: ask it; see :func:`_plain_agent_fields`)."""
    return (
        _plain_target(target)
        and plain_int(max_uses)
        and plain_str(tool_name, nonempty=True)
        and plain_str(description)
        and plain_fn(on_handoff)
        and plain_fn(input_filter)
    )


def _plain_agent_tool(
    target: Any, name: Any, description: Any, max_turns: Any, max_depth: Any,
    needs_approval: Any, output_extractor: Any,
) -> bool:
    """Plainly what ``AgentToolArgs`` accepts."""
    return (
        _plain_target(target)
        and plain_str(name, nonempty=True)
        and plain_str(description)
        and plain_int(max_turns)
        and plain_int(max_depth)
        and (type(needs_approval) is bool or callable(needs_approval))
        and plain_fn(output_extractor)
    )


def _plain_target(target: Any) -> bool:
    """An ``Agent`` or a str: a target the argument models accept."""
    return type(target) is str or isinstance(target, Agent)


def _is_settings(value: Any) -> bool:
    """``value`` is a ``ModelSettings`` (whose module is loaded if one was made)."""
    settings = sys.modules.get("stepswitch.settings")
    return settings is not None and isinstance(value, settings.ModelSettings)


def _arity(fn: Callable[..., Any]) -> int | None:
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None


@dataclass(repr=False, eq=False)
class AgentTool(_EdgeDecl):
    """An agent called as a tool: a nested run of ``target`` that returns a value.

    Build it with ``agent.as_tool(...)`` or :func:`agent_tool` (by name, for recursion).
    """

    target: Agent | str
    _: KW_ONLY
    name: str | None
    description: str | None
    max_turns: int | None
    max_depth: int | None
    needs_approval: bool | Callable[..., Any]
    output_extractor: Callable[..., Any] | None
    parameters: Any
    site: Site
    is_enabled: bool | Callable[..., Any] = True
    """Whether the model is offered the tool: a bool, or ``fn(ctx, agent) -> bool``
    asked every turn."""

    def __repr__(self) -> str:
        return f"AgentTool(target={self.target_name!r}, name={self.name!r})"


_AGENT_TOOL_EXPECT = {
    "target": "an Agent or an agent's name",
    "name": "a non-empty string",
    "description": "a string",
    "max_turns": "a positive int or None",
    "max_depth": "a positive int or None",
    "needs_approval": "a bool or a function deciding per call",
    "output_extractor": "a function taking the nested RunResult",
}


def agent_tool(
    target: Agent | str,
    name: str | None = None,
    description: str | None = None,
    *,
    max_turns: int | None = None,
    max_depth: int | None = None,
    needs_approval: bool | Callable[..., Any] = False,
    output_extractor: Callable[..., Any] | None = None,
    parameters: Any = None,
    is_enabled: bool | Callable[..., Any] = True,
) -> AgentTool:
    """``target.as_tool(...)`` where ``target`` may be an agent's name.

    The tool takes ``{"input": str}`` unless ``parameters`` gives a type. The nested
    run gets ``max_turns`` (default: the workflow's) and counts toward ``max_depth``.
    """
    return _agent_tool(
        target,
        name,
        description,
        max_turns=max_turns,
        max_depth=max_depth,
        needs_approval=needs_approval,
        output_extractor=output_extractor,
        parameters=parameters,
        site=caller_site(),
        is_enabled=is_enabled,
    )


def _agent_tool(
    target: Agent | str,
    name: str | None,
    description: str | None,
    *,
    max_turns: int | None,
    max_depth: int | None,
    needs_approval: bool | Callable[..., Any],
    output_extractor: Callable[..., Any] | None,
    parameters: Any,
    site: Site,
    is_enabled: bool | Callable[..., Any] = True,
) -> AgentTool:
    if is_enabled is not True:
        check_is_enabled(is_enabled, "agent tool", site)
    if not _plain_agent_tool(
        target, name, description, max_turns, max_depth, needs_approval, output_extractor
    ):
        validate_fields(
            "AgentToolArgs",
            {
                "target": target,
                "name": name,
                "description": description,
                "max_turns": max_turns,
                "max_depth": max_depth,
                "needs_approval": needs_approval,
                "output_extractor": output_extractor,
            },
            what="agent tool",
            site=site,
            expect=_AGENT_TOOL_EXPECT,
        )
    if isinstance(target, str):
        require_name(target, what="agent tool", field="target", site=site)
    return AgentTool(
        target,
        name=name,
        description=description,
        max_turns=max_turns,
        max_depth=max_depth,
        needs_approval=needs_approval,
        output_extractor=output_extractor,
        parameters=parameters,
        site=site,
        is_enabled=is_enabled,
    )


_AGENT_EXPECT = {
    "instructions": "a string or a function (ctx, agent) -> str",
    "tools": "a @function_tool, an agent tool (agent.as_tool(...)) or a hosted tool "
             "(ss.WebSearchTool(), ...)",
    "handoffs": "an Agent, an agent's name, or handoff(...)",
    "model_settings": "ss.ModelSettings(...)",
    "handoff_description": "a string",
    "input_guardrails": "an @input_guardrail",
    "output_guardrails": "an @output_guardrail",
    "tool_use_behavior": "'run_llm_again', 'stop_on_first_tool', StopAtTools([...]) or a function",
    "ignore": "a list of diagnostic codes",
}


class Agent:
    """An agent: instructions, tools, handoffs and an optional structured output type.

    ``tools`` holds ``@function_tool`` functions, agent tools and hosted tools
    (``ss.WebSearchTool()``, ... run on OpenAI's side); ``handoffs`` holds
    agents, agent names, or :func:`handoff` edges with budgets. ``model`` names a model
    (or is a model object) for this agent alone; otherwise the run's model is used.
    """

    def __init__(
        self,
        name: str,
        instructions: str | Callable[..., Any] | None = None,
        *,
        tools: Sequence[FunctionTool | AgentTool | HostedTool] = (),
        handoffs: Sequence[Agent | Handoff | str] = (),
        output_type: Any = None,
        model: Any = None,
        model_settings: ModelSettings | None = None,
        handoff_description: str | None = None,
        input_guardrails: Sequence[InputGuardrail] = (),
        output_guardrails: Sequence[OutputGuardrail] = (),
        tool_use_behavior: ToolUseBehavior = "run_llm_again",
        ignore: Sequence[str] = (),
        mcp_servers: Sequence[Any] = (),
        hooks: Any = None,
    ) -> None:
        site = caller_site()
        _check_agent(
            name,
            site,
            instructions=instructions,
            tools=tools,
            handoffs=handoffs,
            model=model,
            model_settings=model_settings,
            handoff_description=handoff_description,
            input_guardrails=input_guardrails,
            output_guardrails=output_guardrails,
            tool_use_behavior=tool_use_behavior,
            ignore=ignore,
        )
        if isinstance(output_type, str):  # a forward reference cannot be resolved here
            raise UserError(
                f"Agent({name!r}) at {site}: output_type: expected a type (a pydantic model, "
                f"a dataclass, list[str], ...), got the string {output_type!r}; pass the "
                "class itself"
            )
        self.name = name
        self.instructions = instructions
        self.tools: list[FunctionTool | AgentTool | HostedTool] = list(tools)
        self.handoffs: list[Agent | Handoff | str] = list(handoffs)
        self.output_type = output_type
        self.model = model
        self.model_settings = model_settings
        self.handoff_description = handoff_description
        self.input_guardrails: list[InputGuardrail] = list(input_guardrails)
        self.output_guardrails: list[OutputGuardrail] = list(output_guardrails)
        self.tool_use_behavior = tool_use_behavior
        self.ignore: list[str] = list(ignore)
        self.mcp_servers: list[Any] = _mcp_servers(name, site, mcp_servers)
        """``ss.MCPServerStdio`` / ``ss.MCPServerStreamableHttp``: their locked tools are
        this agent's tools too (see docs/mcp.md)."""
        if hooks is not None:
            check_hooks(hooks, "agent", f"Agent({name!r}) at {site}")
        self.hooks = hooks
        """An ``ss.AgentHooks`` (or the Agents SDK's ``AgentHooks``): callbacks on this
        agent's turns, tools, handoffs and final output."""
        self.site = site

    def _recheck(self) -> None:
        """Check the fields again as they are now: an agent is a mutable builder, and
        ``agent.handoffs.append(3)`` after the declaration must be a located
        ``UserError`` when the workflow is built, not a crash deep in a later stage.
        The common case (nothing wrong) is a few type checks."""
        if (
            type(self.name) is str
            and self.name.strip()
            and type(self.tools) is list
            and type(self.handoffs) is list
            and type(self.input_guardrails) is list
            and type(self.output_guardrails) is list
            and type(self.ignore) is list
            and (self.model is None or type(self.model) is str
                 or hasattr(self.model, "get_response"))
            and _plain_agent_fields(
                self.instructions, self.tools, self.handoffs, self.model_settings,
                self.handoff_description, self.input_guardrails, self.output_guardrails,
                self.tool_use_behavior, self.ignore,
            )
        ):
            self._recheck_targets()
            return
        _check_agent(
            self.name,
            self.site,
            changed=True,
            instructions=self.instructions,
            tools=self.tools,
            handoffs=self.handoffs,
            model=self.model,
            model_settings=self.model_settings,
            handoff_description=self.handoff_description,
            input_guardrails=self.input_guardrails,
            output_guardrails=self.output_guardrails,
            tool_use_behavior=self.tool_use_behavior,
            ignore=self.ignore,
        )
        self._recheck_targets()

    def _recheck_targets(self) -> None:
        if self.hooks is not None:
            check_hooks(self.hooks, "agent",
                        f"Agent({self.name!r}) (changed after its declaration) at {self.site}")
        for edge in [*self.handoffs, *self.tools]:
            if isinstance(edge, Handoff | AgentTool) and not isinstance(edge.target, Agent | str):
                kind = "handoff" if isinstance(edge, Handoff) else "agent tool"
                raise UserError(
                    f"{kind} at {edge.site} (changed after its declaration): target: "
                    f"expected an Agent or an agent's name, got {type(edge.target).__name__}"
                )

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        max_turns: int | None = None,
        max_depth: int | None = None,
        needs_approval: bool | Callable[..., Any] = False,
        output_extractor: Callable[..., Any] | None = None,
        parameters: Any = None,
        tool_name: str | None = None,
        tool_description: str | None = None,
        custom_output_extractor: Callable[..., Any] | None = None,
        is_enabled: bool | Callable[..., Any] = True,
    ) -> AgentTool:
        """This agent as a tool another agent can call (a nested run returning a value).

        ``is_enabled``: a bool, or ``fn(ctx, agent) -> bool`` asked every turn (the
        model is offered the tool only while it holds). The Agents SDK's spellings work
        too: ``tool_name=``, ``tool_description=`` and ``custom_output_extractor=``.
        """
        site = caller_site()
        name = _sdk_alias("as_tool", site, "name", name, "tool_name", tool_name)
        description = _sdk_alias("as_tool", site, "description", description,
                                 "tool_description", tool_description)
        output_extractor = _sdk_alias("as_tool", site, "output_extractor", output_extractor,
                                      "custom_output_extractor", custom_output_extractor)
        return _agent_tool(
            self,
            name,
            description,
            max_turns=max_turns,
            max_depth=max_depth,
            needs_approval=needs_approval,
            output_extractor=output_extractor,
            parameters=parameters,
            site=site,
            is_enabled=is_enabled,
        )

    def clone(self, **changes: Any) -> Agent:
        """A new agent with these fields replaced (the Agents SDK's ``Agent.clone``).

        Lists are copied, so appending to the clone's tools leaves this agent alone. The
        clone's declaration site is the line that called ``clone``.
        """
        fields = {name: getattr(self, name) for name in _CLONE_FIELDS}
        unknown = sorted(set(changes) - set(fields))
        if unknown:
            raise UserError(
                f"Agent({self.name!r}).clone at {caller_site()}: unknown field(s) "
                f"{', '.join(unknown)}; an Agent has {', '.join(_CLONE_FIELDS)}"
            )
        fields.update(changes)
        for name in ("tools", "handoffs", "input_guardrails", "output_guardrails", "ignore",
                     "mcp_servers"):
            if name not in changes:
                fields[name] = list(fields[name])
        return Agent(**fields)

    def __class_getitem__(cls, context_type: Any) -> type[Agent]:
        """``Agent[MyContext](...)`` as in the Agents SDK: the context type is for type
        checkers; the workflow's ``context_type`` is what the analyzer checks against."""
        return cls

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r})"


_CLONE_FIELDS = (
    "name", "instructions", "tools", "handoffs", "output_type", "model", "model_settings",
    "handoff_description", "input_guardrails", "output_guardrails", "tool_use_behavior",
    "ignore", "mcp_servers", "hooks",
)


def _mcp_servers(name: str, site: Site, servers: Any) -> list[Any]:
    if not servers:
        return []
    from stepswitch.dsl.servers import ToolServer

    if isinstance(servers, str | bytes) or not isinstance(servers, Sequence) or not all(
        isinstance(s, ToolServer) for s in servers
    ):
        raise UserError(
            f"Agent({name!r}) at {site}: mcp_servers: expected a list of ss.MCPServerStdio "
            f"or ss.MCPServerStreamableHttp, got {servers!r}"
        )
    return list(servers)


_HANDOFF_KINDS: tuple[type, ...] = ()  # set below, once Agent exists


def _plain_agent_fields(
    instructions: Any,
    tools: Sequence[Any],
    handoffs: Sequence[Any],
    model_settings: Any,
    handoff_description: Any,
    input_guardrails: Sequence[Any],
    output_guardrails: Sequence[Any],
    tool_use_behavior: Any,
    ignore: Sequence[Any],
) -> bool:
    """The agent's fields are of the plain kinds ``AgentArgs`` accepts: a few type tests
    instead of building and running the pydantic model (bench/README.md). False sends them
    to the model, which accepts or explains (a subclass, say, is accepted there)."""
    return (
        (instructions is None or type(instructions) is str or callable(instructions))
        and all(type(t) is FunctionTool or type(t) is AgentTool or isinstance(t, HostedTool)
                for t in tools)
        and all(type(h) in _HANDOFF_KINDS for h in handoffs)
        and (model_settings is None or _is_settings(model_settings))
        and plain_str(handoff_description)
        and all(type(g) is InputGuardrail for g in input_guardrails)
        and all(type(g) is OutputGuardrail for g in output_guardrails)
        and (
            tool_use_behavior in ("run_llm_again", "stop_on_first_tool")
            if type(tool_use_behavior) is str
            else type(tool_use_behavior) is StopAtTools or callable(tool_use_behavior)
        )
        and all(type(c) is str for c in ignore)
    )


def _check_agent(
    name: Any,
    site: Site,
    *,
    changed: bool = False,
    instructions: Any,
    tools: Any,
    handoffs: Any,
    model: Any,
    model_settings: Any,
    handoff_description: Any,
    input_guardrails: Any,
    output_guardrails: Any,
    tool_use_behavior: Any,
    ignore: Any,
) -> None:
    """The declaration-time checks of an agent's fields; a ``UserError`` naming ``what``,
    the declaration's site and each bad field (and that it ``changed`` since)."""
    suffix = " (changed after its declaration)" if changed else ""
    require_name(name, what="Agent" + suffix, field="name", site=site)
    what = f"Agent({name!r}){suffix}"
    for field, value in (
        ("tools", tools),
        ("handoffs", handoffs),
        ("input_guardrails", input_guardrails),
        ("output_guardrails", output_guardrails),
        ("ignore", ignore),
    ):
        if type(value) in (list, tuple):  # the common case, without ABC checks
            continue
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise UserError(
                f"{what} at {site}: {field}: expected a list, "
                f"got {type(value).__name__} {value!r}"
            )
    if not _plain_agent_fields(
        instructions, tools, handoffs, model_settings, handoff_description,
        input_guardrails, output_guardrails, tool_use_behavior, ignore,
    ):
        validate_fields(
            "AgentArgs",
            {
                "instructions": instructions,
                "tools": list(tools),
                "handoffs": list(handoffs),
                "model_settings": model_settings,
                "handoff_description": handoff_description,
                "input_guardrails": list(input_guardrails),
                "output_guardrails": list(output_guardrails),
                "tool_use_behavior": tool_use_behavior,
                "ignore": list(ignore),
            },
            what=what,
            site=site,
            expect=_AGENT_EXPECT,
        )
    if model is not None and not isinstance(model, str) and not hasattr(model, "get_response"):
        raise UserError(
            f"{what} at {site}: model: expected a model name or a model object, "
            f"got {type(model).__name__} {model!r}"
        )
    if callable(instructions) and (misfit := ctx_agent_misfit(instructions, "instructions")):
        raise UserError(f"{what} at {site}: {misfit}")


_HANDOFF_KINDS = (Agent, Handoff, str)
