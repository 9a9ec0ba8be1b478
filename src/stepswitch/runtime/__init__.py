"""The run loop and everything a compiled machine needs at run time.

The runtime reads the compiled IR; it never imports the DSL, the analyzer, the
renderers or codegen.
"""

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

__all__ = [
    "HandoffCallItem",
    "HandoffOutputItem",
    "MessageOutputItem",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OutputFunctionCall",
    "OutputMessage",
    "OutputSchema",
    "ResponseCompleted",
    "RunItem",
    "StreamingModel",
    "ToolApprovalItem",
    "ToolCallItem",
    "ToolCallOutputItem",
    "ToolDefinition",
    "UserInputItem",
]
