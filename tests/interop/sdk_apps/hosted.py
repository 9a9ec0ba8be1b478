"""An SDK app with parts stepswitch cannot run: a hosted tool and an MCP server."""

from agents import Agent, WebSearchTool, function_tool
from agents.mcp import MCPServerStdio


@function_tool
def summarize(text: str) -> str:
    """Summarize a text."""
    return text[:20]


files = MCPServerStdio(name="files", params={"command": "true"})

researcher = Agent(
    name="Researcher",
    instructions="Research.",
    tools=[WebSearchTool(), summarize],
    mcp_servers=[files],
)
