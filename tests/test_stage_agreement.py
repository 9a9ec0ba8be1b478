"""The analyzer, the diagrams and the run loop agree on which agents can end a run.

Three stages each answer "can a run end at this agent?": the analyzer (SW108, the
model-call bound), the graph and machine diagrams (an edge to the end node), and the
run loop (whether a scripted model can actually finish there). A gap between them is
a diagram or a check that lies; this suite pins them together over every combination
of forced tool choice, tools and tool-use behaviour.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.analysis._ending import calls_to_end
from stepswitch.compiler.lower import lower
from stepswitch.render.machine import state_can_finish
from stepswitch.render.scene import can_finish
from stepswitch.testing import ScriptedModel, assistant_message, function_call


@ss.function_tool
def ping() -> str:
    """Ping."""
    return "pong"


@ss.function_tool
def other() -> str:
    """Other."""
    return "other"


def maybe_stop(ctx: Any, results: list[Any]) -> ss.ToolsToFinalOutputResult:
    return ss.ToolsToFinalOutputResult(is_final_output=False, final_output=None)


CHOICES = [None, "auto", "none", "required", "ping", "missing_tool"]
TOOLSETS = [(), (ping,), (ping, other)]
BEHAVIORS: list[Any] = [
    "run_llm_again",
    "stop_on_first_tool",
    ss.StopAtTools(["ping"]),
    ss.StopAtTools(["not_a_tool"]),
    maybe_stop,
]


def _agent(choice: str | None, tools: tuple[Any, ...], behavior: Any) -> ss.Agent:
    settings = ss.ModelSettings(tool_choice=choice) if choice is not None else None
    return ss.Agent(
        name="a",
        instructions="x",
        tools=list(tools),
        model_settings=settings,
        tool_use_behavior=behavior,
    )


CASES = list(itertools.product(CHOICES, TOOLSETS, BEHAVIORS))


@pytest.mark.parametrize(("choice", "tools", "behavior"), CASES)
def test_analyzer_and_both_diagrams_agree_on_ending(
    choice: str | None, tools: tuple[Any, ...], behavior: Any
) -> None:
    wf = ss.Workflow(name="w", entry=_agent(choice, tools, behavior))
    spec = wf.to_spec()
    (agent,) = spec.agents
    analyzer = calls_to_end(agent) is not None
    graph = any(can_finish(agent))
    assert graph == analyzer
    (state,) = lower(spec).states
    assert state_can_finish(state) == can_finish(agent)
    # and the checks say so: an agent that cannot end is SW108 (or SW205)
    codes = {d.code for d in wf.check().errors}
    assert ("SW108" in codes) == (not analyzer)


def _run(agent: ss.Agent, steps: list[Any]) -> ss.RunResult:
    machine = ss.Workflow(name="w", entry=agent, ignore=["SW108"]).compile()
    return machine.run_sync("hi", model=ScriptedModel(steps))


def test_a_forced_agent_really_answers_after_its_tool_call_as_the_diagram_shows() -> None:
    agent = _agent("required", (ping,), "run_llm_again")
    assert can_finish(_spec(agent)) == (True, False)
    result = _run(agent, [[function_call("ping", {})], [assistant_message("done")]])
    assert result.final_output == "done"


def test_an_agent_whose_only_tool_stops_ends_on_its_output_as_the_diagram_shows() -> None:
    agent = _agent("required", (ping,), ss.StopAtTools(["ping"]))
    assert can_finish(_spec(agent)) == (False, True)
    result = _run(agent, [[function_call("ping", {})]])
    assert result.final_output == "pong"


def _spec(agent: ss.Agent) -> Any:
    (spec,) = ss.Workflow(name="w", entry=agent).to_spec().agents
    return spec
