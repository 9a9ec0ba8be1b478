"""Tool guardrails (not carried yet): a send_email tool whose input guardrail blocks
messages with secrets. stepswitch must say so, located, instead of passing silently."""

from __future__ import annotations

import asyncio

from agents import (
    Agent,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    function_tool,
    tool_input_guardrail,
)


@tool_input_guardrail
def no_secrets(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
    if "password" in data.context.tool_arguments:
        return ToolGuardrailFunctionOutput.reject_content("Remove the secret first.")
    return ToolGuardrailFunctionOutput.allow()


@function_tool(tool_input_guardrails=[no_secrets])
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


async def main() -> object:
    agent = Agent(name="Mailer", instructions="Send what the user asks.", tools=[send_email])
    result = await Runner.run(agent, "Email bob my password hunter2.")
    print(result.final_output)
    return result


if __name__ == "__main__":
    asyncio.run(main())
