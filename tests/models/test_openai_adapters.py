"""Both OpenAI adapters over real HTTP: the real ``openai`` client against
``OpenAIServer``, asserting on what the server received and on what came back."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from stepswitch.context import Usage
from stepswitch.errors import ModelBehaviorError, ModelProviderError, UserError
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.script import call, error_reply, message, raw_reply, refusal, slow
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import (
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputMessage,
    OutputSchema,
    ResponseCompleted,
    ToolDefinition,
)
from stepswitch.settings import ModelSettings

ORDER_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "integer"}},
    "required": ["order_id"],
    "additionalProperties": False,
}
LOOKUP = ToolDefinition("lookup_order", "Look up an order by id.", ORDER_SCHEMA)
TRANSFER = ToolDefinition(
    "transfer_to_refund",
    "Handoff to the refund agent.",
    {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    kind="handoff",
)

APIS = ["responses", "chat"]
Adapter = OpenAIResponsesModel | OpenAIChatCompletionsModel


def adapter(api: str, server: OpenAIServer, **options: Any) -> Adapter:
    cls = OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel
    return cls("gpt-test", server.client(max_retries=options.pop("max_retries", 2)), **options)


def request(*items: Any, **fields: Any) -> ModelRequest:
    base: dict[str, Any] = {
        "agent": "triage",
        "instructions": "You triage.",
        "input": (UserInputItem("refund order 42"), *items),
        "tools": (LOOKUP, TRANSFER),
        "output_schema": None,
    }
    base.update(fields)
    return ModelRequest(**base)


def get(model: Adapter, req: ModelRequest) -> ModelResponse:
    return asyncio.run(model.get_response(req))


def stream(model: Adapter, req: ModelRequest) -> list[Any]:
    async def collect() -> list[Any]:
        return [event async for event in model.stream_response(req)]

    return asyncio.run(collect())


def history(body: dict[str, Any], api: str) -> list[dict[str, Any]]:
    return list(body["input"] if api == "responses" else body["messages"])


@pytest.mark.parametrize("api", APIS)
def test_text_answer_and_usage(api: str, openai_server: OpenAIServer) -> None:
    from stepswitch.models.script import Reply

    openai_server.add(Reply((message("Order 42 shipped."),), input_tokens=11, output_tokens=4))
    response = get(adapter(api, openai_server), request())
    assert response.output == (OutputMessage("Order 42 shipped."),)
    assert response.usage == Usage(requests=1, input_tokens=11, output_tokens=4, total_tokens=15)
    [sent] = openai_server.model_requests(api)
    assert sent.body["model"] == "gpt-test"
    assert sent.headers["authorization"] == "Bearer test"
    if api == "responses":
        assert sent.path == "/v1/responses"
        assert sent.body["instructions"] == "You triage."
        assert sent.body["input"] == [{"role": "user", "content": "refund order 42"}]
    else:
        assert sent.path == "/v1/chat/completions"
        assert sent.body["messages"] == [
            {"role": "system", "content": "You triage."},
            {"role": "user", "content": "refund order 42"},
        ]
    openai_server.assert_complete()


@pytest.mark.parametrize("api", APIS)
def test_tools_offered_with_strict_schemas_and_calls_parsed(
    api: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(
        [message("Checking."), call("lookup_order", {"order_id": 42}, "call_a"), call("zz", "{bad")]
    )
    response = get(adapter(api, openai_server), request())
    assert response.output == (
        OutputMessage("Checking."),
        OutputFunctionCall("lookup_order", '{"order_id": 42}', "call_a"),
        OutputFunctionCall("zz", "{bad", "call_0_2"),
    )
    body = openai_server.requests[0].body
    if api == "responses":
        assert body["tools"] == [
            {
                "type": "function",
                "name": "lookup_order",
                "description": "Look up an order by id.",
                "parameters": ORDER_SCHEMA,
                "strict": True,
            },
            {
                "type": "function",
                "name": "transfer_to_refund",
                "description": "Handoff to the refund agent.",
                "parameters": TRANSFER.parameters,
                "strict": True,
            },
        ]
    else:
        assert [t["function"]["name"] for t in body["tools"]] == [
            "lookup_order",
            "transfer_to_refund",
        ]
        assert body["tools"][0] == {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "description": "Look up an order by id.",
                "parameters": ORDER_SCHEMA,
                "strict": True,
            },
        }


SUPPORT_HISTORY = (
    ToolCallItem("triage", "lookup_order", "call_1", '{"order_id": 42}'),
    ToolCallOutputItem("triage", "call_1", "order 42: shipped", name="lookup_order"),
    HandoffCallItem("triage", "transfer_to_refund", "call_2", "{}"),
    HandoffOutputItem("triage", "call_2", '{"assistant": "refund"}', "triage", "refund"),
    MessageOutputItem("refund", "Shall I refund it?"),
    UserInputItem("yes please"),
)


@pytest.mark.parametrize("api", APIS)
def test_history_pairs_calls_and_outputs_by_call_id(api: str, openai_server: OpenAIServer) -> None:
    openai_server.add([message("ok")])
    get(adapter(api, openai_server), request(*SUPPORT_HISTORY))
    sent = history(openai_server.requests[0].body, api)
    if api == "responses":
        assert sent == [
            {"role": "user", "content": "refund order 42"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "lookup_order",
                "arguments": '{"order_id": 42}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "order 42: shipped"},
            {
                "type": "function_call",
                "call_id": "call_2",
                "name": "transfer_to_refund",
                "arguments": "{}",
            },
            {
                "type": "function_call_output",
                "call_id": "call_2",
                "output": '{"assistant": "refund"}',
            },
            {"role": "assistant", "content": "Shall I refund it?"},
            {"role": "user", "content": "yes please"},
        ]
    else:
        assert sent[1:] == [
            {"role": "user", "content": "refund order 42"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup_order", "arguments": '{"order_id": 42}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "order 42: shipped"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "transfer_to_refund", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_2", "content": '{"assistant": "refund"}'},
            {"role": "assistant", "content": "Shall I refund it?"},
            {"role": "user", "content": "yes please"},
        ]


@pytest.mark.parametrize("api", APIS)
def test_parallel_calls_resumed_after_approval_stay_paired(
    api: str, openai_server: OpenAIServer
) -> None:
    # One response made two calls; one ran, one waited for approval, and its output
    # came only after the resume, behind the approval item.
    items = (
        MessageOutputItem("refund", "Let me do both."),
        ToolCallItem("refund", "lookup_order", "c1", '{"order_id": 1}'),
        ToolCallItem("refund", "process_refund", "c2", '{"order_id": 1}'),
        ToolCallOutputItem("refund", "c1", "order 1 ok"),
        ToolApprovalItem("refund", "process_refund", "c2", '{"order_id": 1}'),
        ToolCallOutputItem("refund", "c2", "refunded"),
        ToolCallItem("refund", "lookup_order", "c3", "{}"),  # pending: never sent
        ToolCallOutputItem("refund", "orphan", "no call made this"),  # never sent
    )
    openai_server.add([message("ok")])
    get(adapter(api, openai_server), request(*items))
    sent = history(openai_server.requests[0].body, api)
    if api == "responses":
        assert sent[1:] == [
            {"role": "assistant", "content": "Let me do both."},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "lookup_order",
                "arguments": '{"order_id": 1}',
            },
            {
                "type": "function_call",
                "call_id": "c2",
                "name": "process_refund",
                "arguments": '{"order_id": 1}',
            },
            {"type": "function_call_output", "call_id": "c1", "output": "order 1 ok"},
            {"type": "function_call_output", "call_id": "c2", "output": "refunded"},
        ]
    else:
        assert sent[2]["content"] == "Let me do both."
        assert [c["id"] for c in sent[2]["tool_calls"]] == ["c1", "c2"]
        assert sent[3:] == [
            {"role": "tool", "tool_call_id": "c1", "content": "order 1 ok"},
            {"role": "tool", "tool_call_id": "c2", "content": "refunded"},
        ]


@pytest.mark.parametrize("api", APIS)
def test_structured_output_uses_the_json_schema_format(
    api: str, openai_server: OpenAIServer
) -> None:
    schema = {
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
        "additionalProperties": False,
    }
    openai_server.add([message('{"summary": "fine"}')])
    response = get(
        adapter(api, openai_server),
        request(tools=(), output_schema=OutputSchema("Findings", schema)),
    )
    assert json.loads(response.output[0].content) == {"summary": "fine"}  # type: ignore[union-attr]
    body = openai_server.requests[0].body
    assert "tools" not in body
    if api == "responses":
        assert body["text"] == {
            "format": {"type": "json_schema", "name": "Findings", "schema": schema, "strict": True}
        }
    else:
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "Findings", "schema": schema, "strict": True},
        }


@pytest.mark.parametrize("api", APIS)
def test_model_settings_are_sent(api: str, openai_server: OpenAIServer) -> None:
    settings = ModelSettings(
        temperature=0.2,
        top_p=0.9,
        max_tokens=300,
        tool_choice="lookup_order",
        parallel_tool_calls=False,
        reasoning_effort="low",
    )
    openai_server.add([message("a")], [message("b")])
    model = adapter(api, openai_server)
    get(model, request(settings=settings))
    get(model, request(settings=ModelSettings(tool_choice="required"), model="gpt-agent-own"))
    first, second = (r.body for r in openai_server.requests)
    assert first["temperature"] == 0.2
    assert first["top_p"] == 0.9
    assert first["parallel_tool_calls"] is False
    assert second["tool_choice"] == "required"
    assert second["model"] == "gpt-agent-own"  # an agent's own model name wins
    if api == "responses":
        assert first["max_output_tokens"] == 300
        assert first["reasoning"] == {"effort": "low"}
        assert first["tool_choice"] == {"type": "function", "name": "lookup_order"}
    else:
        assert first["max_tokens"] == 300
        assert first["reasoning_effort"] == "low"
        assert first["tool_choice"] == {"type": "function", "function": {"name": "lookup_order"}}
    assert "temperature" not in second


@pytest.mark.parametrize("api", APIS)
def test_refusal_is_surfaced(api: str, openai_server: OpenAIServer) -> None:
    openai_server.add([refusal("I can't help with that.")], [refusal("No.")])
    model = adapter(api, openai_server)
    assert get(model, request()).output == (OutputMessage("", "I can't help with that."),)
    *_, done = stream(model, request())
    assert done.response.output == (OutputMessage("", "No."),)


@pytest.mark.parametrize("api", APIS)
def test_streaming_yields_raw_deltas_then_the_same_response(
    api: str, openai_server: OpenAIServer
) -> None:
    step = [message("Looking that up now."), call("lookup_order", {"order_id": 42}, "call_s")]
    openai_server.add(step, step)
    model = adapter(api, openai_server)
    plain = get(model, request())
    events = stream(model, request())
    assert isinstance(events[-1], ResponseCompleted)
    assert events[-1].response.output == plain.output
    assert not any(isinstance(e, ResponseCompleted) for e in events[:-1])
    streamed = openai_server.requests[1]
    assert streamed.stream and not openai_server.requests[0].stream
    if api == "responses":
        kinds = [e.type for e in events[:-1]]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        deltas = [e.delta for e in events[:-1] if e.type == "response.output_text.delta"]
        assert len(deltas) > 1 and "".join(deltas) == "Looking that up now."
        assert "response.function_call_arguments.delta" in kinds
    else:
        assert streamed.body["stream_options"] == {"include_usage": True}
        text = [c.choices[0].delta.content for c in events[:-1] if c.choices]
        assert "".join(t for t in text if t) == "Looking that up now."
        assert len([t for t in text if t]) > 1


@pytest.mark.parametrize("api", APIS)
def test_rate_limit_is_retried_then_succeeds(api: str, openai_server: OpenAIServer) -> None:
    openai_server.add(
        error_reply(429, retry_after=0.01), error_reply(503, retry_after=0.01), [message("ok")]
    )
    response = get(adapter(api, openai_server), request())
    assert response.output == (OutputMessage("ok"),)
    assert len(openai_server.requests) == 3
    openai_server.assert_complete()


@pytest.mark.parametrize("api", APIS)
def test_server_errors_after_retries_are_provider_errors(
    api: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(
        error_reply(500, "boom", retry_after=0.01), error_reply(500, "boom again", retry_after=0.01)
    )
    model = adapter(api, openai_server, max_retries=1)
    with pytest.raises(ModelProviderError, match="HTTP 500 after the client's retries: boom again"):
        get(model, request())
    assert len(openai_server.requests) == 2


@pytest.mark.parametrize(
    ("status", "phrase"),
    [
        (401, "rejected the API key"),
        (403, "no access to model 'gpt-test'"),
        (404, "check the model name and the base URL"),
    ],
)
@pytest.mark.parametrize("api", APIS)
def test_auth_and_not_found_are_clear_user_errors(
    api: str, status: int, phrase: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(error_reply(status))
    with pytest.raises(UserError, match=phrase) as info:
        get(adapter(api, openai_server), request())
    assert openai_server.url in str(info.value)
    assert len(openai_server.requests) == 1  # not retried


@pytest.mark.parametrize(
    "body",
    [
        '{"id": "resp_1", "output": [{"type": "mess',
        "<html>Bad gateway</html>",
        '{"id": "x"}',
        "[1, 2]",
    ],
)
@pytest.mark.parametrize("api", APIS)
def test_malformed_bodies_are_model_behavior_errors(
    api: str, body: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(raw_reply(body))
    with pytest.raises(ModelBehaviorError) as caught:
        get(adapter(api, openai_server), request())
    # every failure names the model and its server, the parser's refusals too
    assert str(caught.value).startswith(f"model 'gpt-test' at {openai_server.url}"), \
        str(caught.value)


@pytest.mark.parametrize("api", APIS)
def test_a_stream_that_never_completes_is_a_model_behavior_error(
    api: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(raw_reply("garbage with no events", content_type="text/event-stream"))
    with pytest.raises(ModelBehaviorError) as caught:
        stream(adapter(api, openai_server), request())
    message = str(caught.value)
    assert message.startswith(f"model 'gpt-test' at {openai_server.url}"), message
    assert "before response.completed" not in message  # no event came at all


@pytest.mark.parametrize("api", APIS)
def test_unreachable_server_is_a_provider_error(api: str) -> None:
    with OpenAIServer() as server:
        client = server.client(max_retries=0, timeout=2)
    model = (OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel)(
        "gpt-test", client
    )
    with pytest.raises(ModelProviderError, match="cannot reach") as caught:
        get(model, request())
    # one line that names the model and its server once
    message = str(caught.value)
    assert message.startswith(f"cannot reach model 'gpt-test' at {server.url}")
    assert message.count(server.url) == 1


def test_default_client_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch, openai_server: OpenAIServer
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    openai_server.add([message("hi")])
    model = OpenAIChatCompletionsModel("gpt-test", max_retries=0, timeout=5)
    assert get(model, request()).output == (OutputMessage("hi"),)
    assert openai_server.requests[0].headers["authorization"] == "Bearer from-env"
    assert model.client.max_retries == 0


def test_no_key_anywhere_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="no OpenAI API key: set OPENAI_API_KEY"):
        get(OpenAIResponsesModel("gpt-test"), request())


def test_given_client_takes_the_retry_settings(openai_server: OpenAIServer) -> None:
    model = OpenAIResponsesModel("m", openai_server.client(), max_retries=5, timeout=3.0)
    assert model.client.max_retries == 5
    assert model.client.timeout == 3.0


@pytest.mark.parametrize("api", APIS)
def test_extra_body_reaches_the_server_and_large_fields_travel_verbatim(
    api: str, openai_server: OpenAIServer
) -> None:
    openai_server.add([message("ok")])
    settings = ModelSettings(extra_body={"service_tier": "flex"}, seed=7, frequency_penalty=0.5)
    get(adapter(api, openai_server), request(*SUPPORT_HISTORY, settings=settings))
    body = openai_server.requests[0].body
    assert body["service_tier"] == "flex"
    assert len(history(body, api)) == (7 if api == "responses" else 8)
    if api == "chat":
        assert (body["seed"], body["frequency_penalty"]) == (7, 0.5)
    else:  # the Responses API has neither; they are not sent
        assert "seed" not in body and "frequency_penalty" not in body


@pytest.mark.parametrize("api", APIS)
def test_a_timeout_is_retried_then_succeeds(api: str, openai_server: OpenAIServer) -> None:
    openai_server.add(slow([message("too late")], 5.0), [message("in time")])
    model = adapter(api, openai_server, timeout=0.3)
    assert get(model, request()).output == (OutputMessage("in time"),)
    assert len(openai_server.requests) == 2


def test_timeouts_after_the_retries_are_provider_errors(openai_server: OpenAIServer) -> None:
    openai_server.add(slow([message("too late")], 5.0))
    model = adapter("responses", openai_server, timeout=0.3, max_retries=0)
    with pytest.raises(ModelProviderError, match="timed out after the client's retries"):
        get(model, request())


def test_an_error_event_mid_stream_is_a_provider_error(openai_server: OpenAIServer) -> None:
    events = (
        'event: response.created\ndata: {"type": "response.created", "sequence_number": 0, '
        '"response": {"id": "r", "output": [], "status": "in_progress"}}\n\n'
        'event: error\ndata: {"type": "error", "sequence_number": 1, "code": "server_error", '
        '"message": "the engine is overloaded", "param": null}\n\n'
    )
    openai_server.add(raw_reply(events, content_type="text/event-stream"))
    with pytest.raises(ModelProviderError, match="failed mid-stream: the engine is overloaded"):
        stream(adapter("responses", openai_server), request())


def test_a_404_on_the_responses_api_suggests_the_chat_api(openai_server: OpenAIServer) -> None:
    openai_server.add(error_reply(404, "Not Found"), error_reply(404, "Not Found"))
    with pytest.raises(UserError, match="needs OpenAIChatCompletionsModel"):
        get(adapter("responses", openai_server), request())
    with pytest.raises(UserError) as info:
        get(adapter("chat", openai_server), request())
    assert "OpenAIChatCompletionsModel" not in str(info.value)


@pytest.mark.parametrize("api", APIS)
def test_one_model_serves_several_event_loops(api: str, openai_server: OpenAIServer) -> None:
    # The server keeps connections alive, as real ones do; a pooled connection of a
    # loop that asyncio.run closed must not be reused by the next loop.
    openai_server.add(*([[message("again")]] * 4))
    model = adapter(api, openai_server)
    for _ in range(2):
        assert get(model, request()).output == (OutputMessage("again"),)
        assert stream(model, request())[-1].response.output == (OutputMessage("again"),)
    assert len(openai_server.requests) == 4


def test_a_callers_own_http_client_is_used_as_given(openai_server: OpenAIServer) -> None:
    import httpx2  # the openai client's own HTTP library
    import openai

    own = httpx2.AsyncClient()
    client = openai.AsyncOpenAI(base_url=openai_server.url, api_key="k", http_client=own)
    model = OpenAIResponsesModel("m", client)

    async def which() -> Any:
        return model._client_here()

    assert asyncio.run(which()) is client
    assert asyncio.run(which()) is client  # a second loop too: we cannot copy its settings
