"""Agents as tools: an orchestrator calls translator agents as tools, synchronously."""

from __future__ import annotations

from agents import Agent, Runner


def main() -> object:
    spanish = Agent(name="spanish_agent", instructions="Translate the text to Spanish.")
    french = Agent(name="french_agent", instructions="Translate the text to French.")
    orchestrator = Agent(
        name="orchestrator",
        instructions="Use the tools to translate; never translate yourself.",
        tools=[
            spanish.as_tool(tool_name="translate_to_spanish",
                            tool_description="Translate the user's message to Spanish."),
            french.as_tool(tool_name="translate_to_french",
                           tool_description="Translate the user's message to French.",
                           max_turns=3),
        ],
    )
    result = Runner.run_sync(orchestrator, "Say 'good morning' in Spanish and French.",
                             max_turns=6)
    print(result.final_output)
    return result


if __name__ == "__main__":
    main()
