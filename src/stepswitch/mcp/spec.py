"""An MCP server as a spec value, read from its lock entry. Not API."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stepswitch._site import Site, display_path
from stepswitch.graph.spec import Location, MCPServerSpec, MCPToolSpec

if TYPE_CHECKING:
    from stepswitch.mcp.servers import MCPServer

__all__ = ["server_spec"]


def server_spec(server: MCPServer, location: Callable[[Site], Location]) -> MCPServerSpec:
    """``server``'s spec: its lock file, and each locked tool as its filter and approval
    rules see it."""
    entry = server.locked()
    path = server.lock_path if entry is not None else None
    locked: dict[str, Any] = entry["tools"] if entry is not None else {}
    return MCPServerSpec(
        name=server.name,
        transport=server.transport_kind,
        lock_file=display_path(str(Path(path))) if path is not None else None,
        stale_transport=server.stale_transport(),
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
    )


def _hint(tool: Any, key: str) -> bool | None:
    annotations = tool.get("annotations") if isinstance(tool, dict) else None
    value = annotations.get(key) if isinstance(annotations, dict) else None
    return value if isinstance(value, bool) else None
