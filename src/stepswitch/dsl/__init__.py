"""The typed DSL: agents, tools, handoffs, agent tools, guardrails and workflows."""

from stepswitch.dsl.agent import Agent, AgentTool, Handoff, StopAtTools, agent_tool, handoff
from stepswitch.dsl.guardrails import (
    GuardrailFunctionOutput,
    InputGuardrail,
    OutputGuardrail,
    input_guardrail,
    output_guardrail,
)
from stepswitch.dsl.tool_guardrails import (
    ToolInputGuardrail,
    ToolOutputGuardrail,
    tool_input_guardrail,
    tool_output_guardrail,
)
from stepswitch.dsl.tools import FunctionTool, function_tool
from stepswitch.dsl.workflow import Workflow

__all__ = [
    "Agent",
    "AgentTool",
    "FunctionTool",
    "GuardrailFunctionOutput",
    "Handoff",
    "InputGuardrail",
    "OutputGuardrail",
    "StopAtTools",
    "ToolInputGuardrail",
    "ToolOutputGuardrail",
    "Workflow",
    "agent_tool",
    "function_tool",
    "handoff",
    "input_guardrail",
    "output_guardrail",
    "tool_input_guardrail",
    "tool_output_guardrail",
]
