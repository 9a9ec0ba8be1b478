"""Provider-neutral scripts: what a scripted model answers, call by call.

One script drives every scripted surface: :class:`~stepswitch.models.OpenAIServer`
serves it over HTTP in the shape of either OpenAI API, and ``--model scripted:FILE``
replays it in process. A step is one model call's answer:

- a list of output items (``message("text")``, ``call("name", {"a": 1})``,
  ``refusal("no")``), the runtime's own ``OutputMessage``/``OutputFunctionCall``;
- a ``ModelResponse`` (output items plus usage);
- ``error_reply(status, ...)``: the server answers with that HTTP error status;
- ``raw_reply(body)``: the server sends ``body`` verbatim (truncated or invalid JSON);
- ``truncated(items)``: the server drops the connection part-way through the answer.

The JSON form (a list of steps, or ``{"steps": [...]}``) is documented in
``docs/models.md`` and read by :func:`load_script`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

from stepswitch._dataclass import dataclass
from stepswitch._json import loads
from stepswitch.context import Usage
from stepswitch.errors import UserError
from stepswitch.runtime.model import (
    ModelResponse,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputResponsesItem,
)

__all__ = [
    "ErrorReply",
    "RawReply",
    "Reply",
    "ServerStep",
    "call",
    "error_reply",
    "fill_call_ids",
    "load_script",
    "message",
    "normalize_step",
    "parse_script",
    "raw_reply",
    "refusal",
    "reply_usage",
    "slow",
    "truncated",
]


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful answer: output items in the model's order, and token counts."""

    output: tuple[OutputItem, ...]
    input_tokens: int = 0
    output_tokens: int = 0
    delay: float = 0.0
    """Seconds the server waits before answering (to provoke client timeouts)."""
    cut_after: int | None = None
    """When set, the server drops the connection mid-answer: after this many events of
    a stream (before its end), or after half of a plain body (see :func:`truncated`)."""


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """An HTTP error answer, in OpenAI's ``{"error": {...}}`` body shape."""

    status: int
    message: str
    type: str = "invalid_request_error"
    code: str | None = None
    retry_after: float | None = None
    """Seconds, sent as both ``retry-after`` and ``retry-after-ms`` headers."""
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class RawReply:
    """A body sent verbatim, with no checks: for truncated or invalid responses."""

    body: str
    status: int = 200
    content_type: str = "application/json"
    delay: float = 0.0


ServerStep: TypeAlias = (
    Reply | ErrorReply | RawReply | ModelResponse | Sequence[OutputItem] | OutputItem
)
"""Anything :func:`normalize_step` accepts as one model call's answer."""


def message(text: str) -> OutputMessage:
    """An assistant message with ``text``."""
    return OutputMessage(content=text)


def refusal(text: str) -> OutputMessage:
    """A refusal: the model declines, saying ``text``."""
    return OutputMessage(content="", refusal=text)


def call(
    name: str, arguments: Mapping[str, Any] | str = "{}", call_id: str = ""
) -> OutputFunctionCall:
    """A function call. ``arguments`` is a dict (sent as JSON) or raw text, which may be
    invalid JSON on purpose. An empty ``call_id`` is filled in when the step is served."""
    text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return OutputFunctionCall(name=name, arguments=text, call_id=call_id)


_STATUS_TEXT = {
    400: ("invalid_request_error", "The request is invalid."),
    401: ("invalid_request_error", "Incorrect API key provided."),
    403: ("permission_denied", "You do not have access to this model."),
    404: ("invalid_request_error", "The model does not exist or you do not have access to it."),
    429: ("rate_limit_exceeded", "Rate limit reached. Please try again later."),
    500: ("server_error", "The server had an error while processing your request."),
    503: ("server_error", "The engine is currently overloaded."),
}


def error_reply(
    status: int,
    message: str | None = None,
    *,
    retry_after: float | None = None,
    code: str | None = None,
) -> ErrorReply:
    """An error status with OpenAI's body shape; ``retry_after`` in seconds."""
    if not 400 <= status <= 599:
        raise UserError(f"error_reply: status must be 400..599, got {status}")
    kind, default = _STATUS_TEXT.get(status, ("server_error", f"HTTP {status}"))
    return ErrorReply(status, message or default, type=kind, code=code, retry_after=retry_after)


def raw_reply(body: str, status: int = 200, content_type: str = "application/json") -> RawReply:
    """Send ``body`` as is (e.g. a truncated JSON document)."""
    return RawReply(body=body, status=status, content_type=content_type)


