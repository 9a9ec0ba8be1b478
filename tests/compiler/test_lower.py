"""Lowering: one state per agent, a tool table per state, output and step rules."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

import stepswitch as ss
from graphs.support import support
from stepswitch.compiler import HandoffTo, RunAgent, RunFunction, lower


def test_support_lowers_to_three_states_with_their_tables() -> None:
    ir = lower(support.build().spec)
    assert ir.name == "support" and ir.entry == "triage" and ir.max_turns == 10
    assert [s.agent for s in ir.states] == ["triage", "refund", "researcher"]
    triage, refund, researcher = ir.states
    actions = {t.name: t.action for t in triage.tools}
    assert actions["lookup_order"] == RunFunction(ref="graphs.support:lookup_order")
    assert isinstance(actions["research"], RunAgent) and actions["research"].target == "researcher"
    assert actions["transfer_to_refund"] == HandoffTo(target="refund")
    back = refund.tool("transfer_to_triage")
    assert back is not None and back.action == HandoffTo(target="triage", max_uses=2)
    process = refund.tool("process_refund")
    assert process is not None
    assert isinstance(process.action, RunFunction) and process.action.approval == "always"
    assert triage.output.kind == "text"
    assert researcher.output.kind == "typed"
    assert researcher.output.type_ref == "graphs.support:Findings"
    assert researcher.output.schema is not None and not researcher.output.wrapped


def test_wrapped_output_and_step_rule() -> None:
    class Out(BaseModel):
        x: int

    @ss.function_tool
    def f() -> str:
        """F."""
        return "f"

    a = ss.Agent("a", tools=[f], output_type=list[int], tool_use_behavior=ss.StopAtTools(["f"]))
    ir = lower(ss.Workflow("w", entry=a, agents=[a]).build().spec)
    state = ir.states[0]
    assert state.output.kind == "typed" and state.output.wrapped
    assert state.step.tool_use == "stop_at_tools" and state.step.stop_at == ("f",)


def test_unknown_handoff_target_is_refused_with_its_place() -> None:
    a = ss.Agent("a", handoffs=["ghost"])
    with pytest.raises(ss.UserError, match=r"test_lower.py:\d+: target 'ghost' names no agent"):
        lower(ss.Workflow("w", entry=a, agents=[a]).build().spec)


def test_unknown_entry_is_refused() -> None:
    a = ss.Agent("a")
    with pytest.raises(ss.UserError, match="entry 'b' names no agent"):
        lower(ss.Workflow("w", entry="b", agents=[a]).build().spec)


def test_compile_returns_a_state_machine() -> None:
    machine = support.compile()
    assert isinstance(machine, ss.StateMachine)
    assert machine.agents == ("triage", "refund", "researcher")
