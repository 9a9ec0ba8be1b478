"""Customer service for an airline: a triage agent answers FAQs and hands seat changes
over to a booking agent, with a typed handoff input and a hook."""

from __future__ import annotations

import asyncio

from agents import Agent, RunContextWrapper, Runner, function_tool, handoff
from pydantic import BaseModel

ESCALATIONS: list[str] = []


class SeatRequest(BaseModel):
    reason: str


@function_tool
def faq_lookup(question: str) -> str:
    """Answer a frequently asked question about baggage, wifi or seats."""
    if "bag" in question:
        return "One bag of up to 23 kg is included."
    if "wifi" in question:
        return "Wifi is free on every flight."
    return "I am not sure."


@function_tool
def update_seat(confirmation_number: str, new_seat: str) -> str:
    """Move a passenger to another seat.

    Args:
        confirmation_number: The booking's confirmation number.
        new_seat: The seat to move to, e.g. 12A.
    """
    return f"Seat of {confirmation_number} is now {new_seat}."


def on_seat_handoff(ctx: RunContextWrapper[None], request: SeatRequest) -> None:
    ESCALATIONS.append(request.reason)


async def main() -> object:
    seat_booking = Agent(
        name="Seat Booking Agent",
        handoff_description="Changes a passenger's seat.",
        instructions="Ask for the confirmation number and the seat, then change it.",
        tools=[update_seat],
    )
    triage = Agent(
        name="Triage Agent",
        handoff_description="Routes the customer.",
        instructions="Answer FAQs with the lookup tool; hand seat changes to booking.",
        tools=[faq_lookup],
        handoffs=[handoff(seat_booking, input_type=SeatRequest, on_handoff=on_seat_handoff)],
    )
    result = await Runner.run(triage, "How many bags can I bring? Also move me to 3A, AB12.")
    print(result.final_output)
    return result


if __name__ == "__main__":
    asyncio.run(main())