MAX_DELAY = 600.0


def slow(step: Any, seconds: float) -> Reply | ErrorReply | RawReply:
    """``step``, answered only after ``seconds`` (at most 600): a client with a
    shorter timeout gives up and retries."""
    if not 0 <= seconds <= MAX_DELAY:
        raise UserError(f"slow: seconds must be 0..{MAX_DELAY:g}, got {seconds}")
    return replace(normalize_step(step), delay=float(seconds))


def truncated(step: Any, after_events: int = 2) -> Reply:
    """``step`` (output items) served with the connection dropped part-way: a streamed
    answer stops after ``after_events`` events with no end of stream (no
    ``[DONE]``, no ``response.completed``); a plain answer stops after half its body.
    It is what a crashing server or a broken proxy leaves the client with."""
    reply = normalize_step(step)
    if not isinstance(reply, Reply):
        raise UserError("truncated: expected output items, not an error or raw reply")
    if after_events < 0:
        raise UserError(f"truncated: after_events must be 0 or more, got {after_events}")
    return replace(reply, cut_after=after_events)


def normalize_step(step: Any, where: str = "step") -> Reply | ErrorReply | RawReply:
    """One of the accepted step shapes as a :class:`Reply`, :class:`ErrorReply` or
    :class:`RawReply`; anything else is a :class:`UserError` naming ``where``."""
    if isinstance(step, Reply | ErrorReply | RawReply):
        return step
    if isinstance(step, ModelResponse):
        return Reply(step.output, step.usage.input_tokens, step.usage.output_tokens)
    if isinstance(step, OutputMessage | OutputFunctionCall | OutputResponsesItem):
        return Reply((step,))
    if isinstance(step, Sequence) and not isinstance(step, str | bytes):
        items = tuple(step)
        for i, item in enumerate(items):
            if not isinstance(item, OutputMessage | OutputFunctionCall | OutputResponsesItem):
                raise UserError(
                    f"{where}[{i}]: expected message(...), refusal(...), call(...) or an "
                    "OutputResponsesItem, "
                    f"got {type(item).__name__}"
                )
        return Reply(items)
    raise UserError(
        f"{where}: expected a list of output items, a ModelResponse, error_reply(...) or "
        f"raw_reply(...), got {type(step).__name__}"
    )


def fill_call_ids(
    reply: Reply, step: int, taken: Callable[[str], bool] | None = None
) -> Reply:
    """``reply`` with every empty call id set to ``call_<step>_<index>`` (deterministic).

    ``taken(id)`` says whether the conversation already holds an id (a resumed run is
    often driven by a fresh script whose numbering starts over); such an id gets a
    ``_2``, ``_3``… suffix, since a real model never reuses one and the loop refuses it."""
    items = []
    for i, item in enumerate(reply.output):
        if isinstance(item, OutputFunctionCall) and not item.call_id:
            call_id = f"call_{step}_{i}"
            if taken is not None and taken(call_id):
                n = 2
                while taken(f"{call_id}_{n}"):
                    n += 1
                call_id = f"{call_id}_{n}"
            item = replace(item, call_id=call_id)
        items.append(item)
    return replace(reply, output=tuple(items))


def reply_usage(reply: Reply) -> Usage:
    """The usage a reply reports (one request)."""
    return Usage(
        requests=1,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        total_tokens=reply.input_tokens + reply.output_tokens,
    )


# ---- the JSON form ---------------------------------------------------------------------


