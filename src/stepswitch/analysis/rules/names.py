"""SW3xx names: tool names the OpenAI API rejects, collisions among one agent's
function tools, handoff tools and agent tools, StopAtTools names it does not have, and
function tools the model sees with no description or with docstring entries for
parameters they do not have."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from stepswitch._names import valid_tool_name
from stepswitch.analysis._context import Ctx, where
from stepswitch.analysis.diagnostic import Diagnostic, DiagnosticLocation
from stepswitch.graph.spec import AgentSpec

__all__ = ["RULES"]

Offered = tuple[str, str, int, str]
"""(tool name, field, index in the field, key of a shared function tool or "")."""


def _offered(agent: AgentSpec) -> list[Offered]:
    # a tool in a namespace (or deferred) is called as namespace.tool: that is its key
    out: list[Offered] = [(t.call_name, "tools", i, t.ref.path)
                          for i, t in enumerate(agent.tools)]
    out += [(h.tool_name, "handoffs", i, "") for i, h in enumerate(agent.handoffs)]
    out += [(t.tool_name, "agent_tools", i, "") for i, t in enumerate(agent.agent_tools)]
    return out


def _what(agent: AgentSpec, field: str, i: int) -> str:
    if field == "tools":
        fn = agent.tools[i]
        if fn.mcp_server is not None:
            return f"tool {fn.name!r} of MCP server {fn.mcp_server!r}"
        return f"function tool {fn.name!r}"
    if field == "handoffs":
        return f"the handoff to {agent.handoffs[i].target!r}"
    tool = agent.agent_tools[i]
    return f"agent tool {tool.tool_name!r} (runs {tool.target!r})"


def _loc(agent: AgentSpec, field: str, i: int) -> DiagnosticLocation:
    element = (agent.tools if field == "tools" else
               agent.handoffs if field == "handoffs" else agent.agent_tools)[i]
    return where(element.location, f"agents.{agent.name}.{field}[{i}]")


def tool_names(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW301 and SW302 in one pass over every tool every agent offers."""
    reported: set[str] = set()  # a function tool shared by many agents is reported once
    valid: dict[str, bool] = {}  # names repeat (shared tools, default handoff names)
    for agent in ctx.index().agents:
        names = [t.name for t in agent.tools]
        names += [h.tool_name for h in agent.handoffs]
        names += [t.tool_name for t in agent.agent_tools]
        bad = False
        for name in names:
            ok = valid.get(name)
            if ok is None:
                ok = valid[name] = valid_tool_name(name)
            if not ok:
                bad = True
        keys = [t.call_name for t in agent.tools] + names[len(agent.tools):]
        clash = len(keys) > 1 and len(set(keys)) < len(keys)
        if not bad and not clash:
            continue
        offered = _offered(agent)
        for (_, field, i, shared), tool_name in zip(offered, names, strict=True):
            if valid[tool_name] or (shared and shared in reported):
                continue
            if shared:
                reported.add(shared)
            yield _invalid(ctx, agent, tool_name, field, i)
        if clash:
            yield from _collisions(ctx, agent, offered)


def _invalid(ctx: Ctx, agent: AgentSpec, tool_name: str, field: str, i: int) -> Diagnostic:
    if len(tool_name) > 64:
        why = "is longer than 64 characters"
    elif not tool_name:
        why = "is empty"
    else:
        why = "has characters outside a-z, A-Z, 0-9, _ and -"
    return ctx.diag(
        "SW301",
        f"{_what(agent, field, i)} of agent {agent.name!r}: the tool name {tool_name!r} "
        f"{why}; the OpenAI API rejects it",
        _loc(agent, field, i),
        help="pick a name matching ^[a-zA-Z0-9_-]{1,64}$ (tool_name=... on a handoff, "
        "name=... on an agent tool, @function_tool(name=...))",
    )


def _collisions(ctx: Ctx, agent: AgentSpec, offered: list[Offered]) -> Iterator[Diagnostic]:
    first: dict[str, tuple[str, int]] = {}
    for tool_name, field, i, _ in offered:
        if tool_name not in first:
            first[tool_name] = (field, i)
            continue
        other_field, j = first[tool_name]
        yield ctx.diag(
            "SW302",
            f"agent {agent.name!r} offers two tools named {tool_name!r}: "
            f"{_what(agent, other_field, j)} (agents.{agent.name}.{other_field}[{j}]) and "
            f"{_what(agent, field, i)}; the model cannot tell them apart",
            _loc(agent, field, i),
            help="rename one (tool_name=... on a handoff, name=... on an agent tool)",
        )


def stop_at_names(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW303: a ``StopAtTools`` name that no function or agent tool of the agent has.

    The run loop stops only on the output of such a tool, so a typo (or a handoff's
    name) there means the run silently never stops where the author meant it to.
    """
    for agent in ctx.index().agents:
        behavior = agent.tool_use_behavior
        if behavior.kind != "stop_at_tools":
            continue
        tools = {t.name for t in agent.tools} | {t.tool_name for t in agent.agent_tools}
        handoffs = {h.tool_name for h in agent.handoffs}
        for name in behavior.tool_names:
            if name in tools:
                continue
            why = (
                "is a handoff, and a handoff never stops a run"
                if name in handoffs
                else "is no function tool or agent tool of it"
            )
            yield ctx.diag(
                "SW303",
                f"agent {agent.name!r} stops at tool {name!r} (StopAtTools), which {why}; "
                "the run never stops there",
                where(agent.location, f"agents.{agent.name}.tool_use_behavior"),
                help="name one of the agent's function tools or agent tools, as the model "
                f"calls it: {', '.join(sorted(tools)) or '(it has none)'}",
            )


def descriptions(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW304: a function tool with no description (no docstring, no ``description=``).

    The model chooses tools by their descriptions; one with none is called by its name
    alone, or not at all. Reported once per tool, at the first agent that offers it.
    """
    seen: set[str] = set()
    for agent in ctx.index().agents:
        for i, tool in enumerate(agent.tools):
            if tool.description.strip() or tool.opaque is not None or tool.ref.path in seen:
                continue
            seen.add(tool.ref.path)
            yield ctx.diag(
                "SW304",
                f"function tool {tool.name!r} of agent {agent.name!r} has no description: "
                "the model sees only its name",
                _loc(agent, "tools", i),
                help="give the function a docstring whose first line says what the tool "
                "does, or pass description=... to function_tool",
            )


def doc_params(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW305: a function tool's docstring describes (``Args:``) a parameter the function
    does not have: a typo or a renamed parameter, whose description is silently dropped
    from the schema the model is sent. Reported once per tool, like SW304."""
    seen: set[str] = set()
    for agent in ctx.index().agents:
        for i, tool in enumerate(agent.tools):
            if not tool.unknown_doc_params or tool.ref.path in seen:
                continue
            seen.add(tool.ref.path)
            real = [p for p in tool.parameters.get("properties", {}) if isinstance(p, str)]
            for name in tool.unknown_doc_params:
                close = difflib.get_close_matches(name, real, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                yield ctx.diag(
                    "SW305",
                    f"function tool {tool.name!r} of agent {agent.name!r}: its docstring "
                    f"describes parameter {name!r}, which the function does not have"
                    f"{hint}; that description reaches no schema",
                    _loc(agent, "tools", i),
                    help=f"rename the Args: entry to {close[0]!r}" if close else
                    "rename the Args: entry to a parameter of the function, or remove it",
                )


RULES = (tool_names, stop_at_names, descriptions, doc_params)
