"""The StateMachine's drivers: what each surface promises beyond the shared loop."""

from __future__ import annotations

import asyncio

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.runtime import AgentUpdatedStreamEvent, RawResponsesStreamEvent, RunItemStreamEvent
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests._items import text_of

FLOW = [
    [function_call("lookup_order", {"order_id": 42})],
    [function_call("transfer_to_refund", {})],
    [function_call("process_refund", {"order_id": 42})],
]


def test_stream_event_sequence_matches_the_sdks_shape() -> None:
    machine = support.compile()
    streamed = machine.run_streamed("refund 42", model=ScriptedModel(FLOW))

    async def names() -> list[str]:
        out = []
        async for event in streamed.stream_events():
            if isinstance(event, AgentUpdatedStreamEvent):
                out.append(f"agent:{event.new_agent}")
            elif isinstance(event, RunItemStreamEvent):
                out.append(event.name)
            else:
                assert isinstance(event, RawResponsesStreamEvent)
                out.append("raw")
        return out

    assert asyncio.run(names()) == [
        "agent:triage", "raw", "tool_called", "tool_output",
        "raw", "handoff_requested", "handoff_occured",
        "agent:refund", "raw", "tool_called",
    ]
    assert streamed.is_complete and streamed.current_agent == "refund"
    assert streamed.interruptions[0].name == "process_refund"  # approvals are not streamed


def test_streamed_result_fields_wait_for_the_stream() -> None:
    streamed = support.compile().run_streamed("hi", model=ScriptedModel([[assistant_message("x")]]))
    with pytest.raises(RuntimeError, match="consume stream_events"):
        _ = streamed.final_output

    async def drain() -> None:
        async for _ in streamed.stream_events():
            pass
        with pytest.raises(RuntimeError, match="only once"):
            async for _ in streamed.stream_events():
                pass

    asyncio.run(drain())
    assert streamed.final_output == "x" and streamed.result().last_agent == "triage"


def test_cancel_between_events_stops_the_run_and_keeps_it() -> None:
    """The SDK's ``cancel()``: no further model call, the stream ends, and the run so far
    is there to read and to resume."""
    model = ScriptedModel(FLOW)
    streamed = support.compile().run_streamed("refund 42", model=model)

    async def until_the_lookup_ran() -> list[str]:
        seen = []
        async for event in streamed.stream_events():
            if isinstance(event, RunItemStreamEvent):
                seen.append(event.name)
                if event.name == "tool_output":
                    streamed.cancel()
        return seen

    assert asyncio.run(until_the_lookup_ran()) == ["tool_called", "tool_output"]
    assert len(model.calls) == 1 and streamed.is_complete
    assert [i.type for i in streamed.new_items] == ["tool_call_item", "tool_call_output_item"]
    assert streamed.final_output is None and streamed.last_agent == "triage"
    state = ss.RunState.from_json(streamed.to_state().to_json())
    done = support.compile().run_sync(state, model=ScriptedModel(FLOW[1:]))
    assert [i.name for i in done.interruptions] == ["process_refund"]
    streamed.cancel()  # a second time: nothing more happens


def test_leaving_the_stream_early_stops_the_run_and_keeps_it() -> None:
    model = ScriptedModel(FLOW)
    streamed = support.compile().run_streamed("refund 42", model=model)

    async def leave() -> None:
        async for event in streamed.stream_events():
            if isinstance(event, RunItemStreamEvent) and event.name == "tool_output":
                break
        await asyncio.sleep(0)  # the abandoned iterator is closed by the event loop

    asyncio.run(leave())
    assert streamed.is_complete and len(model.calls) == 1
    assert [i.type for i in streamed.new_items] == ["tool_call_item", "tool_call_output_item"]
    assert streamed.to_state().current_agent == "triage"
    never = support.compile().run_streamed("hi", model=ScriptedModel([]))
    never.cancel()
    with pytest.raises(RuntimeError, match="cancelled before it started"):
        _ = never.new_items
    with pytest.raises(ss.UserError, match="only 'immediate'"):
        support.compile().run_streamed("hi", model=model).cancel(mode="after_turn")


def test_stream_errors_are_raised_from_the_iterator() -> None:
    streamed = support.compile().run_streamed(
        "hi", model=ScriptedModel([[function_call("nope")]])
    )

    async def drain() -> None:
        async for _ in streamed.stream_events():
            pass

    with pytest.raises(ss.ModelBehaviorError, match="Tool nope not found in agent triage"):
        asyncio.run(drain())


def test_run_sync_refuses_a_running_loop() -> None:
    machine = support.compile()

    async def inside() -> None:
        machine.run_sync("hi", model=ScriptedModel([[assistant_message("x")]]))

    with pytest.raises(RuntimeError, match="event loop is already running"):
        asyncio.run(inside())


def test_a_run_needs_a_model() -> None:
    with pytest.raises(ss.UserError, match=r"pass model=\.\.\. to run"):
        support.compile().run_sync("hi")
    with pytest.raises(ss.UserError, match="get_response"):
        support.compile().run_sync("hi", model=object())  # type: ignore[arg-type]


def test_input_forms() -> None:
    machine = support.compile()
    model = ScriptedModel([[assistant_message("x")]])
    machine.run_sync([{"role": "user", "content": "a"}, "b"], model=model)
    assert [text_of(i) for i in model.calls[0].input] == ["a", "b"]
    with pytest.raises(ss.UserError, match=r"run input\[0\]"):
        machine.run_sync([3], model=model)


def _public(cls: type) -> set[str]:
    names = {n for n in dir(cls) if not n.startswith("_")}
    names |= {n for n in getattr(cls, "__dataclass_fields__", {}) if not n.startswith("_")}
    return names


def test_streamed_result_has_every_public_attribute_of_run_result() -> None:
    missing = _public(ss.RunResult) - _public(ss.RunResultStreaming)
    assert not missing, f"RunResultStreaming lacks {sorted(missing)}"


def test_streamed_result_answers_like_the_plain_result() -> None:
    @ss.output_guardrail
    def fine(ctx: ss.RunContext[None], agent: object, output: object) -> ss.GuardrailFunctionOutput:
        return ss.GuardrailFunctionOutput(output_info="ok", tripwire_triggered=False)

    machine = ss.Workflow("w", entry=ss.Agent("a", output_guardrails=[fine]),
                          max_turns=4).compile()
    plain = machine.run_sync("hi", model=ScriptedModel([[assistant_message("x")]]))
    streamed = machine.run_streamed("hi", model=ScriptedModel([[assistant_message("x")]]))

    async def drain() -> None:
        async for _ in streamed.stream_events():
            pass

    asyncio.run(drain())
    for name in sorted(_public(ss.RunResult)):
        here, there = getattr(streamed, name), getattr(plain, name)
        if callable(there):
            continue
        assert here == there, name
    assert streamed.max_turns == 4
    assert streamed.final_output_as(str, raise_if_incorrect_type=True) == "x"
    with pytest.raises(TypeError, match="not int"):
        streamed.final_output_as(int, raise_if_incorrect_type=True)
    assert [g.output_info for g in streamed.output_guardrail_results] == ["ok"]
    assert streamed.input_guardrail_results == []
    assert streamed.to_input_list() == plain.to_input_list()