def load_script(path: str | Path) -> list[Reply | ErrorReply | RawReply]:
    """Read a JSON script file; every problem is a :class:`UserError` naming the file."""
    file = Path(path)
    if file.exists() and not file.is_file():  # a FIFO or a device: never read
        raise UserError(f"{file}: not a regular file; name a script file")
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{file}: cannot read the script: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{file}: not a script: byte {exc.start} is not UTF-8 text"
        ) from None
    try:
        data = loads(text)  # limits: deep nesting and huge numbers are refused
    except json.JSONDecodeError as exc:
        raise UserError(f"{file}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    return parse_script(data, where=str(file))


def parse_script(data: Any, where: str = "script") -> list[Reply | ErrorReply | RawReply]:
    """Steps from the JSON form (already parsed)."""
    if isinstance(data, dict) and set(data) == {"steps"}:
        data = data["steps"]
    if not isinstance(data, list):
        raise UserError(f'{where}: expected a list of steps (or {{"steps": [...]}})')
    return [_parse_step(s, f"{where}: step {i + 1}") for i, s in enumerate(data)]


def _parse_step(data: Any, where: str) -> Reply | ErrorReply | RawReply:
    if isinstance(data, list):
        data = {"output": data}
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected an object with output, error or raw")
    if "delay" in data:
        data = dict(data)
        delay = data.pop("delay")
        if not isinstance(delay, int | float) or isinstance(delay, bool):
            raise UserError(f"{where}: delay must be a number of seconds")
        try:
            return slow(_parse_step(data, where), delay)
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None
    keys = set(data)
    if "error" in data:
        _only(keys, {"error"}, where)
        return _parse_error(data["error"], where)
    if "raw" in data:
        _only(keys, {"raw", "status", "content_type"}, where)
        body = data["raw"]
        status = data.get("status", 200)
        if not isinstance(body, str) or not isinstance(status, int):
            raise UserError(f"{where}: raw must be a string and status an integer")
        return RawReply(body, status, str(data.get("content_type", "application/json")))
    if "output" not in data:
        import difflib

        unknown = sorted(k for k in data if k not in ("usage",))
        close = [m for k in unknown
                 for m in difflib.get_close_matches(str(k), ["output", "error", "raw"], n=1)]
        got = f", got {', '.join(map(repr, unknown))}" if unknown else ""
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UserError(f"{where}: expected one of the keys output, error, raw{got}{hint}")
    _only(keys, {"output", "usage"}, where)
    items = data["output"]
    if not isinstance(items, list):
        raise UserError(f"{where}: output must be a list of items")
    usage = data.get("usage", {})
    if not isinstance(usage, dict):
        raise UserError(f"{where}: usage must be an object with input_tokens, output_tokens")
    parsed = tuple(_parse_item(item, f"{where}: output[{i}]") for i, item in enumerate(items))
    return Reply(parsed, _int(usage, "input_tokens", where), _int(usage, "output_tokens", where))


def _parse_item(data: Any, where: str) -> OutputItem:
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected an object with a type")
    kind = data.get("type")
    if kind == "message":
        _only(set(data), {"type", "text"}, where)
        text = data.get("text")
        if not isinstance(text, str):
            raise UserError(f"{where}: a message needs text (a string)")
        return message(text)
    if kind == "refusal":
        _only(set(data), {"type", "text"}, where)
        text = data.get("text")
        if not isinstance(text, str):
            raise UserError(f"{where}: a refusal needs text (a string)")
        return refusal(text)
    if kind == "function_call":
        _only(set(data), {"type", "name", "arguments", "call_id"}, where)
        name = data.get("name")
        args = data.get("arguments", {})
        call_id = data.get("call_id", "")
        if not isinstance(name, str) or not name:
            raise UserError(f"{where}: a function_call needs a name")
        if not isinstance(args, dict | str):
            raise UserError(f"{where}: arguments must be an object or a string")
        if not isinstance(call_id, str):
            raise UserError(f"{where}: call_id must be a string")
        return call(name, args, call_id)
    raise UserError(f"{where}: unknown item type {kind!r}; use message, refusal or function_call")


def _parse_error(data: Any, where: str) -> ErrorReply:
    if isinstance(data, int) and not isinstance(data, bool):
        data = {"status": data}
    if not isinstance(data, dict) or not isinstance(data.get("status"), int):
        raise UserError(f"{where}: error must be a status code or an object with status")
    _only(set(data), {"status", "message", "retry_after", "code"}, where)
    retry = data.get("retry_after")
    if retry is not None and not isinstance(retry, int | float):
        raise UserError(f"{where}: retry_after must be a number of seconds")
    msg = data.get("message")
    if msg is not None and not isinstance(msg, str):
        raise UserError(f"{where}: message must be a string")
    code = data.get("code")
    return error_reply(
        data["status"], msg, retry_after=retry, code=code if isinstance(code, str) else None
    )


def _int(data: Mapping[str, Any], key: str, where: str) -> int:
    value = data.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UserError(f"{where}: usage.{key} must be a non-negative integer")
    return value


def _only(keys: Iterable[str], allowed: set[str], where: str) -> None:
    extra = sorted(set(keys) - allowed)
    if extra:
        raise UserError(f"{where}: unknown key(s) {', '.join(extra)}; allowed: {sorted(allowed)}")
