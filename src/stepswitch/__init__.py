"""stepswitch: a compiler for agent workflows.

Declare agents, tools, handoffs and agent tools as a typed graph; prove it sound
before it runs; draw it; compile it into an explicit step-switch state machine.
This module only re-exports the public surface.

The names load on first use (PEP 562): ``import stepswitch`` costs almost nothing,
and a deployed runner that only needs the runtime never loads the analyzer, the
renderers or codegen. ``from stepswitch import X`` and ``ss.X`` work as usual.
"""

import importlib as _importlib
import sys as _sys
import types as _types

from stepswitch._version import __version__

# typing.TYPE_CHECKING without importing typing, which would cost every `stepswitch`
# command its ~2 ms (a re-check answered from the cache takes ~30 ms in all); type
# checkers read any name TYPE_CHECKING as typing's
TYPE_CHECKING = False
if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs
    from typing import Any

    from stepswitch import interop as interop
    from stepswitch import models as models
    from stepswitch import otel as otel
    from stepswitch import review as review
    from stepswitch import sessions as sessions
    from stepswitch import temporal as temporal
    from stepswitch import testing as testing
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
        ToolInputGuardrail,
        ToolOutputGuardrail,
        Workflow,
        agent_tool,
        function_tool,
        handoff,
        input_guardrail,
        output_guardrail,
        tool_input_guardrail,
        tool_output_guardrail,
    )
    from stepswitch.dsl.flow import END, Step, branch, fan_out, route, step, then
    from stepswitch.dsl.hosted import (
        CodeInterpreterTool,
        FileSearchTool,
        HostedMCPTool,
        ImageGenerationTool,
        ToolSearchTool,
        WebSearchTool,
    )
    from stepswitch.dsl.tools import tool_namespace
    from stepswitch.errors import (
        CompileError,
        CostLimitExceeded,
        InputGuardrailTripwireTriggered,
        MaxTurnsExceeded,
        MCPServerError,
        ModelBehaviorError,
        ModelProviderError,
        OutputGuardrailTripwireTriggered,
        RunTimeoutError,
        SessionConflict,
        SessionError,
        StateError,
        StepswitchError,
        ToolInputGuardrailTripwireTriggered,
        ToolOutputGuardrailTripwireTriggered,
        ToolTimeoutError,
        UserError,
    )
    from stepswitch.graph import WorkflowGraph, WorkflowSpec
    from stepswitch.graph.spec import PolicySpec
    from stepswitch.interop.sdk import from_sdk
    from stepswitch.lifecycle import AgentHooks, RunHooks
    from stepswitch.mcp.servers import MCPServerSse, MCPServerStdio, MCPServerStreamableHttp
    from stepswitch.policies import (
        Policy,
        forbid,
        max_calls,
        only_after,
        require_approval,
        require_guardrail,
    )
    from stepswitch.prompts import RECOMMENDED_PROMPT_PREFIX, prompt_with_handoff_instructions
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
    from stepswitch.runtime.item_helpers import ItemHelpers
    from stepswitch.settings import ModelSettings
    from stepswitch.tool_guardrails import (
        ToolContext,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrailData,
        ToolOutputGuardrailData,
    )
del TYPE_CHECKING

