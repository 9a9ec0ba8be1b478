"""A conversation that remembers: each question runs with the same SDK session."""

from __future__ import annotations

import asyncio

from agents import Agent, Runner, SQLiteSession, function_tool

QUESTIONS = ["My order is 42. Where is it?", "And when will it arrive?"]


@function_tool
def track(order_id: int) -> str:
    """Track an order."""
    return f"order {order_id} left the warehouse"


async def main() -> list[object]:
    agent = Agent(name="Assistant", instructions="Reply very concisely.", tools=[track])
    session = SQLiteSession("conversation_123")
    results: list[object] = []
    for question in QUESTIONS:
        result = await Runner.run(agent, question, session=session)
        print(result.final_output)
        results.append(result)
    return results


if __name__ == "__main__":
    asyncio.run(main())
