"""An SDK app with parts stepswitch cannot run: a hosted tool and an MCP server."""

from agents import Agent, WebSearchTool, function_tool
from agents.mcp import MCPServerStdio


@function_tool
def summarize(text: str) -> str:
    """Summarize a text."""
    return text[:20]


# structured content is a setting stepswitch does not carry: the server stays opaque
files = MCPServerStdio(name="files", params={"command": "true"}, use_structured_content=True)

researcher = Agent(
    name="Researcher",
    instructions="Research.",
    tools=[WebSearchTool(), summarize],
    mcp_servers=[files],
)