# public name -> the module that defines it (not a package that re-exports it: an
# annotation naming ss.RunResult in a checked module must not load the run loop)
_WHERE: dict[str, str] = {
    "tool_namespace": "stepswitch.dsl.tools",
    "WebSearchTool": "stepswitch.dsl.hosted",
    "ToolSearchTool": "stepswitch.dsl.hosted",
    "ImageGenerationTool": "stepswitch.dsl.hosted",
    "HostedMCPTool": "stepswitch.dsl.hosted",
    "FileSearchTool": "stepswitch.dsl.hosted",
    "CodeInterpreterTool": "stepswitch.dsl.hosted",
    "Agent": "stepswitch.dsl",
    "AgentHooks": "stepswitch.lifecycle",
    "AgentTool": "stepswitch.dsl",
    "CompileError": "stepswitch.errors",
    "MCPServerSse": "stepswitch.mcp.servers",
    "MCPServerStdio": "stepswitch.mcp.servers",
    "MCPServerStreamableHttp": "stepswitch.mcp.servers",
    "CostLimitExceeded": "stepswitch.errors",
    "Diagnostic": "stepswitch.analysis",
    "END": "stepswitch.dsl.flow",
    "FunctionTool": "stepswitch.dsl",
    "GuardrailFunctionOutput": "stepswitch.dsl",
    "Handoff": "stepswitch.dsl",
    "HandoffInputData": "stepswitch.runtime.handoffs",
    "InputGuardrail": "stepswitch.dsl",
    "InputGuardrailTripwireTriggered": "stepswitch.errors",
    "ItemHelpers": "stepswitch.runtime.item_helpers",
    "MCPServerError": "stepswitch.errors",
    "MaxTurnsExceeded": "stepswitch.errors",
    "ModelBehaviorError": "stepswitch.errors",
    "ModelProviderError": "stepswitch.errors",
    "ModelSettings": "stepswitch.settings",
    "OutputGuardrail": "stepswitch.dsl",
    "OutputGuardrailTripwireTriggered": "stepswitch.errors",
    "Policy": "stepswitch.policies",
    "PolicySpec": "stepswitch.graph.spec",
    "RECOMMENDED_PROMPT_PREFIX": "stepswitch.prompts",
    "Report": "stepswitch.analysis",
    "RunConfig": "stepswitch.runtime.config",
    "RunHooks": "stepswitch.lifecycle",
    "RunContext": "stepswitch.context",
    "RunResult": "stepswitch.runtime.result",
    "RunResultStreaming": "stepswitch.runtime.machine",
    "RunState": "stepswitch.runtime.state",
    "RunTimeoutError": "stepswitch.errors",
    "SessionConflict": "stepswitch.errors",
    "SessionError": "stepswitch.errors",
    "StateError": "stepswitch.errors",
    "StateMachine": "stepswitch.runtime.machine",
    "Step": "stepswitch.dsl.flow",
    "StepswitchError": "stepswitch.errors",
    "StopAtTools": "stepswitch.dsl",
    "ToolContext": "stepswitch.tool_guardrails",
    "ToolGuardrailFunctionOutput": "stepswitch.tool_guardrails",
    "ToolInputGuardrail": "stepswitch.dsl",
    "ToolInputGuardrailData": "stepswitch.tool_guardrails",
    "ToolInputGuardrailTripwireTriggered": "stepswitch.errors",
    "ToolOutputGuardrail": "stepswitch.dsl",
    "ToolOutputGuardrailData": "stepswitch.tool_guardrails",
    "ToolOutputGuardrailTripwireTriggered": "stepswitch.errors",
    "ToolTimeoutError": "stepswitch.errors",
    "ToolsToFinalOutputResult": "stepswitch.runtime.steps",
    "Usage": "stepswitch.context",
    "UserError": "stepswitch.errors",
    "Workflow": "stepswitch.dsl",
    "WorkflowGraph": "stepswitch.graph",
    "WorkflowSpec": "stepswitch.graph",
    "agent_tool": "stepswitch.dsl",
    "branch": "stepswitch.dsl.flow",
    "codegen": "stepswitch.compiler.codegen",
    "fan_out": "stepswitch.dsl.flow",
    "forbid": "stepswitch.policies",
    "from_sdk": "stepswitch.interop.sdk",  # the SDK reader loads only when asked for
    "function_tool": "stepswitch.dsl",
    "handoff": "stepswitch.dsl",
    "input_guardrail": "stepswitch.dsl",
    "max_calls": "stepswitch.policies",
    "only_after": "stepswitch.policies",
    "output_guardrail": "stepswitch.dsl",
    "prompt_with_handoff_instructions": "stepswitch.prompts",
    "render": "stepswitch.render",
    "require_approval": "stepswitch.policies",
    "require_guardrail": "stepswitch.policies",
    "route": "stepswitch.dsl.flow",
    "step": "stepswitch.dsl.flow",
    "then": "stepswitch.dsl.flow",
    "tool_input_guardrail": "stepswitch.dsl",
    "tool_output_guardrail": "stepswitch.dsl",
}

