"""Deterministic test doubles, shipped for users (like the SDK's ``agents.testing``).

``ScriptedModel(steps)`` answers each model call with the next step: a list of
output items made with :func:`function_call` and :func:`assistant_message`, or an
exception to raise. It records every call and fails loudly on a call past the end
of its script; ``assert_complete()`` checks that every step was used::

    model = ScriptedModel([
        [function_call("lookup_order", {"order_id": 42})],
        [assistant_message("Order 42 has shipped.")],
    ])
    result = machine.run_sync("where is 42?", model=model)
    model.assert_complete()
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from stepswitch.context import Usage
from stepswitch.runtime.model import (
    InputItem,
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputSchema,
    ResponseCompleted,
)
from stepswitch.settings import ModelSettings

__all__ = [
    "RecordedCall",
    "ScriptExhausted",
    "ScriptedModel",
    "Step",
    "assistant_message",
    "function_call",
]

Step: TypeAlias = Sequence[OutputItem] | OutputItem | BaseException | ModelResponse
"""One model response: output items (or one), a whole ``ModelResponse``, or an error."""


def function_call(
    name: str, arguments: dict[str, Any] | str | None = None, call_id: str | None = None
) -> OutputFunctionCall:
    """A call of tool ``name``. ``arguments`` is a dict (sent as JSON) or raw text, which
    may be invalid JSON on purpose. Without ``call_id`` the model numbers the calls."""
    if arguments is None:
        raw = "{}"
    elif isinstance(arguments, str):
        raw = arguments
    else:
        raw = json.dumps(arguments)
    return OutputFunctionCall(name=name, arguments=raw, call_id=call_id or "")


def assistant_message(text: str) -> OutputMessage:
    """An assistant message with ``text``."""
    return OutputMessage(content=text)


class ScriptExhausted(AssertionError):
    """The model was called more often than its script has steps."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One model call as the scripted model saw it."""

    agent: str
    instructions: str | None
    input: Sequence[InputItem]
    """The items sent (an immutable view: later turns do not change it)."""
    tools: tuple[str, ...]
    """Names of the tools offered, handoff and agent tools included, in order."""
    output_schema: OutputSchema | None
    settings: ModelSettings
    request: ModelRequest


class ScriptedModel:
    """A model that plays back a script of responses, one per call."""

    def __init__(self, steps: Sequence[Step], *, name: str = "scripted") -> None:
        self.steps = list(steps)
        self.name = name
        self.model = name
        self.calls: list[RecordedCall] = []
        self._ids = 0

    @property
    def remaining(self) -> int:
        """How many steps are left."""
        return len(self.steps) - len(self.calls)

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        index = len(self.calls)
        self.calls.append(
            RecordedCall(
                agent=request.agent,
                instructions=request.instructions,
                input=request.input,
                tools=tuple(t.name for t in request.tools),
                output_schema=request.output_schema,
                settings=request.settings,
                request=request,
            )
        )
        if index >= len(self.steps):
            raise ScriptExhausted(
                f"ScriptedModel: unexpected model call #{index + 1} (agent {request.agent!r}); "
                f"the script has only {len(self.steps)} step(s)"
            )
        step = self.steps[index]
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, ModelResponse):
            return step
        items: Sequence[OutputItem] = (
            (step,) if isinstance(step, OutputMessage | OutputFunctionCall) else step
        )
        output = tuple(self._numbered(item, index) for item in items)
        return ModelResponse(output=output, usage=Usage(requests=1), response_id=f"resp_{index}")

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        """Each output item as a raw event, then the completed response."""
        response = await self.get_response(request)
        for item in response.output:
            yield {"type": "response.output_item.done", "item": item}
        yield ResponseCompleted(response)

    def _numbered(self, item: OutputItem, step: int) -> OutputItem:
        if isinstance(item, OutputFunctionCall) and not item.call_id:
            self._ids += 1
            return replace(item, call_id=f"call_{step + 1}_{self._ids}")
        return item

    def assert_complete(self) -> None:
        """Fail unless every step of the script was used."""
        if self.remaining > 0:
            raise AssertionError(
                f"ScriptedModel: {self.remaining} of {len(self.steps)} step(s) were never used "
                f"(the run made {len(self.calls)} model call(s))"
            )

