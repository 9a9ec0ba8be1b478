"""An SDK app in the style of the SDK's customer-service example: triage, a tool, a
typed handoff with a hook, an approval-gated refund, an expert called as a tool."""

from __future__ import annotations

from dataclasses import dataclass

from agents import (
    Agent,
    GuardrailFunctionOutput,
    RunContextWrapper,
    StopAtTools,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
)
from pydantic import BaseModel

HANDED_OFF: list[str] = []


@dataclass
class Account:
    user: str


@function_tool
def lookup_order(order_id: int) -> str:
    """Look up an order by id.

    Args:
        order_id: The order's number.
    """
    return f"order {order_id} ok"


@function_tool(needs_approval=True)
def process_refund(ctx: RunContextWrapper[Account], order_id: int) -> str:
    """Refund an order."""
    return f"refunded {order_id} for {ctx.context.user}"


@function_tool(name_override="faq", description_override="Answer a common question.")
def faq_lookup(question: str) -> str:
    return f"faq: {question}"


class Reason(BaseModel):
    reason: str


def log_reason(ctx: RunContextWrapper[Account], data: Reason) -> None:
    HANDED_OFF.append(data.reason)


@input_guardrail
def polite(ctx: RunContextWrapper[Account], agent: Agent, input: object) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="fine", tripwire_triggered="rude" in str(input))


@output_guardrail
def short(ctx: RunContextWrapper[Account], agent: Agent, output: str) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info=len(output), tripwire_triggered=len(output) > 200)


class Verdict(BaseModel):
    approved: bool
    note: str


expert = Agent(
    name="Order Expert",
    instructions="Answer questions about orders.",
    tools=[lookup_order],
)

refund_agent = Agent[Account](
    name="Refund Agent",
    handoff_description="Handles refunds.",
    instructions="Confirm the order, then refund it.",
    tools=[process_refund, lookup_order],
    output_guardrails=[short],
    tool_use_behavior=StopAtTools(stop_at_tool_names=["process_refund"]),
)

triage_agent = Agent[Account](
    name="Triage",
    instructions="Route the customer.",
    tools=[
        lookup_order,
        faq_lookup,
        expert.as_tool(tool_name="ask_expert", tool_description="Ask the order expert.",
                       max_turns=4),
    ],
    handoffs=[handoff(refund_agent, input_type=Reason, on_handoff=log_reason)],
    input_guardrails=[polite],
)

judge = Agent(name="Judge", instructions="Judge.", output_type=Verdict)
