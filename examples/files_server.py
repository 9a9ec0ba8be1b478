"""A small MCP server to try docs/mcp.md with: two file tools over stdio.

``read_file`` is read-only and ``delete_file`` is destructive (by their MCP annotations,
which ``stepswitch mcp lock`` records and ``ss.require_approval("mcp:files:destructive")``
selects). Both work only inside the folder ``ROOT`` names (the environment variable;
default: the working directory) and refuse a path that leaves it.

    python examples/files_server.py        # speaks MCP on stdin/stdout
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

ROOT = Path(os.environ.get("ROOT") or os.getcwd()).resolve()
server = MCPServer("files")


def _inside(path: str) -> Path:
    """``path`` under ROOT; a ``ToolError`` (which the model reads) when it would leave
    it or names no file (any other exception reaches the model only as "Error executing
    tool")."""
    full = (ROOT / path).resolve()
    if full != ROOT and ROOT not in full.parents:
        raise ToolError(f"{path!r} is outside the server's folder")
    if not full.is_file():
        raise ToolError(f"no file {path!r}")
    return full


@server.tool(description="Read a text file under the server's folder.",
             annotations=ToolAnnotations(read_only_hint=True))
def read_file(path: str) -> str:
    return _inside(path).read_text(encoding="utf-8")


@server.tool(description="Delete a file under the server's folder.",
             annotations=ToolAnnotations(destructive_hint=True))
def delete_file(path: str) -> str:
    _inside(path).unlink()
    return f"deleted {path}"


if __name__ == "__main__":
    server.run("stdio")
