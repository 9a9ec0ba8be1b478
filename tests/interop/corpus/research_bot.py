"""A research bot with hosted tools: web search and file search run on OpenAI's side,
and a function tool of ours writes the notes; streamed, as the SDK's examples show."""

from __future__ import annotations

import asyncio

from agents import Agent, FileSearchTool, Runner, WebSearchTool, function_tool

NOTES: list[str] = []


@function_tool
def save_note(text: str) -> str:
    """Save a research note."""
    NOTES.append(text)
    return "saved"


async def main() -> object:
    researcher = Agent(
        name="Researcher",
        instructions="Search the web and the team's files, then save one note.",
        tools=[
            WebSearchTool(search_context_size="low"),
            FileSearchTool(vector_store_ids=["vs_team_docs"], max_num_results=3),
            save_note,
        ],
    )
    result = Runner.run_streamed(researcher, "What changed in the fare rules this week?")
    async for event in result.stream_events():
        if event.type == "run_item_stream_event" and event.name == "tool_called":
            print("tool called")
    print(result.final_output)
    return result


if __name__ == "__main__":
    asyncio.run(main())
