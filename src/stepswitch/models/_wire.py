"""The OpenAI wire format of a scripted reply: JSON bodies and SSE event streams for
the Responses API and the Chat Completions API. Pure functions, no I/O.

Not public API: :class:`~stepswitch.models.openai_server.OpenAIServer` uses it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from stepswitch.models.script import Reply
from stepswitch.runtime.model import (
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputResponsesItem,
)

__all__ = ["chat_body", "chat_chunks", "responses_body", "responses_events", "sse"]

_CREATED = 1_764_460_800  # a fixed timestamp: served bodies are deterministic


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _pieces(text: str, size: int) -> list[str]:
    """``text`` cut in pieces of ``size`` characters (at least one piece)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


# ---- Responses API -------------------------------------------------------------------


def _responses_item(item: OutputItem, n: int, status: str) -> dict[str, Any]:
    if isinstance(item, OutputResponsesItem):  # a reasoning item: served as scripted
        return dict(item.item)
    if isinstance(item, OutputFunctionCall):
        out = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": item.call_id,
            "name": item.name,
            "arguments": item.arguments if status == "completed" else "",
            "status": status,
        }
        namespace, dot, name = item.name.partition(".")
        if dot:  # "crm.lookup": a namespaced tool, as the API sends its calls
            out["name"], out["namespace"] = name, namespace
        return out
    content: list[dict[str, Any]] = []
    if status == "completed":
        if item.refusal is not None:
            content.append({"type": "refusal", "refusal": item.refusal})
        else:
            content.append(
                {"type": "output_text", "text": item.content, "annotations": [], "logprobs": []}
            )
    return {
        "type": "message",
        "id": f"msg_{n}",
        "role": "assistant",
        "status": status,
        "content": content,
    }


def _usage_responses(reply: Reply) -> dict[str, Any]:
    return {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def responses_body(
    reply: Reply, *, response_id: str, model: str, request: dict[str, Any]
) -> dict[str, Any]:
    """A complete ``Response`` object for a scripted reply."""
    return _response_object(
        response_id=response_id,
        model=model,
        request=request,
        status="completed",
        output=[_responses_item(item, i, "completed") for i, item in enumerate(reply.output)],
        usage=_usage_responses(reply),
    )


def _response_object(
    *,
    response_id: str,
    model: str,
    request: dict[str, Any],
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": _CREATED,
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "metadata": {},
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "temperature": request.get("temperature"),
        "top_p": request.get("top_p"),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "text": request.get("text", {"format": {"type": "text"}}),
    }


def responses_events(
    reply: Reply, *, response_id: str, model: str, request: dict[str, Any], chunk: int
) -> Iterator[bytes]:
    """The SSE stream the Responses API sends for a reply: created, in_progress, per item
    added / deltas / done, then completed (each with a ``sequence_number``)."""
    seq = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal seq
        data = {"type": kind, "sequence_number": seq, **fields}
        seq += 1
        return sse(data, event=kind)

    shell = _response_object(
        response_id=response_id,
        model=model,
        request=request,
        status="in_progress",
        output=[],
        usage=None,
    )
    yield event("response.created", response=shell)
    yield event("response.in_progress", response=shell)
    for n, item in enumerate(reply.output):
        yield event(
            "response.output_item.added",
            output_index=n,
            item=_responses_item(item, n, "in_progress"),
        )
        done = _responses_item(item, n, "completed")
        if isinstance(item, OutputFunctionCall):
            for piece in _pieces(item.arguments, chunk):
                yield event(
                    "response.function_call_arguments.delta",
                    item_id=done["id"],
                    output_index=n,
                    delta=piece,
                )
            yield event(
                "response.function_call_arguments.done",
                item_id=done["id"],
                output_index=n,
                arguments=item.arguments,
                name=done["name"],
            )
        elif isinstance(item, OutputMessage):
            part_done = done["content"][0]
            empty = (
                {"type": "refusal", "refusal": ""}
                if item.refusal is not None
                else {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            )
            where = {"item_id": done["id"], "output_index": n, "content_index": 0}
            yield event("response.content_part.added", part=empty, **where)
            if item.refusal is not None:
                for piece in _pieces(item.refusal, chunk):
                    yield event("response.refusal.delta", delta=piece, **where)
                yield event("response.refusal.done", refusal=item.refusal, **where)
            else:
                for piece in _pieces(item.content, chunk):
                    yield event("response.output_text.delta", delta=piece, logprobs=[], **where)
                yield event("response.output_text.done", text=item.content, logprobs=[], **where)
            yield event("response.content_part.done", part=part_done, **where)
        yield event("response.output_item.done", output_index=n, item=done)
    final = responses_body(reply, response_id=response_id, model=model, request=request)
    yield event("response.completed", response=final)


# ---- Chat Completions API ------------------------------------------------------------


def _chat_message(reply: Reply) -> tuple[str | None, str | None, list[dict[str, Any]]]:
    texts = [i.content for i in reply.output if isinstance(i, OutputMessage) and i.refusal is None]
    refusals = [i.refusal for i in reply.output if isinstance(i, OutputMessage) and i.refusal]
    calls = [
        {
            "id": i.call_id,
            "type": "function",
            "function": {"name": i.name, "arguments": i.arguments},
        }
        for i in reply.output
        if isinstance(i, OutputFunctionCall)
    ]
    content = "".join(texts) if texts else None
    refused = "".join(refusals) if refusals else None
    return content, refused, calls


def _usage_chat(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def chat_body(reply: Reply, *, completion_id: str, model: str) -> dict[str, Any]:
    """A complete ``chat.completion`` object: one choice holding the whole reply."""
    content, refused, calls = _chat_message(reply)
    msg: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refused}
    if calls:
        msg["tool_calls"] = calls
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": _CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": msg,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": _usage_chat(reply),
    }


def chat_chunks(
    reply: Reply, *, completion_id: str, model: str, include_usage: bool, chunk: int
) -> Iterator[bytes]:
    """The SSE stream of ``chat.completion.chunk`` objects, ending in ``[DONE]``."""
    content, refused, calls = _chat_message(reply)

    def chunk_of(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": _CREATED,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
                ],
            }
        )

    yield chunk_of({"role": "assistant", "content": ""})
    if content:
        for piece in _pieces(content, chunk):
            yield chunk_of({"content": piece})
    if refused:
        for piece in _pieces(refused, chunk):
            yield chunk_of({"refusal": piece})
    for index, tool_call in enumerate(calls):
        fn = tool_call["function"]
        yield chunk_of(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": tool_call["id"],
                        "type": "function",
                        "function": {"name": fn["name"], "arguments": ""},
                    }
                ]
            }
        )
        for piece in _pieces(fn["arguments"], chunk):
            yield chunk_of({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk_of({}, "tool_calls" if calls else "stop")
    if include_usage:
        yield sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": _CREATED,
                "model": model,
                "choices": [],
                "usage": _usage_chat(reply),
            }
        )
    yield b"data: [DONE]\n\n"
