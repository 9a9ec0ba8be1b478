"""Conditional tools: translator agents as tools, each offered only to users allowed its
language (``is_enabled`` reads the run's context), and a handoff gated the same way."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, RunContextWrapper, Runner, handoff


@dataclass
class User:
    languages: list[str] = field(default_factory=list)
    premium: bool = False


def spanish_allowed(ctx: RunContextWrapper[User], agent: Any) -> bool:
    return "es" in ctx.context.languages


async def french_allowed(ctx: RunContextWrapper[User], agent: Any) -> bool:
    return "fr" in ctx.context.languages


def premium_only(ctx: RunContextWrapper[User], agent: Any) -> bool:
    return ctx.context.premium


async def main() -> object:
    spanish = Agent(name="spanish_agent", instructions="Translate the text to Spanish.")
    french = Agent(name="french_agent", instructions="Translate the text to French.")
    concierge = Agent(name="concierge", instructions="Help premium users.")
    orchestrator = Agent(
        name="orchestrator",
        instructions="Translate with the tools you have.",
        tools=[
            spanish.as_tool(tool_name="translate_to_spanish",
                            tool_description="Translate to Spanish.",
                            is_enabled=spanish_allowed),
            french.as_tool(tool_name="translate_to_french",
                           tool_description="Translate to French.",
                           is_enabled=french_allowed),
        ],
        handoffs=[handoff(concierge, is_enabled=premium_only)],
    )
    result = await Runner.run(orchestrator, "Say 'thank you' in every language you can.",
                              context=User(languages=["es"]))
    print(result.final_output)
    return result


if __name__ == "__main__":
    asyncio.run(main())
