"""Reading a server's JSON with every wrong shape a ``ModelBehaviorError`` that names
the field (``choices[0].message.tool_calls[1].function.name``), never a ``TypeError``
from deep in an adapter. Not public API."""

from __future__ import annotations

import json
import re
from typing import Any

from stepswitch.errors import ModelBehaviorError

__all__ = ["arguments_text", "malformed", "optional", "required", "unicode_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")

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
    if isinstance(value, str):
        unicode_text(value, path)
    return value


def unicode_text(value: str, path: str) -> str:
    """``value``, unless it holds a lone surrogate: JSON can carry one as an escape, but
    it is no Unicode text, so it can be neither sent back to the model nor saved."""
    found = _SURROGATE.search(value)
    if found is not None:
        raise malformed(
            path, f"holds a lone surrogate (\\u{ord(found.group()):04x}), which is not text"
        )
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
        return unicode_text(value, path)
    if value is None:
        return ""
    if isinstance(value, dict):
        return unicode_text(json.dumps(value, ensure_ascii=False), path)
    raise malformed(path, f"must be a JSON string or object, got {_kind(value)}")
