"""End to end over real HTTP: the seed's support workflow, compiled, run by the real
``openai`` client against ``OpenAIServer``, on both APIs, streamed and not.

Each test asserts on the result a user sees and on the requests the server got: the
tools offered with their schemas, outputs sent back under the same call ids, the
structured-output format.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.openai_server import RecordedRequest
from stepswitch.models.script import Reply, call, error_reply, message, raw_reply, refusal
from stepswitch.runtime.events import RawResponsesStreamEvent, RunItemStreamEvent

APIS = ["responses", "chat"]
MODES = ["plain", "streamed"]

PAUSE_SCRIPT = [
    [call("lookup_order", {"order_id": 42})],
    [message("Handing you to refunds."), call("transfer_to_refund", {})],
    [call("process_refund", {"order_id": 42, "reason": "damaged"})],
]
FINISH = Reply((message("Refunded order 42."),), input_tokens=120, output_tokens=8)


@pytest.fixture(scope="module")
def machine() -> ss.StateMachine:
    return support.compile()


def model_for(api: str, server: OpenAIServer, **options: Any) -> Any:
    cls = OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel
    return cls("gpt-test", server.client(**options))


def run(machine: ss.StateMachine, input: Any, model: Any, mode: str) -> tuple[Any, list[Any]]:
    """The result and (when streamed) the events."""
    if mode == "plain":
        return machine.run_sync(input, model=model), []

    async def consume() -> tuple[Any, list[Any]]:
        streamed = machine.run_streamed(input, model=model)
        events = [e async for e in streamed.stream_events()]
        return streamed, events

    return asyncio.run(consume())


def tool_names(req: RecordedRequest) -> list[str]:
    tools = req.body.get("tools", [])
    return [t["name"] if "name" in t else t["function"]["name"] for t in tools]


def tool_schema(req: RecordedRequest, name: str) -> dict[str, Any]:
    for t in req.body["tools"]:
        fn = t if "name" in t else t["function"]
        if fn["name"] == name:
            assert fn["strict"] is True
            return dict(fn["parameters"])
    raise AssertionError(f"{name} not offered")


def outputs_sent(req: RecordedRequest) -> dict[str, str]:
    """call id → output, as the request carried them back to the model."""
    if req.api == "responses":
        return {
            i["call_id"]: i["output"]
            for i in req.body["input"]
            if i.get("type") == "function_call_output"
        }
    return {m["tool_call_id"]: m["content"] for m in req.body["messages"] if m["role"] == "tool"}


def calls_sent(req: RecordedRequest) -> dict[str, str]:
    """call id → tool name of every call in the request's history."""
    if req.api == "responses":
        return {
            i["call_id"]: i["name"] for i in req.body["input"] if i.get("type") == "function_call"
        }
    return {
        c["id"]: c["function"]["name"]
        for m in req.body["messages"]
        for c in m.get("tool_calls", [])
    }


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_support_flow_pauses_then_resumes_from_saved_state(
    api: str, mode: str, machine: ss.StateMachine, openai_server: OpenAIServer
) -> None:
    openai_server.add(*PAUSE_SCRIPT)
    model = model_for(api, openai_server)
    first, events = run(machine, "I want a refund for order 42", model, mode)

    assert first.final_output is None
    assert first.last_agent == "refund"
    [pending] = first.interruptions
    assert (pending.name, pending.call_id) == ("process_refund", "call_2_0")
    assert [(i.type, i.agent) for i in first.new_items] == [
        ("tool_call_item", "triage"),
        ("tool_call_output_item", "triage"),
        ("message_output_item", "triage"),
        ("handoff_call_item", "triage"),
        ("handoff_output_item", "triage"),
        ("tool_call_item", "refund"),
        ("tool_approval_item", "refund"),
    ]
    if mode == "streamed":
        raw = [e for e in events if isinstance(e, RawResponsesStreamEvent)]
        assert len(raw) > 10  # the API's own deltas came through
        kinds = {type(e.data).__name__ for e in raw}
        assert (
            ("ResponseTextDeltaEvent" in kinds)
            if api == "responses"
            else (kinds == {"ChatCompletionChunk"})
        )
        named = [e.name for e in events if isinstance(e, RunItemStreamEvent)]
        assert named[:2] == ["tool_called", "tool_output"]
        assert "handoff_occured" in named

    # what the server saw for the first three model calls
    r0, r1, r2 = openai_server.model_requests(api)
    assert tool_names(r0) == ["lookup_order", "research", "transfer_to_refund"]
    assert tool_schema(r0, "lookup_order")["properties"]["order_id"]["type"] == "integer"
    assert tool_schema(r0, "research")["required"] == ["input"]
    assert outputs_sent(r1) == {"call_0_0": "order 42: shipped, 1 item, paid 30.00"}
    assert tool_names(r2) == ["process_refund", "transfer_to_triage"]
    assert calls_sent(r2) == {"call_0_0": "lookup_order", "call_1_1": "transfer_to_refund"}
    assert json.loads(outputs_sent(r2)["call_1_1"]) == {"assistant": "refund"}
    instructions = r2.body.get("instructions") or r2.body["messages"][0]["content"]
    assert instructions.startswith("You handle refunds.")
    assert all(r.stream == (mode == "streamed") for r in (r0, r1, r2))

    # the state crosses a process boundary as JSON, is approved, and the run resumes
    state = ss.RunState.from_json(first.to_state().to_json())
    state.approve(pending)
    openai_server.add(FINISH)
    done, _ = run(machine, state, model, mode)
    assert done.final_output == "Refunded order 42."
    assert done.last_agent == "refund"
    assert [i.type for i in done.new_items][-2:] == ["tool_call_output_item", "message_output_item"]
    r3 = openai_server.model_requests(api)[3]
    assert outputs_sent(r3)["call_2_0"] == "refunded order 42 (damaged)"
    assert calls_sent(r3)["call_2_0"] == "process_refund"
    # the whole run's usage (the saved state keeps it): the first three calls reported
    # none but their requests, the last one 120 in, 8 out
    assert (done.usage.requests, done.usage.input_tokens, done.usage.total_tokens) == (4, 120, 128)
    openai_server.assert_complete()


