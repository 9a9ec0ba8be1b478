"""Reasoning items and multimodal input through stepswitch's own runs, over real HTTP:
the real ``openai`` client against ``OpenAIServer``. A reasoning item the model returns
is kept verbatim in the run's items, a saved state and a session, and sent back in its
place on the next request; a user message's image and file parts reach the request as
given (issue 31)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.script import call, message
from stepswitch.review import check_trail, read_trail, responses_items
from stepswitch.runtime.items import ResponsesItem, ToolCallItem, UserInputItem
from stepswitch.runtime.model import OutputResponsesItem
from stepswitch.sessions import (
    MemorySession,
    PostgresSession,
    RedisSession,
    SQLiteSession,
    to_sdk_session,
)
from stepswitch.sessions._corpus import PNG
from tests.sessions.stores import PG_DSN, REDIS_URL, pg_schema, redis_prefix

__all__ = ["pg_schema", "redis_prefix"]  # the stores' fixtures, used by name

REASONING: dict[str, Any] = {
    "type": "reasoning",
    "id": "rs_0a1",
    "summary": [{"type": "summary_text", "text": "Look the order up first."}],
    "encrypted_content": "gAAAAABo-opaque+/=ünï",
}
IMAGE_MESSAGE: dict[str, Any] = {
    "role": "user",
    "content": [
        {"type": "input_text", "text": "What is on this receipt?"},
        {"type": "input_image", "image_url": PNG, "detail": "high"},
        {"type": "input_file", "filename": "r.txt",
         "file_data": "data:text/plain;base64,aGVsbG8="},
    ],
}


def _machine(*, approval: bool = False) -> ss.StateMachine:
    @ss.function_tool(needs_approval=approval)
    def lookup(order_id: int) -> str:
        """Look up an order."""
        return f"order {order_id}: shipped"

    desk = ss.Agent(name="desk", instructions="Help.", tools=[lookup])
    return ss.Workflow(name="desk", entry=desk, agents=[desk]).compile()


def _inputs(server: OpenAIServer, n: int) -> list[Any]:
    return list(server.requests[n].body["input"])


def _reasoning_then_call(server: OpenAIServer) -> None:
    server.add(
        [OutputResponsesItem(dict(REASONING)), call("lookup", {"order_id": 42}, "call_7")],
        [message("Order 42 has shipped.")],
    )


@pytest.mark.parametrize("streamed", [False, True])
def test_a_reasoning_item_is_sent_back_verbatim_before_its_call(streamed: bool) -> None:
    machine = _machine()
    with OpenAIServer() as server:
        _reasoning_then_call(server)
        model = OpenAIResponsesModel("gpt-test", server.client())
        names: list[str] = []
        if streamed:
            async def go() -> Any:
                run = machine.run_streamed("where is order 42?", model=model)
                async for event in run.stream_events():
                    if event.type == "run_item_stream_event":
                        names.append(event.name)
                return run
            result: Any = asyncio.run(go())
            assert names[:2] == ["reasoning_item_created", "tool_called"]  # as the SDK names
        else:
            result = machine.run_sync("where is order 42?", model=model)
        server.assert_complete()
        assert result.final_output == "Order 42 has shipped."
        assert result.new_items[0] == ResponsesItem("desk", REASONING)
        assert type(result.new_items[1]) is ToolCallItem
        assert _inputs(server, 1) == [
            {"role": "user", "content": "where is order 42?"},
            REASONING,  # as the server sent it: no fields added, none lost
            {"type": "function_call", "call_id": "call_7", "name": "lookup",
             "arguments": '{"order_id": 42}'},
            {"type": "function_call_output", "call_id": "call_7",
             "output": "order 42: shipped"},
        ]


def test_a_user_image_and_file_reach_the_request_as_given() -> None:
    machine = _machine()
    with OpenAIServer() as server:
        server.add([message("A receipt for order 42.")])
        result = machine.run_sync(
            [IMAGE_MESSAGE], model=OpenAIResponsesModel("gpt-test", server.client()))
        assert result.final_output == "A receipt for order 42."
        assert _inputs(server, 0) == [IMAGE_MESSAGE]
    item = UserInputItem("What is on this receipt?", "user", tuple(IMAGE_MESSAGE["content"]))
    assert result.to_state().input == (item,)


def test_chat_completions_sends_images_as_image_url_parts_and_no_reasoning() -> None:
    machine = _machine()
    with OpenAIServer() as server:
        server.add([message("A receipt.")])
        machine.run_sync([IMAGE_MESSAGE, dict(REASONING)],
                         model=OpenAIChatCompletionsModel("gpt-test", server.client()))
        messages = server.requests[0].body["messages"]
    assert messages[1:] == [{"role": "user", "content": [
        {"type": "text", "text": "What is on this receipt?"},
        {"type": "image_url", "image_url": {"url": PNG, "detail": "high"}},
        {"type": "file", "file": {"file_data": "data:text/plain;base64,aGVsbG8=",
                                  "filename": "r.txt"}},
    ]}]  # the reasoning item is left out: Chat Completions has none to send back


def test_chat_completions_refuses_an_image_it_cannot_carry() -> None:
    machine = _machine()
    by_id = {"role": "user", "content": [{"type": "input_image", "file_id": "file-1"}]}
    with OpenAIServer() as server:
        with pytest.raises(ss.UserError, match=r"content part 0 .*input_image with only a "
                                               r"file_id.*no Chat Completions form"):
            machine.run_sync([by_id], model=OpenAIChatCompletionsModel(
                "gpt-test", server.client()))
        assert server.requests == []


def _digest(body: Any) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_paused_run_with_reasoning_resumes_from_state_json_and_sends_it() -> None:
    machine = _machine(approval=True)
    with OpenAIServer() as server:
        server.add([OutputResponsesItem(dict(REASONING)),
                    call("lookup", {"order_id": 42}, "call_7")])
        first = machine.run_sync(
            [IMAGE_MESSAGE], model=OpenAIResponsesModel("gpt-test", server.client()))
        assert [i.name for i in first.interruptions] == ["lookup"]
    text = first.to_state().to_json()
    state = ss.RunState.from_json(text)
    assert state.to_json() == text  # the round trip is exact
    assert ResponsesItem("desk", REASONING) in state.items
    first_input = state.input[0]
    assert isinstance(first_input, UserInputItem)
    assert first_input.parts == tuple(IMAGE_MESSAGE["content"])

    # a tampered state fails closed: an edit breaks the digest, and a re-digested body
    # whose verbatim item is not a Responses item is refused by name
    doc = json.loads(text)
    doc["body"]["items"][0]["item"]["encrypted_content"] = "forged"
    with pytest.raises(ss.StateError, match="digest does not match"):
        ss.RunState.from_json(json.dumps(doc))
    for bad, where in ((["not", "an", "item"], "items\\[0\\].item"),
                       ({"summary": []}, "items\\[0\\].item")):
        doc = json.loads(text)
        doc["body"]["items"][0]["item"] = bad
        doc["digest"] = _digest(doc["body"])
        with pytest.raises(ss.StateError, match=where):
            ss.RunState.from_json(json.dumps(doc))
    doc = json.loads(text)
    doc["body"]["input"][0]["parts"] = "an image"
    doc["digest"] = _digest(doc["body"])
    with pytest.raises(ss.StateError, match=r"input\[0\]\.parts has the wrong type"):
        ss.RunState.from_json(json.dumps(doc))
    doc = json.loads(text)
    doc["body"]["pending"]["output"][0]["item"]["id"] = "rs_other"
    doc["digest"] = _digest(doc["body"])
    with pytest.raises(ss.StateError, match="interrupted turn"):
        ss.RunState.from_json(json.dumps(doc))

    # the review reads it: the reasoning item is part of the paused turn, nothing is wrong
    trail = read_trail(text)
    assert [i.kind for i in trail.items] == ["input", "reasoning", "call", "approval"]
    assert check_trail(trail, machine.ir).findings == ()
    assert responses_items([*state.input, *state.items][:2]) == [IMAGE_MESSAGE, REASONING]

    state.approve(state.interruptions[0])
    with OpenAIServer() as server:
        server.add([message("Order 42 has shipped.")])
        done = machine.run_sync(state, model=OpenAIResponsesModel("gpt-test", server.client()))
        server.assert_complete()
        assert done.final_output == "Order 42 has shipped."
        assert _inputs(server, 0) == [
            IMAGE_MESSAGE,
            REASONING,
            {"type": "function_call", "call_id": "call_7", "name": "lookup",
             "arguments": '{"order_id": 42}'},
            {"type": "function_call_output", "call_id": "call_7",
             "output": "order 42: shipped"},
        ]


def _session(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if backend == "memory":
        return MemorySession("u1")
    if backend == "sqlite":
        return SQLiteSession("u1", tmp_path / "c.db")
    if backend == "postgres":
        return PostgresSession("u1", PG_DSN, schema=request.getfixturevalue("pg_schema"))
    return RedisSession("u1", REDIS_URL, key_prefix=request.getfixturevalue("redis_prefix"))


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgres", "redis"])
def test_a_session_keeps_sending_the_image_and_the_reasoning(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    machine = _machine()
    session = _session(backend, request, tmp_path)
    with OpenAIServer() as server:
        _reasoning_then_call(server)
        server.add([message("It was delivered on Monday.")])
        model = OpenAIResponsesModel("gpt-test", server.client())
        machine.run_sync([IMAGE_MESSAGE], model=model, session=session)
        second = machine.run_sync("when was it delivered?", model=model, session=session)
        server.assert_complete()
        assert second.final_output == "It was delivered on Monday."
        sent = _inputs(server, 2)
    assert sent[:2] == [IMAGE_MESSAGE, REASONING]
    assert sent[-1] == {"role": "user", "content": "when was it delivered?"}
    # and an SDK app reading the same session sees the items as the API gave them
    sdk_items = asyncio.run(to_sdk_session(session).get_items())
    assert sdk_items[:2] == [IMAGE_MESSAGE, REASONING]
    asyncio.run(session.close())


def test_a_reasoning_item_belongs_to_its_model_response_in_a_session_transcript() -> None:
    from stepswitch.cli._session import model_responses_in
    from stepswitch.runtime.items import MessageOutputItem, ToolCallOutputItem

    items = [UserInputItem("hi"), ResponsesItem("desk", REASONING),
             ToolCallItem("desk", "lookup", "c1", "{}"), ToolCallOutputItem("desk", "c1", "ok"),
             MessageOutputItem("desk", "done")]
    assert model_responses_in(items) == [("reasoning", "lookup"), ("done",)]


def test_a_scripted_model_in_process_keeps_the_reasoning_item_in_the_run() -> None:
    from stepswitch.testing import ScriptedModel, assistant_message, function_call

    model = ScriptedModel([
        [OutputResponsesItem(dict(REASONING)), function_call("lookup", {"order_id": 1})],
        [assistant_message("done")],
    ])
    result = _machine().run_sync("order 1?", model=model)
    assert result.final_output == "done"
    second = model.calls[1].input
    assert second[1] == ResponsesItem("desk", REASONING)
    assert type(second[2]) is ToolCallItem
    assert ss.RunState.from_json(result.to_state().to_json()).items == result.to_state().items
