"""Issue 11, items 1 and 2: every gated call is shown and runs only on its own yes.

Servers that number calls per response (``call_0``, ``call_1``) give a nested agent-tool
run the same call ids as its caller; a decision for one call must never decide another.
"always" approves one agent's tool, not every tool of that name.
"""

from __future__ import annotations

import json

import pytest

import stepswitch as ss
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests.conformance.harness import run_all
from tests.conformance.kit import Ledger, compile_agents, refund_tool


def _wire_tool(ledger: Ledger) -> ss.FunctionTool:
    @ss.function_tool(needs_approval=True)
    def wire(amount: int) -> str:
        """Wire money."""
        ledger.ran.append(("wire", amount))
        return f"wired {amount}"

    return wire


def _nested_machine(ledger: Ledger) -> ss.StateMachine:
    banker = ss.Agent("banker", tools=[_wire_tool(ledger)])
    desk = ss.Agent(
        "desk",
        tools=[refund_tool(ledger, needs_approval=True),
               banker.as_tool("ask_banker", "Ask the banker")],
    )
    return compile_agents(desk, banker)


# the caller's response and the nested run's response both number their calls from call_0
_FIRST = [
    [function_call("process_refund", {"order_id": 1}, call_id="call_0"),
     function_call("ask_banker", {"input": "wire 5"}, call_id="call_1")],
    [function_call("wire", {"amount": 5}, call_id="call_0")],
]


def test_a_nested_gated_call_with_a_colliding_call_id_is_shown() -> None:
    ledger = Ledger()
    machine = _nested_machine(ledger)
    out = run_all(machine, "refund and wire", _FIRST, ledger=ledger)
    shown = [(i.agent, i.name, i.call_id) for i in out.result.interruptions]
    assert shown == [("desk", "process_refund", "call_0"), ("banker", "wire", "call_0")]
    assert ledger.ran == []
    # and it survives saving and loading
    state = ss.RunState.from_json(out.result.to_state().to_json())
    assert [(i.agent, i.name) for i in state.interruptions] == [
        ("desk", "process_refund"), ("banker", "wire")]


def test_approving_the_outer_call_does_not_run_the_nested_one() -> None:
    ledger = Ledger()
    machine = _nested_machine(ledger)
    first = machine.run_sync("refund and wire", model=ScriptedModel(_FIRST))
    state = ss.RunState.from_json(first.to_state().to_json())
    refund, _wire = state.interruptions
    state.approve(refund)
    out = run_all(machine, state, [], ledger=ledger)
    assert ledger.ran == [("process_refund", 1)]
    # the nested call still waits for its own decision
    assert [(i.agent, i.name) for i in out.result.interruptions] == [("banker", "wire")]

    again = ss.RunState.from_json(out.result.to_state().to_json())
    again.approve(again.interruptions[0])
    done = run_all(machine, again, [[assistant_message("wired")], [assistant_message("all done")]],
                   ledger=ledger)
    assert ledger.ran == [("wire", 5)]
    assert done.result.final_output == "all done"


def test_a_rejected_nested_call_never_runs_when_the_outer_one_is_approved() -> None:
    ledger = Ledger()
    machine = _nested_machine(ledger)
    first = machine.run_sync("refund and wire", model=ScriptedModel(_FIRST))
    state = first.to_state()
    refund, wire = first.interruptions
    state.approve(refund)
    state.reject(wire, message="no wires today")
    out = run_all(machine, state, [[assistant_message("could not wire")],
                                   [assistant_message("refunded only")]], ledger=ledger)
    assert ledger.ran == [("process_refund", 1)]
    assert out.result.final_output == "refunded only"
    nested_input = out.model.calls[0].input
    assert any(getattr(i, "output", None) == "no wires today" for i in nested_input)


def test_two_nested_runs_with_identical_calls_are_decided_apart() -> None:
    ledger = Ledger()
    banker = ss.Agent("banker", tools=[_wire_tool(ledger)])
    desk = ss.Agent("desk", tools=[banker.as_tool("ask_banker", "Ask the banker")])
    machine = compile_agents(desk, banker)
    same = [function_call("wire", {"amount": 7}, call_id="call_0")]
    first = machine.run_sync("two wires", model=ScriptedModel([
        [function_call("ask_banker", {"input": "a"}, call_id="call_0"),
         function_call("ask_banker", {"input": "b"}, call_id="call_1")],
        same, same,
    ]))
    assert len(first.interruptions) == 2
    state = ss.RunState.from_json(first.to_state().to_json())
    with pytest.raises(ss.UserError, match="2 pending calls"):
        state.approve("call_0")  # ambiguous: the item says which
    state.approve(state.interruptions[1])
    out = run_all(machine, state, [[assistant_message("sent b")]], ledger=ledger)
    assert ledger.ran == [("wire", 7)]
    assert len(out.result.interruptions) == 1
    assert json.loads(out.result.interruptions[0].arguments) == {"amount": 7}


