"""What a misbehaving server does to a run (issue 11): truncated streams, tool-call
arguments sent as JSON objects, malformed Chat Completions shapes. The real ``openai``
client over loopback HTTP against ``OpenAIServer``."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.errors import ModelBehaviorError, ModelProviderError
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.script import call, message, raw_reply, truncated
from stepswitch.runtime.items import UserInputItem
from stepswitch.runtime.model import ModelRequest, OutputFunctionCall, OutputMessage
from tests._items import arguments_of

APIS = ["responses", "chat"]

ORDERS: list[tuple[int, str]] = []


@ss.function_tool
def refund(order_id: int, reason: str = "none given") -> str:
    """Refund an order."""
    ORDERS.append((order_id, reason))
    return f"refunded {order_id}"


clerk = ss.Agent(name="clerk", instructions="Refund.", tools=[refund])
workflow = ss.Workflow(name="clerk", entry=clerk)


@pytest.fixture(autouse=True)
def clean() -> None:
    ORDERS.clear()


def model(api: str, server: OpenAIServer) -> Any:
    cls = OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel
    return cls("gpt-test", server.client(max_retries=0))


def request() -> ModelRequest:
    return ModelRequest(
        agent="clerk", instructions="Refund.", input=(UserInputItem("refund 42"),), tools=(),
        output_schema=None,
    )


def stream(m: Any) -> list[Any]:
    async def collect() -> list[Any]:
        return [e async for e in m.stream_response(request())]

    return asyncio.run(collect())


def run_streamed(machine: ss.StateMachine, m: Any) -> Any:
    async def go() -> Any:
        s = machine.run_streamed("refund 42", model=m)
        async for _ in s.stream_events():
            pass
        return s

    return asyncio.run(go())


# ---- 6: truncated streams --------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("cut", [1, 3, 5])
def test_a_stream_cut_off_mid_way_is_a_retryable_provider_error(
    api: str, cut: int, openai_server: OpenAIServer
) -> None:
    openai_server.add(truncated([message("Your refund of 500 dollars is approved.")], cut))
    with pytest.raises(ModelProviderError, match=r"ended before|broke off"):
        stream(model(api, openai_server))


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    data = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(data)}\n\n"


def test_a_chat_stream_that_ends_cleanly_but_before_its_finish_reason_is_a_provider_error(
    openai_server: OpenAIServer,
) -> None:
    # the connection closes in good order, but the model had not finished: no
    # finish_reason and no [DONE] (a proxy's timeout, a crashed worker behind it)
    body = chat_chunk({"role": "assistant", "content": "Refund appro"})
    openai_server.add(raw_reply(body, content_type="text/event-stream"))
    with pytest.raises(ModelProviderError, match="ended before the model finished"):
        stream(model("chat", openai_server))


def test_a_chat_stream_with_its_finish_reason_but_no_done_is_complete(
    openai_server: OpenAIServer,
) -> None:
    body = chat_chunk({"role": "assistant", "content": "All done."}) + chat_chunk({}, "stop")
    openai_server.add(raw_reply(body, content_type="text/event-stream"))
    events = stream(model("chat", openai_server))
    assert events[-1].response.output == (OutputMessage("All done."),)


@pytest.mark.parametrize("api", APIS)
def test_a_truncated_stream_fails_the_run_and_keeps_it(
    api: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(
        [call("refund", {"order_id": 1}, "c1")],
        truncated([message("Refund of order 1 is complete and")], 3),
    )
    with pytest.raises(ModelProviderError) as caught:
        run_streamed(workflow.compile(), model(api, openai_server))
    assert ORDERS == [(1, "none given")]
    data = caught.value.run_data
    assert [i.type for i in data.new_items] == ["tool_call_item", "tool_call_output_item"]
    # resuming the kept run does not run the refund again
    openai_server.add([message("Refunded.")])
    result = workflow.compile().run_sync(data.to_state(), model=model(api, openai_server))
    assert result.final_output == "Refunded."
    assert ORDERS == [(1, "none given")]


@pytest.mark.parametrize("api", APIS)
def test_a_plain_answer_cut_off_mid_body_is_a_provider_error(
    api: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(truncated([message("Refund approved for order 42, all of it.")]))
    with pytest.raises(ModelProviderError):
        asyncio.run(model(api, openai_server).get_response(request()))


# ---- 7: arguments as a JSON object -----------------------------------------------------


def chat_completion(arguments: Any) -> str:
    tool_call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "refund", "arguments": arguments},
    }
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "content": None, "tool_calls": [tool_call]},
                }
            ],
        }
    )


def response_body(arguments: Any) -> str:
    return json.dumps(
        {
            "id": "resp_1",
            "object": "response",
            "status": "completed",
            "model": "m",
            "output": [
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "c1",
                    "name": "refund",
                    "arguments": arguments,
                    "status": "completed",
                }
            ],
        }
    )


def raw_answer(api: str, arguments: Any) -> Any:
    return raw_reply(chat_completion(arguments) if api == "chat" else response_body(arguments))


@pytest.mark.parametrize("api", APIS)
def test_arguments_sent_as_a_json_object_reach_the_tool_as_sent(
    api: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(
        raw_answer(api, {"order_id": 7, "reason": "damaged"}), [message("Refunded order 7.")]
    )
    result = workflow.compile().run_sync("refund 7", model=model(api, openai_server))
    assert ORDERS == [(7, "damaged")]
    assert result.final_output == "Refunded order 7."
    call_item = result.new_items[0]
    assert json.loads(arguments_of(call_item)) == {"order_id": 7, "reason": "damaged"}


def test_streamed_argument_objects_are_accepted_too(openai_server: OpenAIServer) -> None:
    tool_call = {"index": 0, "id": "c1", "type": "function",
                 "function": {"name": "refund", "arguments": {"order_id": 9}}}
    body = (
        chat_chunk({"role": "assistant", "content": None, "tool_calls": [tool_call]})
        + chat_chunk({}, "tool_calls")
        + "data: [DONE]\n\n"
    )
    openai_server.add(raw_reply(body, content_type="text/event-stream"))
    events = stream(model("chat", openai_server))
    assert events[-1].response.output == (OutputFunctionCall("refund", '{"order_id": 9}', "c1"),)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("arguments", [42, ["order_id", 7], True])
def test_arguments_of_another_type_are_refused_naming_the_field(
    api: str, arguments: Any, openai_server: OpenAIServer
) -> None:
    openai_server.add(raw_answer(api, arguments))
    with pytest.raises(ModelBehaviorError, match="arguments"):
        workflow.compile().run_sync("refund 7", model=model(api, openai_server))
    assert ORDERS == []  # never with arguments other than the model's


# ---- 17: malformed Chat Completions shapes ---------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"id": "x"}, "choices"),
        ({"choices": "many"}, "choices"),
        ({"choices": {"0": {}}}, "choices"),
        ({"choices": [7]}, "choices[0]"),
        ({"choices": [{"message": "hello"}]}, "choices[0].message"),
        ({"choices": [{"message": {"content": 5}}]}, "choices[0].message.content"),
        ({"choices": [{"message": {"content": ["a"]}}]}, "choices[0].message.content"),
        ({"choices": [{"message": {"refusal": {"x": 1}}}]}, "choices[0].message.refusal"),
        ({"choices": [{"message": {"tool_calls": 5}}]}, "choices[0].message.tool_calls"),
        ({"choices": [{"message": {"tool_calls": {"a": 1}}}]}, "choices[0].message.tool_calls"),
        ({"choices": [{"message": {"tool_calls": ["x"]}}]}, "choices[0].message.tool_calls[0]"),
        (
            {"choices": [{"message": {"tool_calls": [{"id": "a", "function": "f"}]}}]},
            "choices[0].message.tool_calls[0].function",
        ),
        (
            {"choices": [{"message": {"tool_calls": [{"id": "a", "function": {"name": 3}}]}}]},
            "choices[0].message.tool_calls[0].function.name",
        ),
        (
            {"choices": [{"message": {"tool_calls": [{"id": 5, "function": {"name": "f"}}]}}]},
            "choices[0].message.tool_calls[0].id",
        ),
    ],
)
def test_malformed_completions_name_the_field(
    body: dict[str, Any], field: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(raw_reply(json.dumps(body)))
    with pytest.raises(ModelBehaviorError) as caught:
        asyncio.run(model("chat", openai_server).get_response(request()))
    assert f"malformed response: {field} " in str(caught.value)


@pytest.mark.parametrize(
    ("chunk", "field"),
    [
        ({"choices": 5}, "choices"),
        ({"choices": [3]}, "choices[0]"),
        ({"choices": [{"index": 0, "delta": "text"}]}, "choices[0].delta"),
        ({"choices": [{"index": 0, "delta": {"content": 4}}]}, "choices[0].delta.content"),
        ({"choices": [{"index": 0, "delta": {"tool_calls": 4}}]}, "choices[0].delta.tool_calls"),
        ({"choices": [{"index": 0, "delta": {"tool_calls": [1]}}]},
         "choices[0].delta.tool_calls[0]"),
        ({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "a"}]}}]},
         "choices[0].delta.tool_calls[0].index"),
        ({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": 2}]}}]},
         "choices[0].delta.tool_calls[0].function"),
    ],
)
def test_malformed_stream_chunks_name_the_field(
    chunk: dict[str, Any], field: str, openai_server: OpenAIServer
) -> None:
    good = chat_chunk({"role": "assistant", "content": "Hi"})
    body = good + f"data: {json.dumps({'id': 'c', **chunk})}\n\n" + chat_chunk({}, "stop")
    openai_server.add(raw_reply(body, content_type="text/event-stream"))
    with pytest.raises(ModelBehaviorError) as caught:
        stream(model("chat", openai_server))
    assert f"malformed response: {field} " in str(caught.value)


# ---- 21: a stream abandoned or failed prints nothing -----------------------------------

ABANDON = """
import asyncio, sys
import stepswitch as ss
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.script import message

