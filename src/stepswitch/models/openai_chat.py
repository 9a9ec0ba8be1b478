"""``OpenAIChatCompletionsModel``: a model on the Chat Completions API
(``POST /chat/completions``), the API most OpenAI-compatible servers speak
(vLLM, Ollama, LM Studio, Azure)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import field
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.errors import ModelBehaviorError, ModelProviderError, UserError
from stepswitch.models._base import OpenAIModelBase
from stepswitch.models._convert import (
    Answered,
    Said,
    ToolOutputEntry,
    as_dict,
    as_str,
    map_error,
    plan_history,
    tool_choice_name,
    usage_from,
    verbatim_kwargs,
)
from stepswitch.models._shape import arguments_text, malformed, optional, required
from stepswitch.runtime.model import (
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    ResponseCompleted,
    ToolDefinition,
)

__all__ = ["OpenAIChatCompletionsModel", "chat_messages", "chat_params"]


class OpenAIChatCompletionsModel(OpenAIModelBase):
    """A model served through the Chat Completions API by the official ``openai`` client.

    The constructor is the same as :class:`OpenAIResponsesModel`'s: ``model``, an
    optional ``AsyncOpenAI`` ``client``, and ``api_key``/``base_url``/``max_retries``/
    ``timeout`` for the client made when none is given.
    """

    api = "chat"

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        client = self._client_here()
        name = self._name(request)
        try:
            raw = await client.chat.completions.create(
                **verbatim_kwargs(chat_params(request, name))
            )
            return parse_completion(as_dict(raw), raw)
        except Exception as exc:
            raise map_error(exc, model=name, base_url=str(client.base_url)) from exc

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        """The ``chat.completion.chunk`` objects as the client parses them, then
        ``ResponseCompleted`` with the same ``ModelResponse`` ``get_response`` gives."""
        client = self._client_here()
        name = self._name(request)
        try:
            stream = await client.chat.completions.create(
                **verbatim_kwargs(chat_params(request, name)),
                stream=True,
                stream_options={"include_usage": True},
            )
            try:
                acc = _Accumulator()
                async for chunk in stream:
                    yield chunk
                    acc.add(as_dict(chunk))
            finally:  # on every path: a failed or abandoned stream leaves no open socket
                await stream.close()
            yield ResponseCompleted(acc.finish())
        except Exception as exc:
            raise map_error(exc, model=name, base_url=str(client.base_url)) from exc


def chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The instructions and items as Chat Completions messages.

    A message's image and file parts become the Chat Completions ``image_url`` and
    ``file`` parts; a part that API cannot carry is a ``UserError``. Reasoning items
    (``ResponsesItem``) are left out: Chat Completions has no reasoning items to send
    back."""
    out: list[dict[str, Any]] = []
    if request.instructions:
        out.append({"role": "system", "content": request.instructions})
    for entry in plan_history(request.input):
        if isinstance(entry, Said):
            content: Any = entry.text if entry.parts is None else _chat_parts(entry.parts)
            out.append({"role": entry.role, "content": content})
        elif isinstance(entry, Answered):
            msg: dict[str, Any] = {"role": "assistant", "content": entry.text}
            if entry.refusal is not None:
                msg["refusal"] = entry.refusal
            if entry.calls:
                msg["tool_calls"] = [
                    {
                        "id": c.call_id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in entry.calls
                ]
            out.append(msg)
        elif isinstance(entry, ToolOutputEntry):
            out.append({"role": "tool", "tool_call_id": entry.call_id, "content": entry.output})
    return out


def _chat_parts(parts: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """Responses content parts as Chat Completions content parts."""
    out: list[dict[str, Any]] = []
    for k, part in enumerate(parts):
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            out.append({"type": "text", "text": part["text"]})
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            image: dict[str, Any] = {"url": part["image_url"]}
            if isinstance(part.get("detail"), str):
                image["detail"] = part["detail"]
            out.append({"type": "image_url", "image_url": image})
        elif kind == "input_file" and (
            isinstance(part.get("file_id"), str) or isinstance(part.get("file_data"), str)
        ):
            file = {n: part[n] for n in ("file_id", "file_data", "filename")
                    if isinstance(part.get(n), str)}
            out.append({"type": "file", "file": file})
        else:
            what = "an input_image with only a file_id" if kind == "input_image" else repr(kind)
            raise UserError(
                f"a message's content part {k} ({what}) has no Chat Completions form; "
                "use OpenAIResponsesModel (--api responses) or give the image as an "
                "image_url"
            )
    return out


def _refuse_responses_only(agent: str, tool: ToolDefinition) -> None:
    """Hosted tools, namespaces and deferred loading exist on the Responses API only (the
    Agents SDK refuses them on Chat Completions too)."""
    if tool.kind == "hosted":
        what = f"the hosted tool {tool.name!r}"
    elif tool.namespace is not None:
        what = f"tool {tool.name!r}, in tool_namespace {tool.namespace!r},"
    elif tool.defer_loading:
        what = f"the deferred tool {tool.wire_name!r} (defer_loading=True)"
    else:
        return
    raise UserError(f"agent {agent!r}: {what} needs the Responses API, and this model uses "
                    "Chat Completions: run it with OpenAIResponsesModel (stepswitch run --api "
                    "responses)")


def chat_params(request: ModelRequest, model: str) -> dict[str, Any]:
    """The keyword arguments of ``client.chat.completions.create`` for a request."""
    s = request.settings
    params: dict[str, Any] = {"model": model, "messages": chat_messages(request)}
    if request.tools:
        for t in request.tools:
            _refuse_responses_only(request.agent, t)
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": t.strict,
                },
            }
            for t in request.tools
        ]
        if s.parallel_tool_calls is not None:
            params["parallel_tool_calls"] = s.parallel_tool_calls
    mode, tool = tool_choice_name(s.tool_choice)
    if mode is not None:
        params["tool_choice"] = mode
    elif tool is not None:
        params["tool_choice"] = {"type": "function", "function": {"name": tool}}
    if request.output_schema is not None:
        o = request.output_schema
        params["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": o.name, "schema": o.schema, "strict": o.strict},
        }
    simple = {
        "temperature": s.temperature,
        "top_p": s.top_p,
        "max_tokens": s.max_tokens,
        "reasoning_effort": s.reasoning_effort,
        "frequency_penalty": s.frequency_penalty,
        "presence_penalty": s.presence_penalty,
        "seed": s.seed,
    }
    params.update({k: v for k, v in simple.items() if v is not None})
    if s.extra_body:
        params["extra_body"] = dict(s.extra_body)
    return params


