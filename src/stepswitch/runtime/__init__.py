"""The run loop and everything a compiled machine needs at run time.

The runtime reads the compiled IR; it never imports the DSL, the analyzer, the
renderers or codegen. ``stepswitch.runtime.generated`` lists the names a generated
module may import.

The names load on first use (PEP 562), each from the module that defines it: importing
one runtime module (``stepswitch.runtime.result`` for an annotation naming
``RunResult``, say) does not load the run loop, asyncio or the model drivers.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs
    from stepswitch.runtime.config import RunConfig
    from stepswitch.runtime.events import (
        AgentUpdatedStreamEvent,
        FlowNodeStreamEvent,
        RawResponsesStreamEvent,
        RunItemStreamEvent,
        StreamEvent,
    )
    from stepswitch.runtime.handoffs import HandoffInputData
    from stepswitch.runtime.items import (
        HandoffCallItem,
        HandoffOutputItem,
        MessageOutputItem,
        ResponsesItem,
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
        OutputResponsesItem,
        OutputSchema,
        ResponseCompleted,
        StreamingModel,
        ToolDefinition,
    )
    from stepswitch.runtime.result import GuardrailResult, RunErrorDetails, RunResult
    from stepswitch.runtime.state import RunState
    from stepswitch.runtime.steps import ToolResult, ToolsToFinalOutputResult

# public name -> the module that defines it
_WHERE: dict[str, str] = {
    "AgentUpdatedStreamEvent": "stepswitch.runtime.events",
    "FlowNodeStreamEvent": "stepswitch.runtime.events",
    "GuardrailResult": "stepswitch.runtime.result",
    "HandoffCallItem": "stepswitch.runtime.items",
    "HandoffInputData": "stepswitch.runtime.handoffs",
    "HandoffOutputItem": "stepswitch.runtime.items",
    "MessageOutputItem": "stepswitch.runtime.items",
    "Model": "stepswitch.runtime.model",
    "ModelRequest": "stepswitch.runtime.model",
    "ModelResponse": "stepswitch.runtime.model",
    "OutputFunctionCall": "stepswitch.runtime.model",
    "OutputMessage": "stepswitch.runtime.model",
    "OutputSchema": "stepswitch.runtime.model",
    "RawResponsesStreamEvent": "stepswitch.runtime.events",
    "ResponseCompleted": "stepswitch.runtime.model",
    "RunConfig": "stepswitch.runtime.config",
    "RunErrorDetails": "stepswitch.runtime.result",
    "RunItem": "stepswitch.runtime.items",
    "RunItemStreamEvent": "stepswitch.runtime.events",
    "RunResult": "stepswitch.runtime.result",
    "RunResultStreaming": "stepswitch.runtime.machine",
    "RunState": "stepswitch.runtime.state",
    "StateMachine": "stepswitch.runtime.machine",
    "StreamEvent": "stepswitch.runtime.events",
    "StreamingModel": "stepswitch.runtime.model",
    "ToolApprovalItem": "stepswitch.runtime.items",
    "ToolCallItem": "stepswitch.runtime.items",
    "ToolCallOutputItem": "stepswitch.runtime.items",
    "ToolDefinition": "stepswitch.runtime.model",
    "ToolResult": "stepswitch.runtime.steps",
    "ToolsToFinalOutputResult": "stepswitch.runtime.steps",
    "UserInputItem": "stepswitch.runtime.items",
    "ResponsesItem": "stepswitch.runtime.items",
    "OutputResponsesItem": "stepswitch.runtime.model",
}

__all__ = [
    "AgentUpdatedStreamEvent",
    "FlowNodeStreamEvent",
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
    "OutputResponsesItem",
    "OutputSchema",
    "RawResponsesStreamEvent",
    "ResponseCompleted",
    "ResponsesItem",
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


def __getattr__(name: str) -> _typing.Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'stepswitch.runtime' has no attribute {name!r}")
    value = getattr(_importlib.import_module(where), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
