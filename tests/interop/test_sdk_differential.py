"""Differential: SDK example apps on the SDK's own Runner vs read with ``ss.from_sdk`` and
run on stepswitch's runtime, each on the same scripted model: equal item traces."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, cast

import agents
import pytest
from agents import ItemHelpers, RunConfig, Runner
from agents import testing as sdk_testing

import stepswitch as ss
from stepswitch import testing as our_testing
from tests.interop.sdk_apps import examples as ex

# a step is a list of ("call", name, args, call_id) / ("say", text)
Step = list[tuple[Any, ...]]
Row = tuple[str, str, str | None, str | None, str | None]


def _sdk_model(steps: Sequence[Step]) -> sdk_testing.ScriptedModel:
    out = []
    for step in steps:
        items = []
        for part in step:
            if part[0] == "call":
                items.append(sdk_testing.function_call(part[1], part[2], call_id=part[3]))
            else:
                items.append(sdk_testing.assistant_message(part[1]))
        out.append(items)
    return sdk_testing.ScriptedModel(out)


def _our_model(steps: Sequence[Step]) -> our_testing.ScriptedModel:
    out: list[Any] = []
    for step in steps:
        items: list[Any] = []
        for part in step:
            if part[0] == "call":
                items.append(our_testing.function_call(part[1], part[2], call_id=part[3]))
            else:
                items.append(our_testing.assistant_message(part[1]))
        out.append(items)
    return our_testing.ScriptedModel(out)


def _args(raw: str) -> str:
    return json.dumps(json.loads(raw or "{}"), sort_keys=True)


def sdk_trace(items: Sequence[Any]) -> list[Row]:
    rows: list[Row] = []
    for item in items:
        agent = item.agent.name
        raw = item.raw_item
        if isinstance(item, agents.MessageOutputItem):
            rows.append(("message", agent, None, None, ItemHelpers.text_message_output(item)))
        elif isinstance(item, agents.HandoffCallItem):
            rows.append(("handoff_call", agent, raw.name, _args(raw.arguments), raw.call_id))
        elif isinstance(item, agents.HandoffOutputItem):
            rows.append(("handoff_output", agent, item.target_agent.name, raw["output"],
                         raw["call_id"]))
        elif isinstance(item, agents.ToolCallItem):
            rows.append(("tool_call", agent, raw.name, _args(raw.arguments), raw.call_id))
        elif isinstance(item, agents.ToolCallOutputItem):
            rows.append(("tool_output", agent, None, str(raw["output"]), raw["call_id"]))
        elif isinstance(item, agents.ToolApprovalItem):
            rows.append(("approval", agent, raw.name, _args(raw.arguments), raw.call_id))
        else:
            raise AssertionError(f"unexpected SDK item {type(item).__name__}")
    return rows


def our_trace(items: Sequence[Any]) -> list[Row]:
    rows: list[Row] = []
    for item in items:
        kind = item.type
        if kind == "message_output_item":
            rows.append(("message", item.agent, None, None, item.content))
        elif kind == "handoff_call_item":
            rows.append(("handoff_call", item.agent, item.name, _args(item.arguments),
                         item.call_id))
        elif kind == "handoff_output_item":
            rows.append(("handoff_output", item.agent, item.target_agent, item.output,
                         item.call_id))
        elif kind == "tool_call_item":
            rows.append(("tool_call", item.agent, item.name, _args(item.arguments),
                         item.call_id))
        elif kind == "tool_call_output_item":
            rows.append(("tool_output", item.agent, None, item.output, item.call_id))
        elif kind == "tool_approval_item":
            rows.append(("approval", item.agent, item.name, _args(item.arguments),
                         item.call_id))
        else:
            raise AssertionError(f"unexpected item {kind}")
    return rows


def run_sdk(agent: agents.Agent, text: str, steps: Sequence[Step]) -> Any:
    config = RunConfig(model=_sdk_model(steps), tracing_disabled=True)
    return asyncio.run(Runner.run(agent, text, run_config=config))


def run_ours(agent: agents.Agent, text: str, steps: Sequence[Step]) -> Any:
    machine = ss.from_sdk(agent).compile()
    return machine.run_sync(text, model=_our_model(steps))


CASES: dict[str, tuple[Callable[[], agents.Agent], str, list[Step]]] = {
    "customer_service": (lambda: ex.service_triage, "can I bring a bag, then seat 3A?", [
        [("call", "faq_lookup", {"question": "bag allowance"}, "c1")],
        [("say", "Let me move you."),
         ("call", "transfer_to_seat_booking_agent", {"reason": "seat change"}, "c2")],
        [("call", "update_seat", {"confirmation": "AB12", "seat": "3A"}, "c3")],
        [("say", "Done: seat 3A.")],
    ]),
    "agents_as_tools": (lambda: ex.orchestrator, "say hi in two languages", [
        [("call", "translate_to_spanish", {"input": "hi"}, "c1")],
        [("say", "hola")],
        [("call", "translate_to_french", {"input": "hi"}, "c2")],
        [("say", "salut")],
        [("say", "hola / salut")],
    ]),
    "stop_at_tools": (lambda: ex.reporter, "weather and time in Oslo", [
        [("call", "slow_weather", {"city": "Oslo"}, "c1"),
         ("call", "fast_time", {"city": "Oslo"}, "c2")],
    ]),
    "parallel_then_message": (lambda: ex.chatty, "weather and time in Rome", [
        [("say", "Checking."), ("call", "slow_weather", {"city": "Rome"}, "c1"),
         ("call", "fast_time", {"city": "Rome"}, "c2")],
        [("say", "Sunny at noon.")],
    ]),
    "guardrails_pass": (lambda: ex.tutor, "what is the bag allowance?", [
        [("call", "faq_lookup", {"question": "bag"}, "c1")],
        [("say", "One bag.")],
    ]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_item_traces_are_equal(case: str) -> None:
    make, text, steps = CASES[case]
    agent = make()
    ex.ESCALATIONS.clear()
    theirs = run_sdk(agent, text, steps)
    their_escalations = list(ex.ESCALATIONS)
    ex.ESCALATIONS.clear()
    ours = run_ours(agent, text, steps)
    assert our_trace(ours.new_items) == sdk_trace(theirs.new_items)
    assert ours.final_output == theirs.final_output
    assert ours.last_agent == theirs.last_agent.name
    assert their_escalations == ex.ESCALATIONS


def test_approval_pause_and_resume_traces_are_equal() -> None:
    steps: list[Step] = [
        [("call", "cancel_order", {"order_id": 4}, "c1"), ("call", "fast_time", {"city": "Oslo"},
                                                            "c2")],
        [("say", "Cancelled.")],
    ]
    config = RunConfig(model=_sdk_model(steps), tracing_disabled=True)
    paused = asyncio.run(Runner.run(ex.clerk, "cancel 4", run_config=config))
    machine = ss.from_sdk(ex.clerk).compile()
    model = _our_model(steps)
    our_paused = machine.run_sync("cancel 4", model=model)
    assert our_trace(our_paused.new_items) == sdk_trace(paused.new_items)
    assert [i.call_id for i in our_paused.interruptions] == [
        cast(Any, i.raw_item).call_id for i in paused.interruptions]

    state = paused.to_state()
    state.approve(paused.interruptions[0])
    done = asyncio.run(Runner.run(ex.clerk, state, run_config=config))
    our_state = our_paused.to_state()
    our_state.approve(our_paused.interruptions[0])
    our_done = machine.run_sync(our_state, model=model)
    assert our_trace(our_done.new_items) == sdk_trace(done.new_items)
    assert our_done.final_output == done.final_output == "Cancelled."


def test_input_guardrail_tripwires_on_both() -> None:
    steps: list[Step] = [[("say", "unused")]]
    with pytest.raises(agents.InputGuardrailTripwireTriggered):
        run_sdk(ex.tutor, "do my homework", steps)
    with pytest.raises(ss.InputGuardrailTripwireTriggered):
        run_ours(ex.tutor, "do my homework", steps)


def test_invalid_arguments_differ_only_in_the_error_text_the_model_reads() -> None:
    """A deliberate difference (docs/migrating.md): the SDK 0.24 tells the model only
    that an error occurred; stepswitch names the field so the model can retry."""
    steps: list[Step] = [[("call", "faq_lookup", {"wrong": 1}, "c1")], [("say", "Sorry.")]]
    theirs = sdk_trace(run_sdk(ex.service_triage, "bag?", steps).new_items)
    ours = our_trace(run_ours(ex.service_triage, "bag?", steps).new_items)
    assert [r[:3] + r[4:] for r in ours] == [r[:3] + r[4:] for r in theirs]
    assert theirs[1][3] == "An error occurred while running the tool. Please try again."
    assert ours[1][3] is not None and "question: Field required" in ours[1][3]
