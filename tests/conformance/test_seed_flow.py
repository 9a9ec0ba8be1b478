"""The seed's worked trace: lookup → handoff → refund (approved) → final, 4 model calls."""

from __future__ import annotations

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests.conformance.harness import run_all, trace

SCRIPT: list[ScriptStep] = [
    [function_call("lookup_order", {"order_id": 42})],
    [function_call("transfer_to_refund", {})],
    [function_call("process_refund", {"order_id": 42})],
    [assistant_message("Refunded order 42.")],
]


@pytest.fixture(scope="module")
def machine() -> ss.StateMachine:
    return support.compile()


def test_the_run_pauses_for_the_refund_approval(machine: ss.StateMachine) -> None:
    out = run_all(machine, "I want a refund for order 42", SCRIPT[:3])
    result = out.result
    assert result.final_output is None
    assert result.last_agent == "refund"
    assert [(i.name, i.call_id) for i in result.interruptions] == [("process_refund", "call_3_3")]
    assert trace(result.new_items) == [
        ("tool_call_item", "triage", "lookup_order"),
        ("tool_call_output_item", "triage", "order 42: shipped, 1 item, paid 30.00"),
        ("handoff_call_item", "triage", "transfer_to_refund"),
        ("handoff_output_item", "triage", '{"assistant": "refund"}'),
        ("tool_call_item", "refund", "process_refund"),
        ("tool_approval_item", "refund", "process_refund"),
    ]
    out.model.assert_complete()


def test_approve_and_resume_finishes_with_four_model_calls(machine: ss.StateMachine) -> None:
    model = ScriptedModel(SCRIPT)
    first = machine.run_sync("I want a refund for order 42", model=model)
    state = ss.RunState.from_json(first.to_state().to_json())
    state.approve(first.interruptions[0])

    out = run_all(machine, state, SCRIPT[3:])
    result = out.result
    assert result.final_output == "Refunded order 42."
    assert result.last_agent == "refund"
    assert len(out.model.calls) == 1
    assert trace(result.new_items)[-3:] == [
        ("tool_approval_item", "refund", "process_refund"),
        ("tool_call_output_item", "refund", "refunded order 42 (customer request)"),
        ("message_output_item", "refund", "Refunded order 42."),
    ]
    assert len(result.new_items) == 8

    # one ScriptedModel across the pause: exactly the 4 scripted calls, in order
    resumed = machine.run_sync(state, model=model)
    assert resumed.final_output == "Refunded order 42."
    assert [c.agent for c in model.calls] == ["triage", "triage", "refund", "refund"]
    model.assert_complete()


def test_the_refund_agent_sees_the_whole_history(machine: ss.StateMachine) -> None:
    out = run_all(machine, "I want a refund for order 42", SCRIPT[:3])
    calls = out.model.calls
    assert calls[0].tools == ("lookup_order", "research", "transfer_to_refund")
    assert calls[2].tools == ("process_refund", "transfer_to_triage")
    assert [i.type for i in calls[2].input] == [
        "user_input_item",
        "tool_call_item",
        "tool_call_output_item",
        "handoff_call_item",
        "handoff_output_item",
    ]
