"""How few model calls an agent needs to end a run itself, as the run loop behaves."""

from __future__ import annotations

import stepswitch as ss
from stepswitch.analysis._ending import calls_to_end

FORCED = ss.ModelSettings(tool_choice="required")


@ss.function_tool
def probe() -> str:
    """Probe."""
    return "ok"


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
