"""The model interface: what the run loop asks of a model, and what it gets back.

This is the contract between the loop, ``stepswitch.testing.ScriptedModel`` and the
OpenAI adapters in ``stepswitch.models``. A request holds everything one model call
needs; a response holds the output items in the model's order and the usage.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from stepswitch._dataclass import dataclass
from stepswitch.context import Usage
from stepswitch.runtime.items import RunItem, UserInputItem

if TYPE_CHECKING:  # a pydantic model: the runtime imports it only when it makes one
    from stepswitch.settings import ModelSettings

__all__ = [
    "HOSTED_CALLS",
    "InputItem",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OutputFunctionCall",
    "OutputItem",
    "OutputMessage",
    "OutputResponsesItem",
    "OutputSchema",
    "ResponseCompleted",
    "StreamingModel",
    "ToolDefinition",
]

InputItem: TypeAlias = UserInputItem | RunItem
"""What a model is sent: the run's input messages, then every item so far."""


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as offered to the model. ``kind`` says what it does on our side: a
    ``hosted`` tool runs on the provider's side and is sent as ``config``."""

    name: str
    """The name the model's calls carry (``namespace.tool`` in a namespace)."""
    description: str
    parameters: dict[str, Any]
    strict: bool = True
    kind: Literal["function", "handoff", "agent", "hosted"] = "function"
    namespace: str | None = None
    namespace_description: str | None = None
    defer_loading: bool = False
    config: dict[str, Any] | None = None
    """A hosted tool's API parameter, as declared."""
    include: str | None = None
    """What the request's ``include`` needs for a hosted tool's results."""

    @property
    def wire_name(self) -> str:
        """The name as the API spells it: without the namespace (``namespace.tool`` is
        sent as ``tool`` inside its namespace; a deferred ``tool.tool`` as ``tool``)."""
        head, dot, tail = self.name.partition(".")
        return tail if dot else head


HOSTED_CALLS = frozenset({
    "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call",
    "mcp_call", "mcp_list_tools", "tool_search_call", "tool_search_output",
})
"""Output items of hosted tools: done on the provider's side, kept and sent back."""


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """A structured output the model must produce (JSON-schema response format)."""

    name: str
    schema: dict[str, Any]
    strict: bool = True


def _no_settings() -> ModelSettings:
    """Every setting unset (the provider's defaults)."""
    from stepswitch.settings import ModelSettings

    return ModelSettings()


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call."""

    agent: str
    instructions: str | None
    input: Sequence[InputItem]
    """The run's input then every model-visible item so far, oldest first. An
    immutable sequence (the loop passes an O(1) view, not a copy)."""
    tools: tuple[ToolDefinition, ...]
    output_schema: OutputSchema | None
    settings: ModelSettings = field(default_factory=_no_settings)
    model: str | None = None
    """The model name the agent asks for, if any."""


@dataclass(frozen=True, slots=True)
class OutputMessage:
    """Assistant text in a response, or a refusal."""

    content: str
    refusal: str | None = None
    type: Literal["message"] = "message"


@dataclass(frozen=True, slots=True)
class OutputFunctionCall:
    """A function call in a response. ``arguments`` is raw text (may be invalid JSON)."""

    name: str
    arguments: str
    call_id: str
    type: Literal["function_call"] = "function_call"


@dataclass(frozen=True, slots=True)
class OutputResponsesItem:
    """An output item the loop does not act on but the model needs again next turn (a
    reasoning item with its ``encrypted_content``), kept verbatim; the loop records it
    as a ``ResponsesItem``."""

    item: dict[str, Any]
    type: Literal["responses_item"] = "responses_item"


OutputItem: TypeAlias = OutputMessage | OutputFunctionCall | OutputResponsesItem


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """What one model call produced."""

    output: tuple[OutputItem, ...]
    usage: Usage = field(default_factory=Usage)
    response_id: str | None = None
    raw: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ResponseCompleted:
    """The last event of a streamed response: the whole response."""

    response: ModelResponse
    type: Literal["response_completed"] = "response_completed"


@runtime_checkable
class Model(Protocol):
    """A model the loop can call."""

    async def get_response(self, request: ModelRequest) -> ModelResponse: ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also stream: raw provider events, then ``ResponseCompleted``."""

    def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]: ...
