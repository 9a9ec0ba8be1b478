"""Failing and passing cases of SW601, SW610–SW617: SDK settings not carried, hosted tools and
deferred tool loading (apart from ``_cases.py``, which imports them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import stepswitch as ss

Build = Callable[[], ss.Workflow]


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look up an order."""
    return f"order {order_id}"


@ss.function_tool(defer_loading=True)
def export_report(month: str) -> str:
    """Export a monthly report."""
    return month


@ss.function_tool
async def ask_billing(question: str) -> str:
    """Ask the billing team (an agent run inside the tool: SW617)."""
    import agents

    result = await agents.Runner.run(agents.Agent(name="billing"), question)
    return str(result.final_output)


def _wf(*tools: Any) -> ss.Workflow:
    return ss.Workflow("w", entry=ss.Agent("a", tools=list(tools)))


def _mcp(**config: Any) -> ss.HostedMCPTool:
    return ss.HostedMCPTool(tool_config={"type": "mcp", "server_label": "crm",
                                         "server_url": "https://crm.example/mcp", **config})


def _sdk(prompt: bool) -> ss.Workflow:
    import agents

    from stepswitch.interop.sdk import from_sdk

    return from_sdk(agents.Agent(name="a", prompt={"id": "pmpt_1"} if prompt else None))


def _sdk_opaque(opaque: bool) -> ss.Workflow:
    """An SDK agent with an MCP server that sets what stepswitch does not carry (SW601)."""
    import agents
    from agents.mcp import MCPServerStdio

    from stepswitch.interop.sdk import from_sdk

    servers: list[Any] = [MCPServerStdio(name="files", params={"command": "true"},
                                         use_structured_content=True)] if opaque else []
    return from_sdk(agents.Agent(name="researcher", mcp_servers=servers))


HOSTED_CASES: dict[str, tuple[Build, Build]] = {
    "SW601": (lambda: _sdk_opaque(True), lambda: _sdk_opaque(False)),
    "SW610": (lambda: _sdk(True), lambda: _sdk(False)),
    "SW611": (lambda: _wf(lookup, ss.WebSearchTool()), lambda: _wf(lookup)),
    "SW617": (lambda: _wf(lookup, ask_billing), lambda: _wf(lookup)),
    "SW612": (lambda: _wf(_mcp(require_approval="never")),
              lambda: _wf(_mcp(require_approval="never", allowed_tools=["search"]))),
    "SW613": (lambda: _wf(_mcp(require_approval="always")),
              lambda: _wf(_mcp(require_approval="never", allowed_tools=["search"]))),
    "SW614": (lambda: _wf(export_report), lambda: _wf(export_report, ss.ToolSearchTool())),
    "SW615": (lambda: _wf(lookup, ss.ToolSearchTool()),
              lambda: _wf(export_report, ss.ToolSearchTool())),
    "SW616": (lambda: _wf(ss.FileSearchTool(vector_store_ids=["vs_1"], max_num_results=80)),
              lambda: _wf(ss.FileSearchTool(vector_store_ids=["vs_1"], max_num_results=5))),
}
