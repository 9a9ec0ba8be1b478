"""An SDK app with settings from_sdk once read but did not carry out (tool guardrails
and a callable is_enabled, then each a located warning); now it carries them."""

from typing import Any

from agents import (
    Agent,
    ToolGuardrailFunctionOutput,
    function_tool,
    tool_input_guardrail,
    tool_output_guardrail,
)


@tool_input_guardrail
def no_secrets(data: Any) -> ToolGuardrailFunctionOutput:
    return ToolGuardrailFunctionOutput.allow()


@tool_output_guardrail
def no_leaks(data: Any) -> ToolGuardrailFunctionOutput:
    return ToolGuardrailFunctionOutput.allow()


@function_tool(tool_input_guardrails=[no_secrets], tool_output_guardrails=[no_leaks])
def lookup(order_id: int) -> str:
    """Look an order up."""
    return f"order {order_id}"


def only_on_weekdays(ctx: Any, agent: Any) -> bool:
    return True


@function_tool(is_enabled=only_on_weekdays)
def refund(order_id: int) -> str:
    """Refund an order."""
    return "refunded"


@function_tool
def plain(text: str) -> str:
    """Echo."""
    return text


clerk = Agent(name="Clerk", instructions="Help.", tools=[lookup, refund, plain])
