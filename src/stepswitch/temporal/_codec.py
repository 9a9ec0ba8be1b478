"""What crosses between the workflow and its activities, as plain JSON values.

Temporal records every activity's input and result in the run's history, so they
are JSON: run items in the same shape a saved ``RunState`` uses, tool arguments as
the JSON the model sent (validated again on the worker), return values as JSON
values or, when a tool returns something richer, as the text the model sees.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any, TypeVar

from pydantic_core import to_jsonable_python

from stepswitch._dataclass import dataclass
from stepswitch.context import Usage
from stepswitch.errors import (
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    MCPServerError,
    ModelBehaviorError,
    ModelProviderError,
    OutputGuardrailTripwireTriggered,
    SessionConflict,
    SessionError,
    StateError,
    StepswitchError,
    ToolTimeoutError,
    UserError,
)
from stepswitch.runtime.model import (
    InputItem,
    ModelRequest,
    ModelResponse,
    OutputItem,
    OutputSchema,
    ToolDefinition,
)
from stepswitch.runtime.state_json import _item, _output, _read_item, _read_output
from stepswitch.settings import ModelSettings

__all__ = [
    "HookCall",
    "ModelCall",
    "SessionCall",
    "StepCall",
    "ToolCall",
    "error_class",
    "jsonable",
    "read_call",
    "read_items",
    "read_response",
    "request_of",
    "write_call",
    "write_items",
    "write_request",
    "write_response",
]


@dataclass
class ModelCall:
    """One model call: the request, and which model makes it (``None``: the worker's)."""

    request: dict[str, Any]
    model_ref: str | None = None
    traceparent: str | None = None
    """The span the model call's ``chat`` span goes under (its agent's)."""
    conversation_id: str | None = None


@dataclass
class ToolCall:
    """One function tool call: the validated arguments as JSON, and the run's context."""

    arguments: dict[str, Any]
    context: Any = None
    call_id: str = ""
    workflow_id: str = ""
    name: str = ""
    """The tool's name as the model calls it."""
    traceparent: str | None = None
    """The span the tool's ``execute_tool`` span goes under (its agent's)."""


@dataclass
class HookCall:
    """A hook that may do I/O (instructions, guardrails, on_handoff, needs_approval)."""

    kind: str
    ref: str
    agent: str
    args: list[Any] = field(default_factory=list)
    context: Any = None


@dataclass
class StepCall:
    """One ``@ss.step`` call of a flow: the node, its input as JSON (validated again into
    the step's input type on the worker), and the run's context as JSON."""

    node: str
    value: Any
    context: Any = None
    workflow_id: str = ""
    traceparent: str | None = None
    """The span the step's ``execute_step`` span goes under (the workflow's)."""


@dataclass
class SessionCall:
    """A conversation's ``load`` or ``append`` (items as a saved state writes them)."""

    op: str
    session_id: str
    limit: int | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    operation_id: str = ""
    expected_version: int | None = None
    current_agent: str | None = None


def write_call(
    call: ModelCall | ToolCall | HookCall | SessionCall | StepCall,
) -> dict[str, Any]:
    """An activity's argument as a plain dict (a shallow one: Temporal's converter would
    deep-copy a dataclass with ``dataclasses.asdict``, and decode one by evaluating its
    type hints on every call; the JSON is the same either way)."""
    return dict(call.__dict__)


def read_call(cls: type[_Call], raw: dict[str, Any]) -> _Call:
    """The dataclass of an activity's argument, from its plain dict (unknown keys, from
    a newer workflow, are left out)."""
    names = cls.__dataclass_fields__
    return cls(**{k: v for k, v in raw.items() if k in names})


def jsonable(value: Any) -> Any:
    """``value`` as JSON values (pydantic models and dataclasses become objects)."""
    return to_jsonable_python(value, fallback=str)


_Call = TypeVar("_Call", ModelCall, ToolCall, HookCall, SessionCall, StepCall)


def write_items(items: Any) -> list[dict[str, Any]]:
    return [_item(i) for i in items]


def read_items(raw: list[Any]) -> list[InputItem]:
    return [_read_item(x, f"items[{i}]") for i, x in enumerate(raw)]


def write_request(request: ModelRequest) -> dict[str, Any]:
    schema = request.output_schema
    return {
        "agent": request.agent,
        "instructions": request.instructions,
        "input": write_items(request.input),
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters,
             "strict": t.strict, "kind": t.kind}
            for t in request.tools
        ],
        "output_schema": None if schema is None else {
            "name": schema.name, "schema": schema.schema, "strict": schema.strict
        },
        "settings": request.settings.model_dump(mode="json", exclude_none=True),
        "model": request.model,
    }


def request_of(raw: dict[str, Any]) -> ModelRequest:
    schema = raw["output_schema"]
    return ModelRequest(
        agent=raw["agent"],
        instructions=raw["instructions"],
        input=tuple(read_items(raw["input"])),
        tools=tuple(ToolDefinition(**t) for t in raw["tools"]),
        output_schema=None if schema is None else OutputSchema(**schema),
        settings=ModelSettings(**raw["settings"]),
        model=raw["model"],
    )


def write_response(response: ModelResponse) -> dict[str, Any]:
    u = response.usage
    return {
        "output": [_output(o) for o in response.output],
        "usage": [u.requests, u.input_tokens, u.output_tokens, u.total_tokens],
        "response_id": response.response_id,
    }


def read_response(raw: dict[str, Any]) -> ModelResponse:
    output: tuple[OutputItem, ...] = tuple(
        _read_output(o, f"output[{i}]") for i, o in enumerate(raw["output"])
    )
    return ModelResponse(output, Usage(*raw["usage"]), response_id=raw["response_id"])


class _RemoteToolTimeout(ToolTimeoutError):
    """A ``ToolTimeoutError`` rebuilt from a tool activity's failure, which carries only
    its message (``Tool 'name' timed out after N seconds.``, the one the loop shows)."""

    def __init__(self, message: str) -> None:
        found = re.fullmatch(r"Tool '(.*)' timed out after (\S+) seconds\.", message, re.S)
        name, seconds = (found[1], float(found[2])) if found else ("?", 0.0)
        super().__init__(name, seconds)
        self.args = (message,)


# the run's failure names the error by its class: the one the loop raised, not this copy
_RemoteToolTimeout.__name__ = _RemoteToolTimeout.__qualname__ = "ToolTimeoutError"


_ERRORS: dict[str, type[StepswitchError]] = {
    cls.__name__: cls
    for cls in (
        UserError,
        StateError,
        ModelBehaviorError,
        ModelProviderError,
        MaxTurnsExceeded,
        InputGuardrailTripwireTriggered,
        OutputGuardrailTripwireTriggered,
        SessionError,
        SessionConflict,
        MCPServerError,
    )
}
_ERRORS["ToolTimeoutError"] = _RemoteToolTimeout


def error_class(name: str | None) -> type[StepswitchError] | None:
    """Our error class of that name (an activity's failure carries only the name)."""
    return _ERRORS.get(name or "")
