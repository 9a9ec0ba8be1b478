"""``ScriptedModel``: a model that plays back a script of responses, one per call.

The in-process test double; :mod:`stepswitch.testing` is where users import it from
(with :func:`function_call` and :func:`assistant_message`), and the session
conformance suite drives its runs with it. :mod:`stepswitch.models.openai_server` is
the same idea over real HTTP.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from stepswitch._dataclass import dataclass
from stepswitch.context import Usage
from stepswitch.runtime._quick import quick_maker
from stepswitch.runtime.model import (
    InputItem,
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputResponsesItem,
    OutputSchema,
    ResponseCompleted,
)
from stepswitch.settings import ModelSettings

__all__ = [
    "RecordedCall",
    "ScriptExhausted",
    "ScriptStep",
    "ScriptedModel",
    "assistant_message",
    "function_call",
]

ScriptStep: TypeAlias = Sequence[OutputItem] | OutputItem | BaseException | ModelResponse
"""One model response: output items (or one), a whole ``ModelResponse``, or an error."""


def function_call(
    name: str, arguments: dict[str, Any] | str | None = None, call_id: str | None = None,
    *, namespace: str | None = None,
) -> OutputFunctionCall:
    """A call of tool ``name``. ``arguments`` is a dict (sent as JSON) or raw text, which
    may be invalid JSON on purpose. Without ``call_id`` the model numbers the calls.
    ``namespace`` (as in the SDK's ``agents.testing``) calls a tool of a
    ``tool_namespace``, or with ``namespace=name`` a deferred tool a tool search loaded:
    the call's name is then ``namespace.name``."""
    if namespace is not None:
        name = f"{namespace}.{name}"
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


@dataclass(slots=True)
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


_response = quick_maker(ModelResponse)
"""A script's responses, made as ``ModelResponse(...)`` makes them, for less (a script
is built per run, a response per turn)."""
_usage = quick_maker(Usage)


class ScriptedModel:
    """A model that plays back a script of responses, one per call."""

    provider_name = "stepswitch.scripted"
    """``gen_ai.provider.name`` on this model's spans."""

    def __init__(self, steps: Sequence[ScriptStep], *, name: str = "scripted") -> None:
        self.steps = list(steps)
        self.name = name
        self.model = name
        self._requests: list[ModelRequest] = []
        self._calls: list[RecordedCall] = []
        self._tool_names: dict[int, tuple[Sequence[Any], tuple[str, ...]]] = {}
        # Steps are played in order, so calls can be numbered (and responses built) now.
        ids = 0
        self._script: list[ModelResponse | BaseException] = []
        self._numbered: set[int] = set()  # steps whose call ids the model made up
        for index, step in enumerate(self.steps):
            kind = type(step)
            if kind is list or kind is tuple:
                items: Sequence[Any] = step  # type: ignore[assignment]
            elif kind is OutputMessage or kind is OutputFunctionCall:
                items = (step,)
            elif isinstance(step, BaseException | ModelResponse):
                self._script.append(step)
                continue
            else:
                items = list(step)  # type: ignore[arg-type]
            output: list[OutputItem] = []
            for item in items:
                if type(item) is OutputFunctionCall:
                    if not item.call_id:
                        self._numbered.add(index)
                        ids += 1
                        item = replace(item, call_id=f"call_{index + 1}_{ids}")
                elif type(item) is not OutputMessage and type(item) is not OutputResponsesItem:
                    raise TypeError(
                        f"ScriptedModel step {index + 1}: expected output items made with "
                        "function_call(), assistant_message() or OutputResponsesItem, got "
                        f"{type(item).__name__}"
                    )
                output.append(item)
            self._script.append(
                _response(tuple(output), _usage(1), f"resp_{index}")  # 1 request
            )

    @property
    def calls(self) -> list[RecordedCall]:
        """Every call so far, as the model saw it, oldest first.

        Recorded as the requests themselves (immutable) and read out on first look, so
        a run pays for the record only when a test reads it."""
        calls = self._calls
        for request in self._requests[len(calls):]:
            calls.append(
                RecordedCall(
                    request.agent,
                    request.instructions,
                    request.input,
                    self._names(request.tools),
                    request.output_schema,
                    request.settings,
                    request,
                )
            )
        return calls

    @property
    def remaining(self) -> int:
        """How many steps are left."""
        return len(self.steps) - len(self._requests)

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        index = len(self._requests)
        self._requests.append(request)
        if index >= len(self._script):
            raise ScriptExhausted(
                f"ScriptedModel: unexpected model call #{index + 1} (agent {request.agent!r}); "
                f"the script has only {len(self.steps)} step(s)"
            )
        step = self._script[index]
        if isinstance(step, BaseException):
            raise step
        if index in self._numbered:
            step = _fresh_ids(step, request.input)
        return step

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        """Each output item as a raw event, then the completed response."""
        response = await self.get_response(request)
        for item in response.output:
            yield {"type": "response.output_item.done", "item": item}
        yield ResponseCompleted(response)

    def _names(self, tools: Sequence[Any]) -> tuple[str, ...]:
        # the loop reuses one tools tuple per agent state: name it once
        cached = self._tool_names.get(id(tools))
        if cached is not None and cached[0] is tools:
            return cached[1]
        names = tuple(t.name for t in tools)
        self._tool_names[id(tools)] = (tools, names)
        return names

    def assert_complete(self) -> None:
        """Fail unless every step of the script was used."""
        if self.remaining > 0:
            raise AssertionError(
                f"ScriptedModel: {self.remaining} of {len(self.steps)} step(s) were never used "
                f"(the run made {len(self._requests)} model call(s))"
            )


def _fresh_ids(response: ModelResponse, history: Sequence[InputItem]) -> ModelResponse:
    """``response`` with made-up call ids renamed where the history already has them.

    A resumed run is often driven by a new ``ScriptedModel`` whose numbering starts
    over; a real model never reuses an id (the loop refuses a reused one), so neither
    does this one. Deterministic: the same history gives the same ids."""
    used: set[str] = set()
    for i in history:
        call_id = getattr(i, "call_id", None)
        if isinstance(call_id, str):
            used.add(call_id)
    if not used:
        return response
    output: list[OutputItem] = []
    changed = False
    for item in response.output:
        if type(item) is OutputFunctionCall and item.call_id in used:
            n = 2
            while f"{item.call_id}_{n}" in used:
                n += 1
            item = replace(item, call_id=f"{item.call_id}_{n}")
            used.add(item.call_id)
            changed = True
        output.append(item)
    return replace(response, output=tuple(output)) if changed else response
