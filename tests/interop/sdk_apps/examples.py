"""Apps in the style of the Agents SDK's own examples, for the differential test.

Each is plain SDK code: the test runs it on the SDK's Runner and, read with
``ss.from_sdk``, on stepswitch's runtime, and compares the item traces.
"""

from __future__ import annotations

import asyncio

from agents import (
    Agent,
    GuardrailFunctionOutput,
    StopAtTools,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
)
from pydantic import BaseModel

# -- customer service: a tool, a handoff with a typed input and a hook, a final message


@function_tool
def faq_lookup(question: str) -> str:
    """Answer a frequently asked question."""
    if "bag" in question:
        return "One bag of up to 23 kg is included."
    return "I do not know."


@function_tool
def update_seat(confirmation: str, seat: str) -> str:
    """Move a passenger to another seat."""
    return f"Seat of {confirmation} is now {seat}."


class Escalation(BaseModel):
    reason: str


ESCALATIONS: list[str] = []


def on_escalate(ctx: object, data: Escalation) -> None:
    ESCALATIONS.append(data.reason)


seat_agent = Agent(name="Seat Booking Agent", instructions="Change seats.",
                   tools=[update_seat])
service_triage = Agent(
    name="Triage Agent",
    instructions="Answer FAQs or hand seat changes over.",
    tools=[faq_lookup],
    handoffs=[handoff(seat_agent, input_type=Escalation, on_handoff=on_escalate)],
)


# -- agents as tools: an orchestrator calling translators, then a synthesizer


spanish = Agent(name="spanish_agent", instructions="Translate to Spanish.")
french = Agent(name="french_agent", instructions="Translate to French.")
orchestrator = Agent(
    name="orchestrator",
    instructions="Use the translators.",
    tools=[
        spanish.as_tool(tool_name="translate_to_spanish",
                        tool_description="Translate the text to Spanish."),
        french.as_tool(tool_name="translate_to_french",
                       tool_description="Translate the text to French."),
    ],
)


# -- tools that stop the run, and parallel calls answered in call order


@function_tool
async def slow_weather(city: str) -> str:
    """Weather, slowly."""
    await asyncio.sleep(0.02)
    return f"sunny in {city}"


@function_tool
def fast_time(city: str) -> str:
    """The time."""
    return f"noon in {city}"


reporter = Agent(name="reporter", instructions="Report.",
                 tools=[slow_weather, fast_time],
                 tool_use_behavior=StopAtTools(stop_at_tool_names=["fast_time"]))
chatty = Agent(name="chatty", instructions="Report and chat.", tools=[slow_weather, fast_time])


# -- guardrails that pass, on the entry and on the output


@input_guardrail(run_in_parallel=False)
def not_homework(ctx: object, agent: Agent, input: object) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="checked",
                                   tripwire_triggered="homework" in str(input))


@output_guardrail
def no_secrets(ctx: object, agent: Agent, output: str) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info=None, tripwire_triggered="secret" in output)


tutor = Agent(name="tutor", instructions="Tutor.", tools=[faq_lookup],
              input_guardrails=[not_homework], output_guardrails=[no_secrets])


# -- a human in the loop


@function_tool(needs_approval=True)
def cancel_order(order_id: int) -> str:
    """Cancel an order."""
    return f"order {order_id} cancelled"


clerk = Agent(name="clerk", instructions="Cancel orders.", tools=[cancel_order, fast_time])
