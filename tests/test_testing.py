"""stepswitch.testing: the scripted model records calls and fails loudly."""

from __future__ import annotations

import asyncio

import pytest

import stepswitch as ss
from stepswitch.runtime.model import ModelRequest
from stepswitch.testing import ScriptedModel, ScriptExhausted, assistant_message, function_call
from tests._items import call_id_of


def _request(agent: str = "a") -> ModelRequest:
    return ModelRequest(agent=agent, instructions="i", input=(), tools=(), output_schema=None)


def test_function_call_forms() -> None:
    assert function_call("t", {"a": 1}).arguments == '{"a": 1}'
    assert function_call("t", "{broken").arguments == "{broken"
    assert function_call("t").arguments == "{}"
    assert function_call("t", call_id="c9").call_id == "c9"


def test_calls_are_numbered_and_recorded() -> None:
    model = ScriptedModel([[function_call("t"), function_call("u")], assistant_message("hi")])
    first = asyncio.run(model.get_response(_request("a")))
    second = asyncio.run(model.get_response(_request("b")))
    assert [call_id_of(o) for o in first.output] == ["call_1_1", "call_1_2"]
    assert second.output[0].content == "hi"  # type: ignore[union-attr]
    assert [c.agent for c in model.calls] == ["a", "b"]
    model.assert_complete()


def test_made_up_call_ids_never_repeat_one_in_the_history() -> None:
    from stepswitch.runtime.items import ToolCallItem

    history = (ToolCallItem("a", "t", "call_1_1", "{}"), ToolCallItem("a", "t", "call_1_1_2", "{}"))
    request = ModelRequest(agent="a", instructions=None, input=history, tools=(),
                           output_schema=None)
    model = ScriptedModel([[function_call("t"), function_call("t", call_id="mine")]])
    response = asyncio.run(model.get_response(request))
    assert [o.call_id for o in response.output] == ["call_1_1_3", "mine"]  # type: ignore[union-attr]


def test_an_extra_call_fails_loudly() -> None:
    model = ScriptedModel([])
    with pytest.raises(ScriptExhausted, match="unexpected model call #1 \\(agent 'a'\\)"):
        asyncio.run(model.get_response(_request()))


def test_a_scripted_exception_is_raised() -> None:
    model = ScriptedModel([TimeoutError("slow")])
    with pytest.raises(TimeoutError):
        asyncio.run(model.get_response(_request()))


def test_assert_complete_reports_unused_steps() -> None:
    model = ScriptedModel([[assistant_message("a")], [assistant_message("b")]])
    asyncio.run(model.get_response(_request()))
    with pytest.raises(AssertionError, match="1 of 2 step\\(s\\) were never used"):
        model.assert_complete()


def test_an_unexpected_extra_call_aborts_a_run() -> None:
    machine = ss.Workflow("w", entry=ss.Agent("a", handoffs=["b"]),
                          agents=[ss.Agent("b")]).compile()
    with pytest.raises(ScriptExhausted):
        machine.run_sync("hi", model=ScriptedModel([[function_call("transfer_to_b")]]))


def test_records_what_the_run_sent() -> None:
    machine = ss.Workflow("w", entry=ss.Agent("a", instructions="be brief")).compile()
    model = ScriptedModel([[assistant_message("ok")]])
    machine.run_sync("hello", model=model)
    call = model.calls[0]
    assert (call.agent, call.instructions, call.tools, call.output_schema) == (
        "a", "be brief", (), None
    )
    assert list(call.input) == [ss.runtime.UserInputItem("hello")]


def test_streams_raw_events_then_the_response() -> None:
    model = ScriptedModel([[assistant_message("x")]])

    async def collect() -> list[object]:
        return [e async for e in model.stream_response(_request())]

    events = asyncio.run(collect())
    assert isinstance(events[-1], ss.runtime.ResponseCompleted)
    assert events[0] == {"type": "response.output_item.done", "item": assistant_message("x")}
