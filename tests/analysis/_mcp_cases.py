"""The failing and passing cases of the SW9xx codes (MCP servers), read from the lock
``stepswitch.mcp.lock`` beside this file: no server is started."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import stepswitch as ss

Build = Callable[[], ss.Workflow]


def _files(**options: Any) -> ss.MCPServerStdio:
    return ss.MCPServerStdio("cases_files", "python", ["files_server.py"], **options)


def _agent(*servers: Any, tools: Any = ()) -> ss.Workflow:
    return ss.Workflow(name="w", entry=ss.Agent("helper", "Help.", tools=list(tools),
                                                 mcp_servers=list(servers)))


@ss.function_tool
def search_a(query: str) -> str:
    """Search our own index."""
    return query


SAFE = {"delete_file": True}

MCP_CASES: dict[str, tuple[Build, Build]] = {
    "SW901": (
        lambda: _agent(ss.MCPServerStdio("cases_unlocked", "python", ["x.py"])),
        lambda: _agent(_files(require_approval=SAFE)),
    ),
    "SW902": (
        lambda: _agent(_files(require_approval={"delete": True, "delete_file": True})),
        lambda: _agent(_files(require_approval=SAFE, tool_filter=["read_file", "delete_file"])),
    ),
    "SW903": (
        lambda: _agent(_files()),
        lambda: _agent(_files(require_approval=SAFE)),
    ),
    "SW904": (
        lambda: _agent(ss.MCPServerStreamableHttp("cases_search", "http://127.0.0.1:9/mcp"),
                       tools=[search_a]),
        lambda: _agent(ss.MCPServerStreamableHttp(
            "cases_search", "http://127.0.0.1:9/mcp",
            tool_filter={"blocked_tool_names": ["search-a"]}), tools=[search_a]),
    ),
    "SW905": (
        lambda: _agent(_files(require_approval=SAFE),
                       ss.MCPServerStdio("cases_files", "python", ["other_server.py"])),
        lambda: _shared(_files(require_approval=SAFE)),
    ),
}


def _shared(server: Any) -> ss.Workflow:
    """One server declared once, listed by two agents: not a duplicate."""
    other = ss.Agent("other", "Help too.", mcp_servers=[server])
    return ss.Workflow(name="w", entry=ss.Agent("helper", "Help.", mcp_servers=[server],
                                                 handoffs=[other]))
