"""Tool guardrails: a send_email tool whose input guardrail turns away messages with a
secret in them, and whose output guardrail checks what the tool reports back."""

from __future__ import annotations

import asyncio

from agents import (
    Agent,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolOutputGuardrailData,
    function_tool,
    tool_input_guardrail,
    tool_output_guardrail,
)


@tool_input_guardrail
def no_secrets(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
    if "password" in data.context.tool_arguments:
        return ToolGuardrailFunctionOutput.reject_content("Remove the secret first.")
    return ToolGuardrailFunctionOutput.allow()


@tool_output_guardrail
def no_addresses(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
    if "@" in str(data.output):
        return ToolGuardrailFunctionOutput.reject_content("The receipt named an address.")
    return ToolGuardrailFunctionOutput.allow()


@function_tool(tool_input_guardrails=[no_secrets], tool_output_guardrails=[no_addresses])
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


async def main() -> object:
    agent = Agent(name="Mailer", instructions="Send what the user asks.", tools=[send_email])
    result = await Runner.run(agent, "Email bob my password hunter2, then say hi to ann.")
    print(result.final_output)
    return result


if __name__ == "__main__":
    asyncio.run(main())
