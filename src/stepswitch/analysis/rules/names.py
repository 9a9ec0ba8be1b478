"""SW3xx names: tool names the OpenAI API rejects, and collisions among one agent's
function tools, handoff tools and agent tools."""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch.analysis._context import Ctx, where
from stepswitch.analysis.diagnostic import Diagnostic, DiagnosticLocation
from stepswitch.dsl.names import valid_tool_name

__all__ = ["RULES"]


def _offered(ctx: Ctx, name: str) -> Iterator[tuple[str, str, DiagnosticLocation, str]]:
    """(tool name, what it is, location, shared-key) for every tool an agent offers."""
    agent = ctx.graph.agent(name)
    base = f"agents.{name}"
    for i, tool in enumerate(agent.tools):
        yield (tool.name, f"function tool {tool.name!r}",
               where(tool.location, f"{base}.tools[{i}]"), tool.ref.path)
    for i, h in enumerate(agent.handoffs):
        yield (h.tool_name, f"the handoff to {h.target!r}",
               where(h.location, f"{base}.handoffs[{i}]"), "")
    for i, t in enumerate(agent.agent_tools):
        yield (t.tool_name, f"agent tool {t.tool_name!r} (runs {t.target!r})",
               where(t.location, f"{base}.agent_tools[{i}]"), "")


def invalid_names(ctx: Ctx) -> Iterator[Diagnostic]:
    reported: set[str] = set()  # a function tool shared by many agents is reported once
    for name in ctx.graph.agent_names():
        for tool_name, what, loc, shared in _offered(ctx, name):
            if valid_tool_name(tool_name):
                continue
            if shared:
                if shared in reported:
                    continue
                reported.add(shared)
            why = "is longer than 64 characters" if len(tool_name) > 64 else (
                "is empty" if not tool_name else
                "has characters outside a-z, A-Z, 0-9, _ and -"
            )
            yield ctx.diag(
                "SW301",
                f"{what} of agent {name!r}: the tool name {tool_name!r} {why}; the OpenAI API "
                "rejects it",
                loc,
                help="pick a name matching ^[a-zA-Z0-9_-]{1,64}$ (tool_name=... on a handoff, "
                "name=... on an agent tool, @function_tool(name=...))",
            )


def collisions(ctx: Ctx) -> Iterator[Diagnostic]:
    for name in ctx.graph.agent_names():
        first: dict[str, tuple[str, str]] = {}
        for tool_name, what, loc, _ in _offered(ctx, name):
            if tool_name not in first:
                first[tool_name] = (what, loc.path)
                continue
            other, other_path = first[tool_name]
            yield ctx.diag(
                "SW302",
                f"agent {name!r} offers two tools named {tool_name!r}: {other} "
                f"({other_path}) and {what}; the model cannot tell them apart",
                loc,
                help="rename one (tool_name=... on a handoff, name=... on an agent tool)",
            )


RULES = (invalid_names, collisions)