def parse_completion(data: dict[str, Any], raw: Any = None) -> ModelResponse:
    """A ``chat.completion`` (as a dict) as a ``ModelResponse``: the first choice's text
    or refusal, then its tool calls. Anything else is a ``ModelBehaviorError`` that
    names the field."""
    choices = required(data, "choices", list, "choices")
    if not choices:
        raise malformed("choices", "is empty")
    if not isinstance(choices[0], dict):
        raise malformed("choices[0]", "must be an object")
    msg = required(choices[0], "message", dict, "choices[0].message")
    where = "choices[0].message"
    items: list[OutputItem] = []
    content = optional(msg, "content", str, f"{where}.content")
    refused = optional(msg, "refusal", str, f"{where}.refusal")
    if refused:
        items.append(OutputMessage(content or "", refused))
    elif content:
        items.append(OutputMessage(content))
    calls = optional(msg, "tool_calls", list, f"{where}.tool_calls") or []
    for n, tc in enumerate(calls):
        here = f"{where}.tool_calls[{n}]"
        if not isinstance(tc, dict):
            raise malformed(here, "must be an object")
        call_id = required(tc, "id", str, f"{here}.id")
        fn = required(tc, "function", dict, f"{here}.function")
        name = required(fn, "name", str, f"{here}.function.name")
        if not call_id or not name:
            raise malformed(here, "has an empty id or function name")
        args = arguments_text(fn.get("arguments"), f"{here}.function.arguments")
        items.append(OutputFunctionCall(name, args, call_id))
    return ModelResponse(
        tuple(items),
        usage_from(data.get("usage"), "prompt_tokens", "completion_tokens"),
        as_str(data.get("id")),
        raw,
    )


@dataclass(slots=True)
class _ToolCallParts:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Accumulator:
    """Folds ``chat.completion.chunk`` deltas into the message a non-streamed call gives."""

    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    calls: dict[int, _ToolCallParts] = field(default_factory=dict)
    usage: Any = None
    response_id: str | None = None
    chunks: int = 0
    finished: bool = False
    """A choice said why it ended (``finish_reason``): the answer is whole."""

    def add(self, chunk: dict[str, Any]) -> None:
        self.chunks += 1
        self.response_id = self.response_id or as_str(chunk.get("id"))
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = optional(chunk, "choices", list, "choices") or []
        for c, choice in enumerate(choices):
            if not isinstance(choice, dict):
                raise malformed(f"choices[{c}]", "must be an object")
            if choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason") is not None:
                self.finished = True
            self._delta(optional(choice, "delta", dict, f"choices[{c}].delta") or {}, c)

    def _delta(self, delta: dict[str, Any], c: int) -> None:
        where = f"choices[{c}].delta"
        content = optional(delta, "content", str, f"{where}.content")
        if content:
            self.text.append(content)
        refused = optional(delta, "refusal", str, f"{where}.refusal")
        if refused:
            self.refusal.append(refused)
        for n, tc in enumerate(optional(delta, "tool_calls", list, f"{where}.tool_calls") or []):
            here = f"{where}.tool_calls[{n}]"
            if not isinstance(tc, dict):
                raise malformed(here, "must be an object")
            index = optional(tc, "index", int, f"{here}.index") or 0
            parts = self.calls.setdefault(index, _ToolCallParts())
            call_id = optional(tc, "id", str, f"{here}.id")
            if call_id:
                parts.call_id = call_id
            fn = optional(tc, "function", dict, f"{here}.function") or {}
            name = optional(fn, "name", str, f"{here}.function.name")
            if name:
                parts.name = name
            args = fn.get("arguments")
            if isinstance(args, dict):  # a whole object at once (some compatible servers)
                parts.arguments = [arguments_text(args, f"{here}.function.arguments")]
            elif args is not None:
                parts.arguments.append(arguments_text(args, f"{here}.function.arguments"))

    def finish(self) -> ModelResponse:
        if not self.chunks:
            raise ModelBehaviorError("malformed response: the stream held no chunks")
        if not self.finished:
            # the connection closed in good order, but the model was not done: what
            # came is a fragment (a proxy's timeout, a crashed worker), not an answer
            raise ModelProviderError(
                "the stream ended before the model finished (no finish_reason): the "
                "connection was cut; the answer is incomplete, retry the call"
            )
        message: dict[str, Any] = {
            "content": "".join(self.text) or None,
            "refusal": "".join(self.refusal) or None,
            "tool_calls": [
                {
                    "id": p.call_id,
                    "type": "function",
                    "function": {"name": p.name, "arguments": "".join(p.arguments)},
                }
                for _, p in sorted(self.calls.items())
            ],
        }
        data = {"id": self.response_id, "choices": [{"message": message}], "usage": self.usage}
        return parse_completion(data)
