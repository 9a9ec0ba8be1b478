"""An agent's MCP servers as spec values, read from their lock entries. Not API."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from stepswitch.dsl._site import Site, display_path
from stepswitch.dsl.tools import FunctionTool
from stepswitch.errors import UserError
from stepswitch.graph.spec import Location, MCPServerSpec, MCPToolSpec

__all__ = ["server_specs"]


def server_specs(
    agent: Any, location: Callable[[Site], Location]
) -> tuple[tuple[MCPServerSpec, ...], list[FunctionTool]]:
    """Each server's spec, and the function tools its filter offers, in server order."""
    specs: list[MCPServerSpec] = []
    tools: list[FunctionTool] = []
    from stepswitch.mcp.servers import MCPServer

    for server in agent.mcp_servers:
        if not isinstance(server, MCPServer):  # appended after the declaration
            raise UserError(
                f"Agent({agent.name!r}) at {agent.site} (changed after its declaration): "
                f"mcp_servers: expected ss.MCPServerStdio or ss.MCPServerStreamableHttp, "
                f"got {type(server).__name__} {server!r}"
            )
        entry = server.locked()
        path = server.lock_path if entry is not None else None
        locked: dict[str, Any] = entry["tools"] if entry is not None else {}
        specs.append(MCPServerSpec(
            name=server.name,
            transport=server.transport_kind,
            lock_file=display_path(str(Path(path))) if path is not None else None,
            tools=tuple(
                MCPToolSpec(
                    name=name,
                    offered=server.offered(name),
                    needs_approval=server.needs_approval(name),
                    destructive=_hint(t, "destructiveHint"),
                    read_only=_hint(t, "readOnlyHint"),
                )
                for name, t in sorted(locked.items())
            ),
            filter_names=tuple(sorted((server.allowed or frozenset()) | server.blocked)),
            approval_names=tuple(sorted(server.approval_map)),
            location=location(server.site),
        ))
        tools.extend(server.function_tools())
    return tuple(specs), tools


def _hint(tool: Any, key: str) -> bool | None:
    annotations = tool.get("annotations") if isinstance(tool, dict) else None
    value = annotations.get(key) if isinstance(annotations, dict) else None
    return value if isinstance(value, bool) else None
