"""The MCP part of ``diff_specs``: an agent's MCP servers as their locks record them.

A locked tool's description and schema are the agent's tool's (``model``, reported with
the function tools); what is left here: servers added or removed (``structure``), a
server gaining or losing its lock entry and a tool's annotations (``safety``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepswitch.graph.spec import AgentSpec, MCPToolSpec

if TYPE_CHECKING:
    from stepswitch.review._diff_base import ChangeKind, Subject, _Base

__all__ = ["mcp_servers"]


def mcp_servers(d: _Base, agent: str, ba: AgentSpec, ha: AgentSpec) -> None:
    if ba.mcp_servers == ha.mcp_servers:
        return
    base = {s.name: s for s in ba.mcp_servers}
    head = {s.name: s for s in ha.mcp_servers}
    for name in sorted(set(base) | set(head)):
        b, h = base.get(name), head.get(name)
        p = f"agents.{agent}.mcp_servers.{name}"
        me: Subject = ("mcp_server", agent, name)
        what = f"MCP server {name!r} of agent {agent!r}"
        if b is None or h is None:
            kind: ChangeKind = "added" if b is None else "removed"
            d.add("structure", kind, p, f"{what} {kind}",
                  None if b is None else b.location, None if h is None else h.location, me)
            continue
        if (b.lock_file is None) != (h.lock_file is None):
            now = "has no lock entry now: its tools are unchecked" if h.lock_file is None \
                else "is locked now"
            d.add("safety", "changed", f"{p}.lock_file", f"{what} {now}", b.location,
                  h.location, me)
        if b.transport != h.transport:
            d.add("structure", "changed", f"{p}.transport",
                  f"{what}: transport {b.transport} → {h.transport}", b.location, h.location, me)
        bt = {t.name: t for t in b.tools}
        for tool in h.tools:
            was = bt.get(tool.name)
            if was is not None and _hints(was) != _hints(tool):
                d.add("safety", "changed", f"{p}.tools.{tool.name}.annotations",
                      f"annotations of tool {tool.name!r} of {what}: {_hints(was)} → "
                      f"{_hints(tool)}", b.location, h.location, me)


def _hints(tool: MCPToolSpec) -> str:
    def show(value: bool | None) -> str:
        return "unset" if value is None else str(value).lower()

    return f"destructive {show(tool.destructive)}, read-only {show(tool.read_only)}"
