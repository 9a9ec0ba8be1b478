"""Structured output and stop-at-tools: a classifier returns a typed verdict, a clerk
stops on its refund tool's output."""

from __future__ import annotations

import asyncio

from agents import Agent, Runner, StopAtTools, function_tool
from pydantic import BaseModel


class Verdict(BaseModel):
    category: str
    urgent: bool


@function_tool
def issue_refund(order_id: int) -> str:
    """Refund an order."""
    return f"refund for {order_id} issued"


@function_tool
def order_status(order_id: int) -> str:
    """The status of an order."""
    return f"order {order_id} is late"


async def main() -> object:
    clerk = Agent(name="Clerk", instructions="Check the order, then refund it.",
                  tools=[order_status, issue_refund],
                  tool_use_behavior=StopAtTools(stop_at_tool_names=["issue_refund"]))
    classifier = Agent(name="Classifier", instructions="Classify, then hand refunds over.",
                       output_type=Verdict, handoffs=[clerk])
    result = await Runner.run(classifier, "My order 9 is late, I want my money back!")
    print(result.final_output)
    return result


if __name__ == "__main__":
    asyncio.run(main())
