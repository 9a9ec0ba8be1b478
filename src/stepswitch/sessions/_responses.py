"""Responses input items (what the OpenAI Agents SDK keeps in its sessions) and
stepswitch's own items, both ways.

A session row written through :func:`~stepswitch.sessions.to_sdk_session` holds the
SDK's item exactly as it was given, wrapped as
``{"type": "responses_item", "agent": NAME, "item": {...}}``. The stepswitch view of
such a row (what ``load`` and ``get_items`` return) is the nearest stepswitch item: a
message, a function call or its output as the stepswitch item of that kind (a user
message with images or files keeps its content parts), and any other item (reasoning,
hosted tool calls, MCP items, …) as a ``ResponsesItem`` holding it verbatim, which a
stepswitch run on the Responses API sends back as it is (an item of a type the
installed ``openai`` package does not know is left out). The SDK view gives the item
back unchanged.
"""

from __future__ import annotations

import functools
import json
import typing
from typing import Any

from stepswitch._agents_api import PIN_TYPE
from stepswitch.errors import StateError
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    ResponsesItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import InputItem

__all__ = [
    "RESPONSES_ROW",
    "plain_item",
    "responses_item_types",
    "responses_view",
    "to_responses_item",
]

RESPONSES_ROW = "responses_item"
_ROLES = ("user", "system", "developer")
_TEXT_PARTS = frozenset(("input_text", "output_text", "text"))


def to_responses_item(item: InputItem) -> dict[str, Any]:
    """One of stepswitch's items as a Responses input item."""
    if type(item) is UserInputItem:
        if item.parts is not None:
            return {"role": item.role, "content": [dict(p) for p in item.parts]}
        return {"role": item.role, "content": item.content}
    if type(item) is ResponsesItem:
        return dict(item.item)
    if type(item) is MessageOutputItem:
        return {"role": "assistant", "content": item.content or item.refusal or ""}
    if isinstance(item, ToolCallItem | HandoffCallItem):
        return {"type": "function_call", "call_id": item.call_id, "name": item.name,
                "arguments": item.arguments}
    if isinstance(item, ToolCallOutputItem | HandoffOutputItem):
        return {"type": "function_call_output", "call_id": item.call_id, "output": item.output}
    raise TypeError(f"{type(item).__name__} is not conversation history")


def plain_item(raw: Any) -> dict[str, Any]:
    """An SDK item as a plain JSON object (a copy): what an SDK session stores.

    A model object (pydantic) is dumped as the SDK dumps it; anything that is not a
    JSON object is a ``TypeError``, as the SDK's own ``json.dumps`` would raise.
    """
    if hasattr(raw, "model_dump"):
        raw = raw.model_dump(exclude_unset=True, mode="json")
    if not isinstance(raw, dict):
        raise TypeError(
            f"a session item must be a Responses input item (a dict), got {type(raw).__name__}"
        )
    out = json.loads(json.dumps(raw, ensure_ascii=False, allow_nan=False))
    assert isinstance(out, dict)
    return out


def _text(content: Any, where: str) -> tuple[str, str | None]:
    """The text and the refusal of a message's content (a string or content parts)."""
    if isinstance(content, str):
        return content, None
    if not isinstance(content, list):
        raise StateError(f"{where}: a message's content must be a string or a list of parts")
    texts: list[str] = []
    refusals: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            raise StateError(f"{where}: a content part is not an object")
        if part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            refusals.append(part["refusal"])
    return "".join(texts), ("".join(refusals) if refusals else None)


def _field(raw: dict[str, Any], name: str, where: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str):
        raise StateError(f"{where}: a {raw.get('type')} item's {name} is not a string")
    return value


def responses_view(raw: dict[str, Any], agent: str, where: str, *,
                   strict: bool = True) -> InputItem | None:
    """The stepswitch item for a Responses input item (a ``ResponsesItem`` holding it
    for a type stepswitch does not model; None for a type no Responses input item has,
    which no request may carry). A message or function call with fields of the wrong type is a
    ``StateError`` (``where`` says which stored item), or None when not ``strict`` (an
    item the SDK wrote is kept as written, whatever its fields)."""
    try:
        return _view(raw, agent, where)
    except StateError:
        if strict:
            raise
        return None


def _view(raw: dict[str, Any], agent: str, where: str) -> InputItem | None:
    kind = raw.get("type", "message" if "role" in raw else None)
    if kind == "message":
        role = raw.get("role")
        text, refusal = _text(raw.get("content"), where)
        if role == "assistant":
            return MessageOutputItem(agent, text, refusal)
        if role in _ROLES:
            content = raw.get("content")
            if isinstance(content, list) and any(
                p.get("type") not in _TEXT_PARTS for p in content
            ):  # images, files: kept as given, for the next request
                return UserInputItem(text, role, tuple(content))
            return UserInputItem(text, role)
        raise StateError(f"{where}: a message with role {role!r}")
    if kind == "function_call":
        return ToolCallItem(agent, _field(raw, "name", where), _field(raw, "call_id", where),
                            _field(raw, "arguments", where))
    if kind == "function_call_output":
        output = raw.get("output")
        if isinstance(output, list):
            output = _text(output, where)[0]
        if not isinstance(output, str):
            raise StateError(f"{where}: a function_call_output's output is not text")
        return ToolCallOutputItem(agent, _field(raw, "call_id", where), output)
    if not isinstance(kind, str):
        raise StateError(f"{where}: an item with neither a type nor a role")
    if kind in responses_item_types():  # one the API takes back: kept to be sent
        return ResponsesItem(agent, raw)
    if kind == PIN_TYPE:  # where an Agents API session stands: the next run reads it
        return ResponsesItem(agent, raw)
    return None


@functools.cache
def responses_item_types() -> frozenset[str]:
    """Every ``type`` a Responses input item can have, read from the installed
    ``openai`` package (so a newer API's items are known when ``openai`` is newer)."""
    from openai.types.responses import ResponseInputItemParam

    kinds = {"message"}
    for member in typing.get_args(ResponseInputItemParam):
        hints = typing.get_type_hints(member, include_extras=False)
        for value in typing.get_args(hints.get("type", Any)):
            if isinstance(value, str):
                kinds.add(value)
            else:  # Required[Literal[...]] and the like
                kinds.update(v for v in typing.get_args(value) if isinstance(v, str))
    return frozenset(kinds)
