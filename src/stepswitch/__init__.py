"""stepswitch: a compiler for agent workflows.

Declare agents, tools, handoffs and agent tools as a typed graph; prove it sound
before it runs; draw it; compile it into an explicit step-switch state machine.
This module only re-exports the public surface.
"""

import typing as _typing

from stepswitch import testing as testing  # a public submodule: ss.testing.ScriptedModel
from stepswitch._version import __version__
from stepswitch.analysis import Diagnostic, Report
from stepswitch.compiler.codegen import codegen
from stepswitch.context import RunContext, Usage
from stepswitch.dsl import (
    Agent,
    AgentTool,
    FunctionTool,
    GuardrailFunctionOutput,
    Handoff,
    InputGuardrail,
    OutputGuardrail,
    StopAtTools,
    Workflow,
    agent_tool,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
)
from stepswitch.dsl.flow import END, Step, branch, fan_out, route, step, then
from stepswitch.errors import (
    CompileError,
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    ModelBehaviorError,
    ModelProviderError,
    OutputGuardrailTripwireTriggered,
    StateError,
    StepswitchError,
    UserError,
)
from stepswitch.graph import WorkflowGraph, WorkflowSpec
from stepswitch.render import render
from stepswitch.runtime import (
    HandoffInputData,
    RunConfig,
    RunResult,
    RunResultStreaming,
    RunState,
    StateMachine,
    ToolsToFinalOutputResult,
)
from stepswitch.settings import ModelSettings

__all__ = [
    "END",
    "Agent",
    "AgentTool",
    "CompileError",
    "Diagnostic",
    "FunctionTool",
    "GuardrailFunctionOutput",
    "Handoff",
    "HandoffInputData",
    "InputGuardrail",
    "InputGuardrailTripwireTriggered",
    "MaxTurnsExceeded",
    "ModelBehaviorError",
    "ModelProviderError",
    "ModelSettings",
    "OutputGuardrail",
    "OutputGuardrailTripwireTriggered",
    "Report",
    "RunConfig",
    "RunContext",
    "RunResult",
    "RunResultStreaming",
    "RunState",
    "StateError",
    "StateMachine",
    "Step",
    "StepswitchError",
    "StopAtTools",
    "ToolsToFinalOutputResult",
    "Usage",
    "UserError",
    "Workflow",
    "WorkflowGraph",
    "WorkflowSpec",
    "__version__",
    "agent_tool",
    "branch",
    "codegen",
    "fan_out",
    "function_tool",
    "handoff",
    "input_guardrail",
    "output_guardrail",
    "render",
    "route",
    "step",
    "then",
]


def __getattr__(name: str) -> _typing.Any:
    # ``ss.models`` loads on first use: it brings in the openai client, slow to import.
    if name == "models":
        import importlib

        return importlib.import_module("stepswitch.models")
    raise AttributeError(f"module 'stepswitch' has no attribute {name!r}")
