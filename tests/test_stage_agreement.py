"""The analyzer, the diagrams, the interpreter and the generated runner describe one
machine.

"Can a run end at this agent?" and "can this agent's turn pause?" are facts worked out
once (stepswitch.graph.facts) and stored in the IR by lower(). The analyzer (SW108,
SW501), the graph and machine diagrams (edges to the end and paused nodes), the run
loop and a generated runner (whether a scripted model can actually finish or pause
there) must all agree with them. A gap between them is a diagram or a check that lies,
or a runner that drops an approval; this suite pins them together.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.compiler.codegen import load_source
from stepswitch.compiler.lower import lower
from stepswitch.render.machine import build_machine_scene
from stepswitch.render.scene import build_scene
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
    (state,) = lower(wf.to_spec()).states
    facts = state.facts
    can_end = facts.end_calls is not None
    assert (facts.answers or facts.stops) == can_end
    # both diagrams draw an edge to the end exactly when the facts say it can end
    graph_finals = [e for e in build_scene(wf.graph()).edges if e.kind == "final"]
    machine_finals = [e for e in build_machine_scene(lower(wf.to_spec())).edges
                      if e.kind == "final"]
    assert bool(graph_finals) == can_end
    assert len(machine_finals) == int(facts.answers) + int(facts.stops)
    # and the checks say so: an agent that cannot end is SW108 (or SW205)
    codes = {d.code for d in wf.check().errors}
    assert ("SW108" in codes) == (not can_end)


def _run(agent: ss.Agent, steps: list[Any]) -> ss.RunResult:
    machine = ss.Workflow(name="w", entry=agent, ignore=["SW108"]).compile()
    return machine.run_sync("hi", model=ScriptedModel(steps))


def test_a_forced_agent_really_answers_after_its_tool_call_as_the_diagram_shows() -> None:
    agent = _agent("required", (ping,), "run_llm_again")
    assert _facts(agent) == (True, False)
    result = _run(agent, [[function_call("ping", {})], [assistant_message("done")]])
    assert result.final_output == "done"


def test_an_agent_whose_only_tool_stops_ends_on_its_output_as_the_diagram_shows() -> None:
    agent = _agent("required", (ping,), ss.StopAtTools(["ping"]))
    assert _facts(agent) == (False, True)
    result = _run(agent, [[function_call("ping", {})]])
    assert result.final_output == "pong"


def _facts(agent: ss.Agent) -> tuple[bool, bool]:
    (state,) = lower(ss.Workflow(name="w", entry=agent).to_spec()).states
    return state.facts.answers, state.facts.stops


# -- pausing: the shape from issue 10 ------------------------------------------------


@ss.function_tool(needs_approval=True)
def refund(order_id: int) -> str:
    """Refund an order."""
    return "refunded"


def _nested_pause_workflow(handoff: bool) -> ss.Workflow:
    """outer calls b as a tool; b hands off to c, whose refund needs approval (or, with
    ``handoff=False``, b holds the refund tool itself)."""
    c = ss.Agent(name="c", instructions="c", tools=[refund])
    b = (ss.Agent(name="b", instructions="b", handoffs=[c]) if handoff
         else ss.Agent(name="b", instructions="b", tools=[refund]))
    outer = ss.Agent(name="outer", instructions="o", tools=[b.as_tool("ask_b", "Ask b")])
    agents = [outer, b, c] if handoff else [outer, b]
    return ss.Workflow(name="np", entry=outer, agents=agents)


def _script(handoff: bool) -> list[Any]:
    steps: list[Any] = [[function_call("ask_b", {"input": "refund order 1"})]]
    if handoff:
        steps.append([function_call("transfer_to_c", {})])
    steps.append([function_call("refund", {"order_id": 1})])
    steps.append([assistant_message("outer answer")])  # only if the approval is dropped
    return steps


@pytest.mark.parametrize("handoff", [True, False], ids=["nested-handoff", "nested-direct"])
def test_interpreter_runner_check_and_machine_view_agree_on_a_nested_pause(
    handoff: bool,
) -> None:
    wf = _nested_pause_workflow(handoff)
    machine = wf.compile()
    # the IR: outer's turn can pause through its agent tool's nested run
    (outer, *_) = machine.ir.states
    assert [(p.tool, p.kind) for p in outer.facts.pauses] == [("ask_b", "nested")]
    assert outer.switch[0].then == "interruption"
    # the interpreter pauses on refund
    interpreted = machine.run_sync("go", model=ScriptedModel(_script(handoff)))
    assert [i.name for i in interpreted.interruptions] == ["refund"]
    assert interpreted.final_output is None
    # the generated runner, the same
    module = load_source(ss.codegen(machine), "nested_pause_runner")
    generated = module.MACHINE.run_sync("go", model=ScriptedModel(_script(handoff)))
    assert [i.name for i in generated.interruptions] == ["refund"]
    assert generated.final_output is None
    assert [i.type for i in generated.new_items] == [i.type for i in interpreted.new_items]
    # approving it finishes the run the same way in both
    for runner, first in ((machine, interpreted), (module.MACHINE, generated)):
        state = first.to_state()
        state.approve(first.interruptions[0])
        rest = ScriptedModel([[assistant_message("refunded, b says")],
                              [assistant_message("outer answer")]])
        assert runner.run_sync(state, model=rest).final_output == "outer answer"
    # SW501 names outer, and the machine view draws its Interruption edge
    sw501 = [d.message for d in wf.check().diagnostics if d.code == "SW501"]
    assert any("agent 'outer'" in m and "ask_b" in m for m in sw501)
    interrupts = {(e.source, e.label) for e in build_machine_scene(machine.ir).edges
                  if e.kind == "interrupt"}
    assert ("a0", "Interruption: ask_b (nested)") in interrupts


NESTED_HANDOFF = _nested_pause_workflow(True)


def test_render_view_machine_draws_the_nested_pause(capsys: pytest.CaptureFixture[str]) -> None:
    from stepswitch.cli.main import main

    target = f"{__file__}:NESTED_HANDOFF"
    assert main(["render", target, "--format", "mermaid", "--view", "machine"]) == 0
    text = capsys.readouterr().out
    assert "Interruption: ask_b (nested)" in text
