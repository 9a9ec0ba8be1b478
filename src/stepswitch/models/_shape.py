"""Reading a server's JSON with every wrong shape a ``ModelBehaviorError`` that names
the field (``choices[0].message.tool_calls[1].function.name``), never a ``TypeError``
from deep in an adapter. Not public API."""

from __future__ import annotations

import json
from typing import Any

from stepswitch.errors import ModelBehaviorError

__all__ = ["arguments_text", "malformed", "optional", "required"]

_KIND_NAMES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def _kind(value: Any) -> str:
    return _KIND_NAMES.get(type(value), type(value).__name__)


def malformed(path: str, problem: str) -> ModelBehaviorError:
    return ModelBehaviorError(f"malformed response: {path} {problem}")


def required(data: dict[str, Any], key: str, kind: type, path: str) -> Any:
    """``data[key]``, which must be present and of ``kind``."""
    value = data.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        if value is None:
            raise malformed(path, f"is missing (expected {_KIND_NAMES[kind]})")
        raise malformed(path, f"must be {_KIND_NAMES[kind]}, got {_kind(value)}")
    return value


def optional(data: dict[str, Any], key: str, kind: type, path: str) -> Any:
    """``data[key]`` when present and not null (then it must be of ``kind``), else None."""
    if data.get(key) is None:
        return None
    return required(data, key, kind, path)


def arguments_text(value: Any, path: str) -> str:
    """A function call's arguments as JSON text. Some compatible servers send a JSON
    object instead of the string the API defines: it is taken as the same arguments.
    Anything else is refused, so a tool never runs with arguments the model did not
    send (an empty default in place of a number, say)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    raise malformed(path, f"must be a JSON string or object, got {_kind(value)}")
