"""MCP servers, locked: declarations, the lock file and the calls. Declare a server
with :class:`MCPServerStdio`, :class:`MCPServerStreamableHttp` or :class:`MCPServerSse`;
``stepswitch mcp lock`` writes ``stepswitch.mcp.lock``; ``check`` and runs read it."""

from stepswitch.mcp.servers import MCPServer, MCPServerSse, MCPServerStdio, MCPServerStreamableHttp

__all__ = ["MCPServer", "MCPServerSse", "MCPServerStdio", "MCPServerStreamableHttp"]