def test_always_is_scoped_to_the_agent_and_its_tool() -> None:
    ledger = Ledger()

    @ss.function_tool(name="process_refund", needs_approval=True)
    def big_refund(order_id: int) -> str:
        """Refund a large order."""
        ledger.ran.append(("big_refund", order_id))
        return "big refund done"

    manager = ss.Agent("manager", tools=[big_refund])
    clerk = ss.Agent("clerk", tools=[refund_tool(ledger, needs_approval=True)],
                     handoffs=[manager])
    machine = compile_agents(clerk, manager)
    first = machine.run_sync("refund", model=ScriptedModel(
        [[function_call("process_refund", {"order_id": 1})]]))
    state = first.to_state()
    state.approve(first.interruptions[0], always=True)
    out = run_all(
        machine, state,
        [[function_call("process_refund", {"order_id": 2})],  # the clerk's: approved always
         [function_call("transfer_to_manager")],
         [function_call("process_refund", {"order_id": 3})]],  # the manager's: must ask
        ledger=ledger,
    )
    assert ledger.ran == [("process_refund", 1), ("process_refund", 2)]
    assert [(i.agent, i.name) for i in out.result.interruptions] == [
        ("manager", "process_refund")]
    reloaded = ss.RunState.from_json(out.result.to_state().to_json())
    assert [(i.agent, i.name) for i in reloaded.interruptions] == [
        ("manager", "process_refund")]


def test_an_item_from_another_run_does_not_approve_this_runs_call() -> None:
    # Both runs number their call call_0; only the arguments tell the calls apart.
    ledger = Ledger()
    machine = _nested_machine(ledger)
    small = machine.run_sync("refund 1", model=ScriptedModel(
        [[function_call("process_refund", {"order_id": 1}, call_id="call_0")]]))
    large = machine.run_sync("refund 999", model=ScriptedModel(
        [[function_call("process_refund", {"order_id": 999}, call_id="call_0")]]))
    state = ss.RunState.from_json(large.to_state().to_json())
    with pytest.raises(ss.StateError, match=r"arguments is '\{\"order_id\": ?1\}'.*another run"):
        state.approve(small.interruptions[0])
    assert state.decisions == {}
    # the item taken from this run still decides it
    state.approve(large.interruptions[0])
    run_all(machine, state, [[assistant_message("refunded")]], ledger=ledger)
    assert ledger.ran == [("process_refund", 999)]


def test_usage_goes_on_across_a_resume_as_the_sdk_s_does() -> None:
    """Each scripted step reports one request: the nested run's and the caller's calls
    before the pause and after it all count, through a saved and loaded state."""
    machine = _nested_machine(Ledger())
    first = machine.run_sync("refund and wire", model=ScriptedModel(_FIRST))
    assert first.usage.requests == 2
    state = ss.RunState.from_json(first.to_state().to_json())
    assert state.usage == (2, 0, 0, 0)
    for item in state.interruptions:
        state.approve(item)
    done = machine.run_sync(state, model=ScriptedModel(
        [[assistant_message("wired")], [assistant_message("all done")]]))
    assert done.final_output == "all done"
    assert done.usage.requests == 4


@pytest.mark.parametrize("usage", [[1, 2, 3], [1, -2, 3, 4], [1, 2.5, 3, 4], "4"])
def test_a_saved_usage_that_is_not_four_counts_is_refused(usage: object) -> None:
    from stepswitch.runtime.state_json import _digest

    machine = _nested_machine(Ledger())
    doc = json.loads(machine.run_sync("refund and wire", model=ScriptedModel(_FIRST))
                     .to_state().to_json())
    doc["body"]["usage"] = usage
    doc["digest"] = _digest(doc["body"], None)
    with pytest.raises(ss.StateError, match="usage"):
        ss.RunState.from_json(json.dumps(doc))
