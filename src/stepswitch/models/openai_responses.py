"""``OpenAIResponsesModel``: a model on OpenAI's Responses API (``POST /responses``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from stepswitch.errors import ModelBehaviorError, ModelProviderError
from stepswitch.models._base import OpenAIModelBase
from stepswitch.models._convert import (
    Answered,
    Opaque,
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
from stepswitch.models._shape import arguments_text, unicode_text
from stepswitch.runtime.model import (
    HOSTED_CALLS,
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputResponsesItem,
    ResponseCompleted,
    ToolDefinition,
)

__all__ = ["OpenAIResponsesModel", "responses_input", "responses_params", "responses_tools"]


class OpenAIResponsesModel(OpenAIModelBase):
    """A model served through the Responses API by the official ``openai`` client.

    ``model`` is the model name (an agent's own ``model`` name, when the request
    carries one, takes precedence). ``client`` is an ``openai.AsyncOpenAI``; without
    one, a client is made on first use from ``api_key``/``base_url`` or the
    ``OPENAI_API_KEY``/``OPENAI_BASE_URL`` environment. ``max_retries`` and
    ``timeout`` set the client's own retry (429, 5xx, timeouts; with backoff and
    ``retry-after``) and timeout settings; ``None`` keeps the client's.
    """

    api = "responses"

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        client = self._client_here()
        name = self._name(request)
        try:
            raw = await client.responses.create(**verbatim_kwargs(responses_params(request, name)))
            return parse_response(as_dict(raw), raw)
        except Exception as exc:
            raise map_error(
                exc, model=name, base_url=str(client.base_url), api="responses"
            ) from exc

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        """The Responses API's stream events as the client parses them, then
        ``ResponseCompleted`` with the same ``ModelResponse`` ``get_response`` gives."""
        client = self._client_here()
        name = self._name(request)
        try:
            stream = await client.responses.create(
                **verbatim_kwargs(responses_params(request, name)), stream=True
            )
            final: Any = None
            seen = 0
            try:
                async for event in stream:
                    seen += 1
                    yield event
                    kind = getattr(event, "type", None)
                    if kind in ("response.completed", "response.incomplete", "response.failed"):
                        final = event.response
                    elif kind == "error":
                        raise ModelProviderError(
                            f"model {name!r} at {client.base_url} failed mid-stream: "
                            f"{getattr(event, 'message', None) or 'no reason given'}"
                        )
            finally:  # on every path: a failed or abandoned stream leaves no open socket
                await stream.close()
            if final is None and seen:
                # events came, then the stream ended in good order but unfinished
                raise ModelProviderError(
                    f"model {name!r} at {client.base_url}: the stream ended before "
                    "response.completed: the connection was cut; retry the call"
                )
            if final is None:
                raise ModelBehaviorError(
                    f"model {name!r} at {client.base_url} sent a stream with no events "
                    "(the body is no server-sent event stream)"
                )
            yield ResponseCompleted(parse_response(as_dict(final), final))
        except Exception as exc:
            raise map_error(
                exc, model=name, base_url=str(client.base_url), api="responses"
            ) from exc


def responses_input(request: ModelRequest) -> list[dict[str, Any]]:
    """The request's items as Responses API input items: reasoning items and other
    verbatim items in their place, a message with content parts as those parts."""
    out: list[dict[str, Any]] = []
    for entry in plan_history(request.input):
        if isinstance(entry, Said):
            if entry.parts is None:
                out.append({"role": entry.role, "content": entry.text})
            else:  # images and files as given
                out.append({"role": entry.role, "content": list(entry.parts)})
        elif isinstance(entry, Opaque):
            out.append(entry.item)
        elif isinstance(entry, Answered):
            text = entry.text if entry.text else entry.refusal
            if text:
                out.append({"role": "assistant", "content": text})
            for c in entry.calls:
                call: dict[str, Any] = {
                    "type": "function_call",
                    "call_id": c.call_id,
                    "name": c.name,
                    "arguments": c.arguments,
                }
                namespace, dot, name = c.name.partition(".")
                if dot:  # a namespaced (or loaded deferred) tool: sent as the API named it
                    call["name"], call["namespace"] = name, namespace
                out.append(call)
        elif isinstance(entry, ToolOutputEntry):
            out.append(
                {"type": "function_call_output", "call_id": entry.call_id, "output": entry.output}
            )
    return out


def responses_tools(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """The ``tools`` parameter: function tools, hosted tools as declared, and the tools of
    one ``tool_namespace`` as one namespace entry where its first tool stands (the shape
    the Agents SDK sends)."""
    out: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for t in tools:
        if t.kind == "hosted":
            out.append(dict(t.config or {}))
            continue
        entry: dict[str, Any] = {
            "type": "function",
            "name": t.wire_name,
            "description": t.description,
            "parameters": t.parameters,
            "strict": t.strict,
        }
        if t.defer_loading:
            entry["defer_loading"] = True
        if t.namespace is None:
            out.append(entry)
            continue
        group = groups.get(t.namespace)
        if group is None:
            group = groups[t.namespace] = {"type": "namespace", "name": t.namespace,
                                           "description": t.namespace_description or "",
                                           "tools": []}
            out.append(group)
        group["tools"].append(entry)
    return out


def responses_params(request: ModelRequest, model: str) -> dict[str, Any]:
    """The keyword arguments of ``client.responses.create`` for a request."""
    s = request.settings
    params: dict[str, Any] = {"model": model, "input": responses_input(request)}
    if request.instructions:
        params["instructions"] = request.instructions
    if request.tools:
        params["tools"] = responses_tools(request.tools)
        if s.parallel_tool_calls is not None:
            params["parallel_tool_calls"] = s.parallel_tool_calls
        include = sorted({t.include for t in request.tools if t.include is not None})
        if include:
            params["include"] = include
    mode, tool = tool_choice_name(s.tool_choice)
    if mode is not None:
        params["tool_choice"] = mode
    elif tool is not None:
        params["tool_choice"] = {"type": "function", "name": tool}
    if request.output_schema is not None:
        o = request.output_schema
        params["text"] = {
            "format": {
                "type": "json_schema",
                "name": o.name,
                "schema": o.schema,
                "strict": o.strict,
            }
        }
    if s.temperature is not None:
        params["temperature"] = s.temperature
    if s.top_p is not None:
        params["top_p"] = s.top_p
    if s.max_tokens is not None:
        params["max_output_tokens"] = s.max_tokens
    if s.reasoning_effort is not None:
        params["reasoning"] = {"effort": s.reasoning_effort}
    if s.extra_body:
        params["extra_body"] = dict(s.extra_body)
    return params


def parse_response(data: dict[str, Any], raw: Any = None) -> ModelResponse:
    """A Responses API ``Response`` (as a dict) as a ``ModelResponse``; anything that is
    not the documented shape is a ``ModelBehaviorError``."""
    status = data.get("status")
    if status == "failed":
        error = data.get("error") or {}
        detail = error.get("message") if isinstance(error, dict) else error
        raise ModelProviderError(f"the model's response failed: {detail or 'no reason given'}")
    output = data.get("output")
    if not isinstance(output, list):
        raise ModelBehaviorError("malformed response: it has no output list")
    items: list[OutputItem] = []
    for n, item in enumerate(output):
        if not isinstance(item, dict):
            raise ModelBehaviorError(f"malformed response: output[{n}] is not an object")
        kind = item.get("type")
        if kind == "message":
            items.append(_message(item, n))
        elif kind == "function_call":
            name, call_id, args = item.get("name"), item.get("call_id"), item.get("arguments")
            if not isinstance(name, str) or not isinstance(call_id, str) or not call_id:
                raise ModelBehaviorError(
                    f"malformed response: output[{n}] is a function_call without name or call_id"
                )
            unicode_text(name, f"output[{n}].name")
            unicode_text(call_id, f"output[{n}].call_id")
            text = arguments_text(args, f"output[{n}].arguments")
            namespace = item.get("namespace")
            if isinstance(namespace, str) and namespace:  # a namespaced or deferred tool
                name = f"{unicode_text(namespace, f'output[{n}].namespace')}.{name}"
            items.append(OutputFunctionCall(name, text, call_id))
        elif kind == "reasoning" or kind in HOSTED_CALLS:
            # sent back verbatim next turn: reasoning (encrypted_content, id), and what a
            # hosted tool did on the provider's side (a search, its loaded tools)
            items.append(OutputResponsesItem(_as_sent(raw, n, item)))
        elif kind == "mcp_approval_request":
            raise ModelBehaviorError(
                f"the hosted MCP server {item.get('server_label')!r} asks for approval to "
                f"call {item.get('name')!r} (mcp_approval_request), which stepswitch does not "
                "answer: give the HostedMCPTool require_approval='never' and allowed_tools, "
                "or run the server with ss.MCPServerStreamableHttp (see SW613)"
            )
        # other items carry nothing the loop acts on
    return ModelResponse(
        tuple(items),
        usage_from(data.get("usage"), "input_tokens", "output_tokens"),
        as_str(data.get("id")),
        raw,
    )


def _as_sent(raw: Any, n: int, item: dict[str, Any]) -> dict[str, Any]:
    """Output item ``n`` with the fields the server sent, no more: the client's parsed
    model fills absent fields with None, which the API need not be sent back."""
    try:
        dump = raw.output[n].model_dump
    except (AttributeError, IndexError, TypeError):
        return item
    data = dump(exclude_unset=True, mode="json", warnings=False)
    return data if isinstance(data, dict) else item


def _message(item: dict[str, Any], n: int) -> OutputMessage:
    content = item.get("content")
    if not isinstance(content, list):
        raise ModelBehaviorError(f"malformed response: output[{n}] message has no content list")
    texts: list[str] = []
    refusals: list[str] = []
    for i, part in enumerate(content):
        if not isinstance(part, dict):
            continue
        if part.get("type") == "output_text" and isinstance(part.get("text"), str):
            texts.append(unicode_text(part["text"], f"output[{n}].content[{i}].text"))
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            refusals.append(unicode_text(part["refusal"], f"output[{n}].content[{i}].refusal"))
    return OutputMessage("".join(texts), "".join(refusals) if refusals else None)