agent = ss.Agent(name="talker", instructions="Talk.")
machine = ss.Workflow(name="talk", entry=agent).compile()
cls = OpenAIChatCompletionsModel if sys.argv[1] == "chat" else OpenAIResponsesModel
with OpenAIServer([[message("word " * 200)]] * 3, chunk_size=4) as server:
    model = cls("m", server.client())

    async def main() -> None:
        for _ in range(3):
            s = machine.run_streamed("hi", model=model)
            seen = 0
            async for _event in s.stream_events():
                seen += 1
                if seen == 6:
                    break  # the consumer walks away mid-answer

    asyncio.run(main())
print("done")
"""


@pytest.mark.parametrize("api", APIS)
def test_a_stream_its_consumer_abandons_is_closed_quietly(api: str) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", ABANDON, api], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert proc.stderr == ""


@pytest.mark.parametrize(
    ("api", "body", "field"),
    [
        ("chat", '{"choices": [{"message": {"content": "a \\ud800 b"}}]}',
         "choices[0].message.content"),
        ("responses", '{"output": [{"type": "message", "content": [{"type": "output_text", '
                      '"text": "a \\udfff"}]}]}', "output[0].content[0].text"),
        ("responses", '{"output": [{"type": "function_call", "call_id": "c", "name": "refund", '
                      '"arguments": "{\\"order_id\\": \\"\\ud800\\"}"}]}', "output[0].arguments"),
    ],
)
def test_a_lone_surrogate_from_the_model_is_refused_naming_the_field(
    api: str, body: str, field: str, openai_server: OpenAIServer
) -> None:
    openai_server.add(raw_reply(body))
    with pytest.raises(ModelBehaviorError, match=rf"{re.escape(field)} holds a lone surrogate"):
        asyncio.run(model(api, openai_server).get_response(request()))
