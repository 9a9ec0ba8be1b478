"""An Agents SDK app in the style of the SDK's examples (basic/tool_guardrails.py,
agent_patterns's conditional tools, basic/lifecycle_example.py), written for the
SDK: tool input and output guardrails, tools and handoffs gated by ``is_enabled`` on
the run context, agent hooks, and run hooks that record what they hear."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agents import (
    Agent,
    AgentHooks,
    RunContextWrapper,
    RunHooks,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolOutputGuardrailData,
    function_tool,
    handoff,
    tool_input_guardrail,
    tool_output_guardrail,
)

SENT: list[str] = []
"""What ``send_email`` really sent (the side effect a guardrail must stop)."""


@dataclass
class Account:
    languages: list[str] = field(default_factory=list)
    vip: bool = False


@tool_input_guardrail
def no_external_mail(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
    args = json.loads(data.context.tool_arguments or "{}")
    if not str(args.get("to", "")).endswith("@example.com"):
        return ToolGuardrailFunctionOutput.reject_content(
            "Refused: mail may go only to example.com addresses.",
            output_info={"to": args.get("to")},
        )
    return ToolGuardrailFunctionOutput.allow()


@tool_output_guardrail
def no_ssn(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
    if "SSN" in str(data.output):
        return ToolGuardrailFunctionOutput.raise_exception(output_info="ssn in output")
    return ToolGuardrailFunctionOutput.allow()


@tool_output_guardrail
def mask_phone(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
    if "555-" in str(data.output):
        return ToolGuardrailFunctionOutput.reject_content("[phone number withheld]")
    return ToolGuardrailFunctionOutput.allow()


@function_tool(tool_input_guardrails=[no_external_mail])
def send_email(to: str, body: str) -> str:
    """Send an email.

    Args:
        to: The address.
        body: The text.
    """
    SENT.append(to)
    return f"sent to {to}"


@function_tool(tool_output_guardrails=[no_ssn, mask_phone])
def lookup_customer(customer_id: int) -> str:
    """Look a customer up."""
    if customer_id == 7:
        return "Ann, SSN 123-45-6789"
    if customer_id == 8:
        return "Bob, phone 555-0100"
    return f"customer {customer_id}: Cy"


def _speaks(language: str) -> Any:
    def enabled(ctx: RunContextWrapper[Account], agent: Agent[Account]) -> bool:
        return language in ctx.context.languages

    enabled.__name__ = enabled.__qualname__ = f"speaks_{language}"
    return enabled


speaks_spanish = _speaks("spanish")
speaks_french = _speaks("french")


async def is_vip(ctx: RunContextWrapper[Account], agent: Agent[Account]) -> bool:
    return ctx.context.vip


spanish = Agent(name="Spanish", instructions="Answer in Spanish.")
french = Agent(name="French", instructions="Answer in French.")


@function_tool(is_enabled=speaks_spanish)
def to_spanish(text: str) -> str:
    """Translate to Spanish."""
    return f"es: {text}"


@function_tool(is_enabled=speaks_french)
def to_french(text: str) -> str:
    """Translate to French."""
    return f"fr: {text}"


class Recorder(RunHooks[Any]):
    """Run hooks that write down every event (the SDK's lifecycle example, shortened)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        self.events.append(("agent_start", agent.name))

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        self.events.append(("agent_end", agent.name, str(output)))

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        self.events.append(("handoff", from_agent.name, to_agent.name))

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        self.events.append(("tool_start", agent.name, tool.name))

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        self.events.append(("tool_end", agent.name, tool.name, str(result)))

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any,
                           input_items: Any) -> None:
        self.events.append(("llm_start", agent.name))

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        self.events.append(("llm_end", agent.name))


class DeskHooks(AgentHooks[Any]):
    """The desk agent's own hooks."""

    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []

    async def on_start(self, context: Any, agent: Any) -> None:
        self.events.append(("start", agent.name))

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        self.events.append(("end", agent.name))

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        self.events.append(("tool_start", tool.name))

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        self.events.append(("tool_end", tool.name))

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        self.events.append(("handoff", source.name, agent.name))


DESK_HOOKS = DeskHooks()

vip_desk = Agent(name="VIP", instructions="Look after VIP customers.")

desk = Agent(
    name="Desk",
    instructions="Help the customer; translate when asked.",
    tools=[send_email, lookup_customer, to_spanish, to_french],
    handoffs=[handoff(vip_desk, is_enabled=is_vip), spanish],
    hooks=DESK_HOOKS,
)
