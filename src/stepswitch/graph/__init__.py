"""The workflow spec (frozen, JSON round-trip), the live objects beside it, and the typed
graph built from it. Plain data the later stages read; the DSL makes it
(``stepswitch.dsl.build``)."""

from stepswitch.graph.bindings import Bindings, BuiltWorkflow
from stepswitch.graph.spec import (
    AGENT_TOOL_INPUT_SCHEMA,
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
]
