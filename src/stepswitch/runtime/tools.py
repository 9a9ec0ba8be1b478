"""Tool calls on the trusted side: parse and validate arguments, turn values and
errors into the text the model sees.

Validation precedes execution (DESIGN §4, invariant 3): a call whose arguments do
not parse or do not fit the schema never reaches the function; the model gets an
error output that names the problem so it can retry.

pydantic is imported where it is used, not with the module: a tool's parameters are a
pydantic model the DSL built (pydantic is loaded by then), and a runtime that only
imports this module (a generated runner's import, a check reading an annotation)
does not pay for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from stepswitch._json import loads
from stepswitch.errors import ArgumentError

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter, ValidationError

__all__ = [
    "MULTIPLE_HANDOFFS",
    "REJECTED",
    "ArgumentError",
    "BoundTool",
    "adapter_for",
    "error_output",
    "output_text",
    "parse_arguments",
    "parse_typed",
    "result_text",
]

REJECTED = "Tool execution was not approved."
"""What the model sees for a rejected call (the SDK's default)."""

MULTIPLE_HANDOFFS = "Multiple handoffs detected, ignoring this one."


class BoundTool(Protocol):
    """What the runtime needs of a bound function tool (``@function_tool`` objects)."""

    name: str
    fn: Callable[..., Any]
    params_model: type[BaseModel]
    needs_approval: Any
    failure_error_function: Any

    def arguments_of(self, params: BaseModel) -> dict[str, Any]: ...


_JSON_KINDS: dict[type, str] = {
    list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"
}


def _loads(what: str, raw: str) -> dict[str, Any]:
    """``what`` names the subject: ``tool <name>`` or ``handoff <name>``."""
    if not raw.strip():
        return {}
    try:
        data = loads(raw)  # limits: the model may send deep nesting or huge integers
    except json.JSONDecodeError as exc:
        raise ArgumentError(
            f"Invalid JSON input for {what}: {exc.msg} at position {exc.pos} "
            f"in {_clip(raw)}. Send the arguments as a JSON object."
        ) from None
    if not isinstance(data, dict):
        got = "null" if data is None else f"{_JSON_KINDS.get(type(data), 'a value')} {_clip(raw)}"
        raise ArgumentError(
            f"Invalid JSON input for {what}: expected a JSON object, got {got}."
        )
    return data


def parse_arguments(tool: BoundTool, raw: str) -> BaseModel:
    """Validated parameters (lax, extra keys ignored, as the SDK), or ``ArgumentError``."""
    from pydantic import ValidationError

    try:  # the fast path: one pass in pydantic-core; errors are re-diagnosed below
        return tool.params_model.model_validate_json(raw if raw.strip() else "{}")
    except ValidationError:
        pass
    data = _loads(f"tool {tool.name}", raw)
    try:
        return tool.params_model.model_validate(data)
    except ValidationError as exc:
        raise ArgumentError(
            f"Invalid arguments for tool {tool.name}: {describe_invalid(exc)}. "
            "Fix the arguments and call the tool again."
        ) from None


def parse_typed(what: str, tp: Any, raw: str) -> Any:
    """Arguments for a typed input (handoff ``input_type``, agent-tool ``parameters``)."""
    from pydantic import ValidationError

    data = _loads(what, raw)
    try:
        return adapter_for(tp).validate_python(data)
    except ValidationError as exc:
        raise ArgumentError(
            f"Invalid arguments for {what}: {describe_invalid(exc)}. "
            "Fix the arguments and call it again."
        ) from None


@lru_cache(maxsize=512)
def adapter_for(tp: Any) -> TypeAdapter[Any]:
    """One ``TypeAdapter`` per type, built once."""
    from pydantic import TypeAdapter

    return TypeAdapter(tp)


def describe_invalid(exc: ValidationError) -> str:
    """A validation error on one line: each bad field, what is wrong, what it got."""
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        parts.append(f"{where}: {err.get('msg', 'invalid')} (got {_clip(repr(err.get('input')))})")
    more = exc.error_count() - len(parts)
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def output_text(value: Any) -> str:
    """What the model sees for a tool's return value."""
    if isinstance(value, str):
        return value
    if "pydantic" in sys.modules:  # not loaded: the value is no pydantic model
        from pydantic import BaseModel

        if isinstance(value, BaseModel):
            return value.model_dump_json()
    if is_dataclass(value) and not isinstance(value, type):
        return json.dumps(asdict(value), default=str)
    if isinstance(value, dict | list | tuple) or value is None:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def result_text(name: str, value: Any) -> tuple[str, bool]:
    """What the model sees for a tool's return value, and whether that is an error.

    A value with no text form (a ``__str__`` that raises, an object json cannot write)
    is an error output that says the tool *did* run: the run keeps its record of the
    effect, and the model is told not to repeat it."""
    try:
        return output_text(value), False
    except Exception as exc:
        return (
            f"Tool {name} ran, but its result could not be turned into text "
            f"({_exception_text(exc)}). It has run: do not call it again for this.",
            True,
        )


def _exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "its message cannot be shown either"
    return f"{type(exc).__name__}: {_clip(text)}" if text else type(exc).__name__


def error_output(exc: BaseException) -> str:
    """The default error output of a tool that raised (the SDK's text plus the error)."""
    # a run limit's summary: the model needs what happened, not the developer's hint
    text = getattr(exc, "summary", None) or error_text(exc)
    return f"An error occurred while running the tool. Please try again. Error: {text}"


def error_text(exc: BaseException) -> str:
    """``str(exc)`` (as the SDK puts it, empty too); its type's name when that raises:
    a broken ``__str__`` must not end the run it reports on."""
    try:
        return str(exc)
    except Exception:
        return type(exc).__name__


def parse_typed_output(tp: Any, wrapped: bool, text: str) -> Any:
    """A final message parsed as a typed output with strict validation."""
    adapter = adapter_for(tp)
    if not wrapped:
        return adapter.validate_json(text, strict=True)
    data = loads(text)
    if not isinstance(data, dict) or "response" not in data:
        raise ValueError('expected a JSON object {"response": ...}')
    return adapter.validate_json(json.dumps(data["response"]), strict=True)