@pytest.mark.parametrize("api", APIS)
def test_rejection_goes_back_to_the_model_under_the_call_id(
    api: str, machine: ss.StateMachine, openai_server: OpenAIServer
) -> None:
    openai_server.add(*PAUSE_SCRIPT)
    model = model_for(api, openai_server)
    first = machine.run_sync("I want a refund for order 42", model=model)
    state = first.to_state()
    state.reject(first.interruptions[0].call_id)
    openai_server.add([message("The refund was declined.")])
    done = machine.run_sync(state, model=model)
    assert done.final_output == "The refund was declined."
    sent = outputs_sent(openai_server.model_requests(api)[3])["call_2_0"]
    assert "refunded" not in sent  # the tool never ran
    openai_server.assert_complete()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_agent_tool_with_structured_output(
    api: str, mode: str, machine: ss.StateMachine, openai_server: OpenAIServer
) -> None:
    openai_server.add(
        [call("research", {"input": "is order 42 late?"})],
        [message('{"summary": "order 42 shipped on time"}')],
        [message("It shipped on time.")],
    )
    result, _ = run(machine, "Is order 42 late?", model_for(api, openai_server), mode)
    assert result.final_output == "It shipped on time."
    triage, researcher, back = openai_server.model_requests(api)
    if api == "responses":
        fmt = researcher.body["text"]["format"]
        assert researcher.body["input"] == [{"role": "user", "content": "is order 42 late?"}]
    else:
        fmt = researcher.body["response_format"]["json_schema"]
        assert fmt.pop("type", "json_schema") == "json_schema"
    assert fmt["strict"] is True
    assert fmt["schema"]["properties"] == {"summary": {"type": "string"}} or (
        fmt["schema"]["properties"]["summary"]["type"] == "string"
    )
    assert "text" not in triage.body and "response_format" not in triage.body
    [output] = outputs_sent(back).values()
    assert "order 42 shipped on time" in output
    openai_server.assert_complete()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_rate_limit_is_retried_then_the_run_succeeds(
    api: str, mode: str, machine: ss.StateMachine, openai_server: OpenAIServer
) -> None:
    openai_server.add(error_reply(429, retry_after=0.01), [message("Hello! How can I help?")])
    result, _ = run(machine, "hi", model_for(api, openai_server), mode)
    assert result.final_output == "Hello! How can I help?"
    assert len(openai_server.requests) == 2
    assert openai_server.requests[0].body == openai_server.requests[1].body


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_bad_key_is_a_clear_user_error(
    api: str, mode: str, machine: ss.StateMachine, openai_server: OpenAIServer
) -> None:
    openai_server.add(error_reply(401))
    with pytest.raises(ss.UserError, match="rejected the API key"):
        run(machine, "hi", model_for(api, openai_server), mode)
    assert len(openai_server.requests) == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_invalid_json_body_is_model_behavior_error_and_keeps_the_items(
    api: str, mode: str, machine: ss.StateMachine, openai_server: OpenAIServer
) -> None:
    openai_server.add([call("lookup_order", {"order_id": 7})])
    body = (
        '{"id": "x", "output": [{"type": "message", "content": ['
        if mode == "plain"
        else ("data: {not json\n\n")
    )
    openai_server.add(
        raw_reply(body, content_type="application/json" if mode == "plain" else "text/event-stream")
    )
    with pytest.raises(ss.ModelBehaviorError) as info:
        run(machine, "where is order 7?", model_for(api, openai_server), mode)
    data = info.value.run_data
    assert data is not None
    assert [i.type for i in data.new_items] == ["tool_call_item", "tool_call_output_item"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
def test_a_refusal_arrives_as_a_refusal_item(
    api: str, mode: str, machine: ss.StateMachine, openai_server: OpenAIServer
) -> None:
    openai_server.add([refusal("I can't help with that.")])
    result, _ = run(machine, "do something bad", model_for(api, openai_server), mode)
    [item] = result.new_items
    assert item.type == "message_output_item"
    assert (item.content, item.refusal) == ("", "I can't help with that.")


@pytest.mark.parametrize("api", APIS)
def test_a_fresh_server_can_drive_a_resumed_run(machine: ss.StateMachine, api: str) -> None:
    # the second server numbers its calls from 0 again; an id the conversation already
    # holds would be a reused call id, which the loop refuses
    with OpenAIServer(PAUSE_SCRIPT) as first:
        paused = machine.run_sync("refund order 42", model=model_for(api, first))
    state = paused.to_state()
    state.approve(paused.interruptions[0])
    again = [
        [call("transfer_to_triage", {})],
        [call("lookup_order", {"order_id": 42})],
        [message("Refunded order 42.")],
    ]
    with OpenAIServer(again) as second:
        result = machine.run_sync(state, model=model_for(api, second))
        sent = second.model_requests(api)
    assert result.final_output == "Refunded order 42."
    calls = [i for i in result.new_items if i.type == "tool_call_item"]
    assert len({c.call_id for c in calls}) == len(calls)
    assert len(sent) == 3
