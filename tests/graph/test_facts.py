"""The facts the graph stage works out once per agent (stepswitch.graph.facts): how
few model calls it needs to end a run itself, as the run loop behaves, and where its
turn can pause."""

from __future__ import annotations

import stepswitch as ss
from stepswitch.graph.facts import machine_facts, own_ending
from stepswitch.ir import PausePoint

FORCED = ss.ModelSettings(tool_choice="required")


@ss.function_tool
def probe() -> str:
    """Probe."""
    return "ok"


def calls_to_end(agent: ss.graph.AgentSpec) -> int | None:
    return own_ending(agent)[2]


def spec_of(agent: ss.Agent) -> ss.graph.AgentSpec:
    found = ss.Workflow(name="w", entry=agent).to_spec().agent(agent.name)
    assert found is not None
    return found


def test_an_agent_that_may_answer_ends_in_one_call() -> None:
    assert calls_to_end(spec_of(ss.Agent(name="a"))) == 1


def test_forced_tool_then_answer_takes_two_calls() -> None:
    assert calls_to_end(spec_of(ss.Agent(name="a", tools=[probe], model_settings=FORCED))) == 2


def test_stopping_on_an_agent_tool_ends_in_one_call_like_a_function_tool() -> None:
    helper = ss.Agent(name="helper")
    agent = ss.Agent(
        name="a",
        tools=[helper.as_tool("ask_helper", "Ask.")],
        model_settings=FORCED,
        tool_use_behavior=ss.StopAtTools(["ask_helper"]),
    )
    assert calls_to_end(spec_of(agent)) == 1


def test_forced_with_only_handoffs_cannot_end_itself() -> None:
    other = ss.Agent(name="b")
    agent = ss.Agent(name="a", handoffs=[other], model_settings=FORCED)
    assert calls_to_end(spec_of(agent)) is None


@ss.function_tool(needs_approval=True)
def refund(order_id: int) -> str:
    """Refund an order."""
    return "refunded"


def test_a_nested_run_that_hands_off_to_an_approval_pauses_its_caller() -> None:
    c = ss.Agent(name="c", tools=[refund])
    b = ss.Agent(name="b", handoffs=[c])
    outer = ss.Agent(name="outer", tools=[b.as_tool("ask_b", "Ask b")])
    facts = machine_facts(ss.Workflow(name="np", entry=outer, agents=[outer, b, c]).to_spec())
    assert facts["c"].pauses == (PausePoint("refund", "tool", "always"),)
    assert facts["b"].pauses == ()  # its own turns never pause: its handoff target's do
    assert facts["outer"].pauses == (PausePoint("ask_b", "nested", "always", "b"),)
    assert facts["outer"].nested_only is False
    assert facts["b"].nested_only and facts["c"].nested_only


def test_pausing_is_found_at_any_depth_and_not_where_no_path_leads() -> None:
    d = ss.Agent(name="d", tools=[refund])
    c = ss.Agent(name="c", handoffs=[d])
    b = ss.Agent(name="b", tools=[c.as_tool("ask_c", "Ask c")])
    a = ss.Agent(name="a", tools=[b.as_tool("ask_b", "Ask b")])
    lone = ss.Agent(name="lone", tools=[probe])
    top = ss.Agent(name="top", tools=[a.as_tool("ask_a", "Ask a")], handoffs=[lone])
    wf = ss.Workflow(name="deep", entry=top, agents=[top, a, b, c, d, lone])
    facts = machine_facts(wf.to_spec())
    pausing = {name for name, f in facts.items() if f.can_pause}
    assert pausing == {"top", "a", "b", "d"}
    assert facts["top"].pauses[0].kind == "nested"
