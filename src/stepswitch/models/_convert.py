"""What both OpenAI adapters share: the item history as a provider-neutral plan, tool
choice, error mapping and the default client. Not public API.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import field
from typing import Any, TypeAlias

import openai

from stepswitch._agents_api import PIN_TYPE
from stepswitch._dataclass import dataclass
from stepswitch.context import Usage
from stepswitch.errors import ModelBehaviorError, ModelProviderError, StepswitchError, UserError
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    ResponsesItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import InputItem

__all__ = [
    "Answered",
    "Entry",
    "Opaque",
    "Said",
    "ToolOutputEntry",
    "as_dict",
    "as_int",
    "as_str",
    "make_client",
    "map_error",
    "plan_history",
    "server_message",
    "usage_from",
    "verbatim_kwargs",
]


@dataclass(frozen=True, slots=True)
class Said:
    """A message given as run input (user, system, developer or assistant); ``parts``
    are its content parts as given, when it has them (images, files)."""

    role: str
    text: str
    parts: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True, slots=True)
class Opaque:
    """A Responses item kept verbatim (a reasoning item), in its place in the history."""

    item: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    call_id: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Answered:
    """One assistant turn: text, refusal and the calls it made (each answered later)."""

    text: str | None = None
    refusal: str | None = None
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolOutputEntry:
    """The output for ``call_id``; always right after the ``Answered`` that made the call."""

    call_id: str
    output: str


Entry: TypeAlias = Said | Answered | ToolOutputEntry | Opaque


@dataclass(slots=True)
class _Pending:
    text: str | None = None
    refusal: str | None = None
    calls: list[Call] = field(default_factory=list)

    def empty(self) -> bool:
        return self.text is None and self.refusal is None and not self.calls


def plan_history(items: Sequence[InputItem]) -> list[Entry]:
    """The history in the order both APIs accept: every function call (tool or handoff)
    is followed at once by its output, paired by call id.

    A call with no output anywhere in the history (a pending approval) and an output
    with no call are left out: the APIs reject either. Approval items are bookkeeping
    of our side and are never sent. A ``ResponsesItem`` keeps its place (a reasoning
    item right before the message or calls it preceded).
    """
    outputs: dict[str, str] = {}
    called: set[str] = set()
    for item in items:
        if isinstance(item, ToolCallOutputItem | HandoffOutputItem):
            outputs.setdefault(item.call_id, item.output)
        elif isinstance(item, ToolCallItem | HandoffCallItem):
            called.add(item.call_id)
    plan: list[Entry] = []
    pending = _Pending()
    sent: set[str] = set()

    def flush() -> None:
        nonlocal pending
        if pending.empty():
            return
        plan.append(Answered(pending.text, pending.refusal, tuple(pending.calls)))
        for c in pending.calls:
            plan.append(ToolOutputEntry(c.call_id, outputs[c.call_id]))
        pending = _Pending()

    for item in items:
        if isinstance(item, UserInputItem):
            flush()
            plan.append(Said(item.role, item.content, item.parts))
        elif isinstance(item, MessageOutputItem):
            flush()
            pending.text = item.content if item.content or item.refusal is None else None
            pending.refusal = item.refusal
        elif isinstance(item, ToolCallItem | HandoffCallItem):
            if item.call_id in outputs and item.call_id not in sent:
                sent.add(item.call_id)
                pending.calls.append(Call(item.name, item.call_id, item.arguments))
        elif isinstance(item, ToolCallOutputItem | HandoffOutputItem):
            if item.call_id in called:
                flush()
        elif isinstance(item, ToolApprovalItem):
            continue
        elif type(item) is ResponsesItem:  # before what follows it, as the model gave it
            if item.item.get("type") == PIN_TYPE:
                continue  # an Agents API session's bookkeeping: no other API takes it
            flush()
            plan.append(Opaque(item.item))
    flush()
    return plan


def usage_from(data: Any, input_key: str, output_key: str) -> Usage:
    """One request's usage from a response's usage object (missing counts are 0)."""
    if not isinstance(data, dict):
        return Usage(requests=1)
    i, o = as_int(data.get(input_key)), as_int(data.get(output_key))
    return Usage(
        requests=1,
        input_tokens=i,
        output_tokens=o,
        total_tokens=as_int(data.get("total_tokens")) or i + o,
    )


def as_int(value: Any) -> int:
    """``value`` if it is an int (not a bool), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_str(value: Any) -> str | None:
    """``value`` if it is a string, else None."""
    return value if isinstance(value, str) else None


def as_dict(obj: Any) -> dict[str, Any]:
    """A response object (pydantic model from the client, or a dict) as a plain dict."""
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        data = dump(mode="json", warnings=False)
        if isinstance(data, dict):
            return data
    raise ModelBehaviorError(
        f"malformed response: expected a JSON object, got {type(obj).__name__}"
    )


