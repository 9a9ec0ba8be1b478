"""The workflow spec (frozen, JSON round-trip) and the typed graph built from it."""

from stepswitch.graph.build import AGENT_TOOL_INPUT_SCHEMA, Bindings, BuiltWorkflow, build
from stepswitch.graph.spec import (
    AgentSpec,
    AgentToolSpec,
    GuardrailSpec,
    HandoffSpec,
    Location,
    OutputTypeSpec,
    Ref,
    ToolSpec,
    WorkflowSpec,
)
from stepswitch.graph.workflow_graph import Edge, WorkflowGraph

__all__ = [
    "AGENT_TOOL_INPUT_SCHEMA",
    "AgentSpec",
    "AgentToolSpec",
    "Bindings",
    "BuiltWorkflow",
    "Edge",
    "GuardrailSpec",
    "HandoffSpec",
    "Location",
    "OutputTypeSpec",
    "Ref",
    "ToolSpec",
    "WorkflowGraph",
    "WorkflowSpec",
    "build",
]
