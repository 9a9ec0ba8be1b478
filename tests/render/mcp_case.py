"""A workflow with MCP servers for the diagram goldens: its tools are read from the lock
``stepswitch.mcp.lock`` beside this file (no server is started). ``files`` is shared by
two agents, so its box is drawn once; ``tickets`` belongs to one."""

from __future__ import annotations

import stepswitch as ss

files = ss.MCPServerStdio("files", "python", ["files_server.py"],
                          require_approval={"delete_file": True})
tickets = ss.MCPServerStreamableHttp("tickets", "http://127.0.0.1:9/mcp")


@ss.function_tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return order_id


clerk = ss.Agent("clerk", "File the ticket.", mcp_servers=[files, tickets])
triage = ss.Agent("triage", "Route the request.", tools=[lookup_order],
                  mcp_servers=[files], handoffs=[clerk])
mcp_workflow = ss.Workflow(name="mcp", entry=triage)