def make_client(
    *,
    api_key: str | None,
    base_url: str | None,
    max_retries: int | None,
    timeout: float | None,
) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` from the arguments, else ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``."""
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise UserError(
            "no OpenAI API key: set OPENAI_API_KEY (or pass api_key=..., or a client "
            "whose base_url points at a server that needs none)"
        )
    options: dict[str, Any] = {"api_key": key}
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if url:
        options["base_url"] = url
    if max_retries is not None:
        options["max_retries"] = max_retries
    if timeout is not None:
        options["timeout"] = timeout
    return openai.AsyncOpenAI(**options)


def server_message(exc: openai.APIStatusError) -> str:
    """The server's own words for an HTTP error: its error message, else its body."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    text = exc.response.text if exc.response is not None else ""
    return text.strip()[:200] or exc.message


def _is_transport_error(exc: BaseException) -> bool:
    """An HTTP client's transport error (the connection broke), raised mid-body where
    the ``openai`` client does not wrap it. Matched by name: the client's HTTP library
    is ``httpx`` or a renamed build of it, and stepswitch does not import either."""
    return any(
        c.__name__ == "TransportError" and c.__module__.startswith("httpx")
        for c in type(exc).__mro__
    )


def map_error(
    exc: BaseException, *, model: str, base_url: str, api: str = "chat"
) -> StepswitchError:
    """The stepswitch error for a failure of the ``openai`` client, naming the cause."""
    where = f"model {model!r} at {base_url}"
    if isinstance(exc, StepswitchError):
        if type(exc) is ModelBehaviorError and not str(exc).startswith(f"model {model!r}"):
            # a malformed body the parser refused: named like every other failure
            return ModelBehaviorError(f"{where}: {exc}", run_data=exc.run_data)
        return exc
    if isinstance(exc, openai.AuthenticationError):
        return UserError(
            f"{base_url} rejected the API key (401: {server_message(exc)}); "
            "check OPENAI_API_KEY or the api_key you passed"
        )
    if isinstance(exc, openai.PermissionDeniedError):
        return UserError(
            f"no access to {where} (403: {server_message(exc)}); "
            "the key's organization or project is not allowed to use it"
        )
    if isinstance(exc, openai.NotFoundError):
        hint = (
            "; a server without the Responses API needs OpenAIChatCompletionsModel "
            "(stepswitch run --api chat)"
            if api == "responses"
            else ""
        )
        return UserError(
            f"{where} was not found (404: {server_message(exc)}); check the model name "
            f"and the base URL (OpenAI-compatible servers usually end in /v1){hint}"
        )
    if isinstance(
        exc, openai.BadRequestError | openai.UnprocessableEntityError | openai.ConflictError
    ):
        return UserError(
            f"{where} rejected the request ({exc.status_code}: {server_message(exc)})"
        )
    if isinstance(exc, openai.APIStatusError):
        return ModelProviderError(
            f"{where} failed with HTTP {exc.status_code} after the client's retries: "
            f"{server_message(exc)}",
            status=exc.status_code,
        )
    if isinstance(exc, openai.APITimeoutError):
        return ModelProviderError(f"{where} timed out after the client's retries")
    cause = exc.__cause__
    if (
        isinstance(exc, openai.APIConnectionError)
        and cause is not None
        and _is_transport_error(cause)
        and "Connect" not in type(cause).__name__
    ):
        exc = cause  # connected, then the answer broke off: said below
    if isinstance(exc, openai.APIConnectionError):
        return ModelProviderError(f"cannot reach {where}: {exc.__cause__ or exc}")
    if isinstance(exc, openai.APIResponseValidationError):
        return ModelBehaviorError(f"{where} sent a malformed response: {exc.message}")
    if _is_transport_error(exc):  # mid-body: the client's retries are over
        return ModelProviderError(
            f"the connection to {base_url} broke off mid-answer for {where}: "
            f"{exc or type(exc).__name__}; the answer is incomplete, retry the call"
        )
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return ModelBehaviorError(f"{where} sent a response that is not valid JSON: {exc}")
    if isinstance(exc, openai.APIError):
        return ModelProviderError(f"{where} failed: {exc.message}")
    if isinstance(exc, openai.OpenAIError):
        return UserError(f"the OpenAI client for {where} is misconfigured: {exc}")
    raise exc


_VERBATIM = ("input", "messages", "tools", "text", "response_format")
_PLACEHOLDER: dict[str, Any] = {"messages": []}


def verbatim_kwargs(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the large plain-JSON fields moved into ``extra_body``.

    The client walks typed parameters recursively against its TypedDicts before each
    call, a walk that grows with every turn of a run (``bench/bench_openai_http.py``,
    bench/README.md). Our bodies are
    already plain JSON with the wire names, so they travel verbatim; the server sees
    the same body. A required parameter keeps an empty placeholder that the
    ``extra_body`` value replaces. The caller's own ``extra_body`` is merged last.
    """
    out = dict(params)
    extra: dict[str, Any] = {}
    for key in _VERBATIM:
        if key in out:
            extra[key] = out.pop(key)
            if key in _PLACEHOLDER:
                out[key] = _PLACEHOLDER[key]
    extra.update(out.pop("extra_body", None) or {})
    if extra:
        out["extra_body"] = extra
    return out


def tool_choice_name(choice: str | None) -> tuple[str | None, str | None]:
    """``(mode, tool_name)``: a mode of ``auto``/``required``/``none``, or a tool name."""
    if choice is None:
        return None, None
    if choice in ("auto", "required", "none"):
        return choice, None
    return None, choice
