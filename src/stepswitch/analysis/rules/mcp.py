"""SW9xx MCP servers, read from their lock (``check`` never starts a server): a server
with no lock entry, filter or approval names the server does not have, tools that may
change things with no approval, tool names that collide once ``-`` and ``_`` are read
alike, and two servers with one name. Exact collisions are SW302 and schemas SW402, as
for function tools: the locked tools are in the agent's tools."""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch.analysis._context import Ctx, did_you_mean, where
from stepswitch.analysis.diagnostic import Diagnostic

__all__ = ["RULES"]


def servers(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW901, SW902 and SW903, server by server."""
    seen: set[tuple[str, str]] = set()  # a server shared by two agents is reported once
    for agent in ctx.index().agents:
        for i, server in enumerate(agent.mcp_servers):
            key = (server.name, str(server.location))
            if key in seen:
                continue
            seen.add(key)
            loc = where(server.location, f"agents.{agent.name}.mcp_servers[{i}]")
            what = f"MCP server {server.name!r} of agent {agent.name!r}"
            if server.lock_file is None:
                stale = server.stale_transport
                why = "has no lock entry" if stale is None else (
                    f"has no lock entry of its own: the lock's entry {server.name!r} was "
                    f"written for transport {stale!r}, this server's is {server.transport!r}")
                yield ctx.diag(
                    "SW901",
                    f"{what} {why}: its tools are unchecked; run `stepswitch mcp lock`",
                    loc,
                    help="stepswitch mcp lock TARGET writes stepswitch.mcp.lock beside the "
                    "declaring file; commit it and run `stepswitch mcp lock --check` in CI",
                )
                continue
            names = [t.name for t in server.tools]
            for field, listed in (("tool_filter", server.filter_names),
                                  ("require_approval", server.approval_names)):
                for name in listed:
                    if name not in names:
                        yield ctx.diag(
                            "SW902",
                            f"{what}: {field} names {name!r}, which the server does not have "
                            f"(locked in {server.lock_file}){did_you_mean(name, names)}",
                            loc,
                            help=f"the server's tools are {', '.join(names) or 'none'}; fix "
                            "the name, or lock the server again if it gained the tool",
                        )
            for tool in server.tools:
                if not tool.offered or tool.needs_approval or tool.read_only is True:
                    continue
                if tool.destructive is True:
                    why = "is annotated destructive"
                elif tool.destructive is None:
                    why = "is not annotated read-only (MCP then assumes it may be destructive)"
                else:
                    why = "is not annotated read-only"
                yield ctx.diag(
                    "SW903",
                    f"{what}: tool {tool.name!r} {why} and runs with no approval",
                    loc,
                    help=f"require_approval={{{tool.name!r}: True}} (or 'always') pauses each "
                    "call for a human; tool_filter can leave it out",
                )


def normalised_names(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW904: an MCP tool whose name equals another tool's once ``-`` reads as ``_``."""
    for agent in ctx.index().agents:
        if not agent.mcp_servers:
            continue
        mcp_names = {t.name for s in agent.mcp_servers for t in s.tools if t.offered}
        offered = [t.name for t in agent.tools]
        offered += [h.tool_name for h in agent.handoffs]
        offered += [t.tool_name for t in agent.agent_tools]
        first: dict[str, str] = {}
        for name in offered:
            norm = name.replace("-", "_")
            other = first.setdefault(norm, name)
            if other == name or not ({other, name} & mcp_names):
                continue
            i = offered.index(name)
            yield ctx.diag(
                "SW904",
                f"agent {agent.name!r} offers tools {other!r} and {name!r}, the same name "
                "once '-' and '_' are read alike; clients and models that normalise names "
                "confuse them",
                where(agent.location, f"agents.{agent.name}.tools[{i}]"
                      if i < len(agent.tools) else f"agents.{agent.name}"),
                help="leave one out with the server's tool_filter, or rename the function "
                "tool or handoff",
            )


def duplicate_names(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW905: two different servers (declared apart, or of other transports) with one
    name. The lock keeps one entry per name, so the second would be checked and run
    against the first's tools; ``mcp lock`` refuses them."""
    first: dict[str, tuple[str, str, str]] = {}  # name -> (declared at, transport, path)
    reported: set[tuple[str, str]] = set()
    for agent in ctx.index().agents:
        for i, server in enumerate(agent.mcp_servers):
            key = (str(server.location), server.transport)
            other = first.setdefault(server.name, (*key, f"{agent.name}.mcp_servers[{i}]"))
            if other[:2] == key or key in reported:
                continue
            reported.add(key)
            yield ctx.diag(
                "SW905",
                f"MCP server {server.name!r} of agent {agent.name!r} is declared twice "
                f"({other[0]} and {server.location}): the lock keeps one entry per name, so "
                "this one would be checked and run against the other's tools",
                where(server.location, f"agents.{agent.name}.mcp_servers[{i}]"),
                help="rename one (the name is the lock's key), then run `stepswitch mcp lock`",
            )


RULES = (servers, normalised_names, duplicate_names)
