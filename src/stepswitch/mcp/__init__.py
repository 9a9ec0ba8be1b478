"""MCP servers, locked: declarations, the lock file and the calls. Declare a server
with :class:`MCPServerStdio` or :class:`MCPServerStreamableHttp`; ``stepswitch mcp
lock`` writes ``stepswitch.mcp.lock``; ``check`` and runs read it."""

from stepswitch.mcp.servers import MCPServer, MCPServerStdio, MCPServerStreamableHttp

__all__ = ["MCPServer", "MCPServerStdio", "MCPServerStreamableHttp"]