# public submodules reachable as attributes, imported on first use: ss.testing.ScriptedModel,
# ss.sessions.SQLiteSession, ss.temporal.worker (``render`` is the function ss.render)
_SUBMODULES = frozenset(
    {"interop", "models", "otel", "review", "sessions", "temporal", "testing"}
)

__all__ = [  # noqa: RUF022 -- plainly sorted (tests/test_public_api.py), constants too
    "Agent",
    "AgentHooks",
    "AgentTool",
    "CodeInterpreterTool",
    "CompileError",
    "CostLimitExceeded",
    "Diagnostic",
    "END",
    "FileSearchTool",
    "FunctionTool",
    "GuardrailFunctionOutput",
    "Handoff",
    "HandoffInputData",
    "HostedMCPTool",
    "ImageGenerationTool",
    "InputGuardrail",
    "InputGuardrailTripwireTriggered",
    "ItemHelpers",
    "MCPServerError",
    "MCPServerSse",
    "MCPServerStdio",
    "MCPServerStreamableHttp",
    "MaxTurnsExceeded",
    "ModelBehaviorError",
    "ModelProviderError",
    "ModelSettings",
    "OutputGuardrail",
    "OutputGuardrailTripwireTriggered",
    "Policy",
    "PolicySpec",
    "RECOMMENDED_PROMPT_PREFIX",
    "Report",
    "RunConfig",
    "RunContext",
    "RunHooks",
    "RunResult",
    "RunResultStreaming",
    "RunState",
    "RunTimeoutError",
    "SessionConflict",
    "SessionError",
    "StateError",
    "StateMachine",
    "Step",
    "StepswitchError",
    "StopAtTools",
    "ToolContext",
    "ToolGuardrailFunctionOutput",
    "ToolInputGuardrail",
    "ToolInputGuardrailData",
    "ToolInputGuardrailTripwireTriggered",
    "ToolOutputGuardrail",
    "ToolOutputGuardrailData",
    "ToolOutputGuardrailTripwireTriggered",
    "ToolSearchTool",
    "ToolTimeoutError",
    "ToolsToFinalOutputResult",
    "Usage",
    "UserError",
    "WebSearchTool",
    "Workflow",
    "WorkflowGraph",
    "WorkflowSpec",
    "__version__",
    "agent_tool",
    "branch",
    "codegen",
    "fan_out",
    "forbid",
    "from_sdk",
    "function_tool",
    "handoff",
    "input_guardrail",
    "max_calls",
    "only_after",
    "output_guardrail",
    "prompt_with_handoff_instructions",
    "render",
    "require_approval",
    "require_guardrail",
    "route",
    "step",
    "then",
    "tool_input_guardrail",
    "tool_namespace",
    "tool_output_guardrail",
]


class _Package(_types.ModuleType):
    """``ss.render`` is a function, and ``stepswitch.render`` is also a subpackage: the
    import system sets the subpackage as an attribute here when it loads it, which would
    hide the function. Refuse that one assignment; ``from stepswitch.render import …``
    and ``sys.modules`` are unaffected."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _WHERE and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> "Any":  # a string: Any is only the type checker's
    where = _WHERE.get(name)
    if where is not None:
        value = getattr(_importlib.import_module(where), name)
        globals()[name] = value  # the next access is a plain attribute
        return value
    if name in _SUBMODULES:
        return _importlib.import_module(f"stepswitch.{name}")
    raise AttributeError(f"module 'stepswitch' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE, *_SUBMODULES})
