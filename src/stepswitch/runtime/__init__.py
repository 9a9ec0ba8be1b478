"""The run loop and everything a compiled machine needs at run time.

The runtime reads the compiled IR; it never imports the DSL, the analyzer, the
renderers or codegen. ``stepswitch.runtime.generated`` lists the names a generated
module may import.
"""

from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.events import (
    AgentUpdatedStreamEvent,
    RawResponsesStreamEvent,
    RunItemStreamEvent,
    StreamEvent,
)
from stepswitch.runtime.handoffs import HandoffInputData
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.machine import RunResultStreaming, StateMachine
from stepswitch.runtime.model import (
    Model,
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputMessage,
    OutputSchema,
    ResponseCompleted,
    StreamingModel,
    ToolDefinition,
)
from stepswitch.runtime.result import GuardrailResult, RunErrorDetails, RunResult
from stepswitch.runtime.state import RunState
from stepswitch.runtime.steps import ToolResult, ToolsToFinalOutputResult

__all__ = [
    "AgentUpdatedStreamEvent",
    "GuardrailResult",
    "HandoffCallItem",
    "HandoffInputData",
    "HandoffOutputItem",
    "MessageOutputItem",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OutputFunctionCall",
    "OutputMessage",
    "OutputSchema",
    "RawResponsesStreamEvent",
    "ResponseCompleted",
    "RunConfig",
    "RunErrorDetails",
    "RunItem",
    "RunItemStreamEvent",
    "RunResult",
    "RunResultStreaming",
    "RunState",
    "StateMachine",
    "StreamEvent",
    "StreamingModel",
    "ToolApprovalItem",
    "ToolCallItem",
    "ToolCallOutputItem",
    "ToolDefinition",
    "ToolResult",
    "ToolsToFinalOutputResult",
    "UserInputItem",
]
