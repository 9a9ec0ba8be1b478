"""A flow's node facts are computed once and every stage reads them.

``lower()`` stores per flow node whether the entry leads to it, whether a run that
reaches it can end, and whether its run can pause (stepswitch.graph.facts.flow_facts).
The analyzer's SW707/SW708, the graph view (from WorkflowGraph.flow_facts(), the same
pass) and the machine view (from the IR) must say exactly what the stored facts say,
and a run must pause where the facts say it can.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.compiler.lower import lower
from stepswitch.flow_ir import FlowFacts
from stepswitch.render.flow_scene import build_flow_machine_scene, build_flow_scene
from stepswitch.render.machine import runs_again
from stepswitch.render.scene import PAUSED_ID, Scene
from stepswitch.testing import ScriptedModel, assistant_message, function_call


@ss.function_tool(needs_approval=True)
def refund(order_id: int) -> str:
    """Refund an order."""
    return "refunded"


class Shout(BaseModel):
    text: str


@ss.step
def shout(text: str) -> Shout:
    return Shout(text=text.upper())


@ss.step
def whisper(text: str) -> str:
    return text.lower()


def _nested_pause_flow(*, broken: bool) -> ss.Workflow:
    """The issue's shape inside a flow: node ``outer`` asks ``b`` as a tool; ``b`` hands
    off to ``c``, whose tool needs approval. ``outer``'s run can pause, ``shout`` (a
    step) cannot; ``orphan`` is reached by no edge and ``whisper`` has no exit."""
    c = ss.Agent(name="c", instructions="c", tools=[refund])
    b = ss.Agent(name="b", instructions="b", handoffs=[c])
    outer = ss.Agent(name="outer", instructions="o", tools=[b.as_tool("ask_b", "Ask b")])
    orphan = ss.Agent(name="orphan", instructions="x")
    flow: list[Any] = [ss.then(outer, shout), ss.then(shout, ss.END)]
    if broken:
        flow.append(ss.then(orphan, whisper))
    return ss.Workflow(name="np", entry=outer, agents=[outer, b, c, orphan], flow=flow)


def _lines(scene: Scene) -> dict[str, tuple[str, ...]]:
    return {n.title: n.lines for n in scene.nodes}


def _agree(wf: ss.Workflow) -> dict[str, FlowFacts]:
    """Check every stage against the stored facts; return them."""
    ir = lower(wf.to_spec())
    assert ir.flow is not None
    stored = {n.name: n.facts for n in ir.flow.nodes}
    graph = wf.graph()
    assert graph.flow_facts() == stored  # the analyzer's and the diagram's pass is lower's
    codes = {(d.code, n) for d in wf.check().diagnostics for n in stored
             if d.code in ("SW707", "SW708") and f"flow node {n!r}" in d.message}
    each = {e.each for e in wf.to_spec().flow or () if e.each is not None}
    assert {n for c, n in codes if c == "SW707"} == {n for n, f in stored.items()
                                                    if not f.reachable}
    assert {n for c, n in codes if c == "SW708"} == {n for n, f in stored.items()
                                                    if not f.can_end and n not in each}
    machine = build_flow_machine_scene(ir)
    ids = {n.id: n.title for n in machine.nodes}
    paused = {ids[e.source] for e in machine.edges if e.target == PAUSED_ID}
    assert paused == {n for n, f in stored.items() if f.can_pause}
    for view in (_lines(machine), _lines(build_flow_scene(graph))):
        for name, facts in stored.items():
            assert ("unreachable from the entry" in view[name]) == (not facts.reachable)
            assert ("no run from here can end" in view[name]) == (not facts.can_end)
    return stored


def test_a_nested_handoffs_approval_pauses_the_flow_node_in_every_stage() -> None:
    facts = _agree(_nested_pause_flow(broken=True))
    assert facts == {
        "outer": FlowFacts(reachable=True, can_end=True, can_pause=True),
        "shout": FlowFacts(reachable=True, can_end=True, can_pause=False),
        "orphan": FlowFacts(reachable=False, can_end=False, can_pause=False),
        "whisper": FlowFacts(reachable=False, can_end=False, can_pause=False),
    }
    # and the run pauses there: ask_b -> transfer_to_c -> refund waits for a human
    wf = _nested_pause_flow(broken=False)
    assert _agree(wf)["outer"].can_pause
    model = ScriptedModel([
        [function_call("ask_b", {"input": "refund 1"})],
        [function_call("transfer_to_c", {})],
        [function_call("refund", {"order_id": 1})],
    ])
    result = wf.compile().run_sync("refund order 1", model=model)
    assert [i.name for i in result.interruptions] == ["refund"]
    state = result.to_state()
    state.approve(result.interruptions[0])
    done = wf.compile().run_sync(state, model=ScriptedModel([
        [assistant_message("c done")], [assistant_message("outer answer")]]))
    assert done.final_output == Shout(text="OUTER ANSWER")


def test_a_fan_outs_each_can_end_through_its_join() -> None:
    class Items(BaseModel):
        items: list[str]

    planner = ss.Agent("planner", "p", output_type=Items)
    worker = ss.Agent("worker", "w", tools=[refund])
    writer = ss.Agent("writer", "x")
    wf = ss.Workflow("fan", planner, flow=[
        ss.fan_out(planner, over="items", each=worker, then=writer, max_items=3),
        ss.then(writer, ss.END),
    ])
    facts = _agree(wf)
    assert facts["worker"] == FlowFacts(reachable=True, can_end=True, can_pause=True)
    assert not facts["planner"].can_pause and not facts["writer"].can_pause
    # RunAgain by the rule the agent machine view uses: a typed answer that does not
    # parse (planner), tools (worker); a text agent with no tools never runs again
    ir = lower(wf.to_spec())
    scene = build_flow_machine_scene(ir)
    names = {n.id: n.title for n in scene.nodes}
    loops = {names[e.source] for e in scene.edges if e.kind == "run_again"}
    assert loops == {s.agent for s in ir.states if runs_again(s)} == {"planner", "worker"}


_NODES = ["n0", "n1", "n2", "n3"]


@st.composite
def _flows(draw: st.DrawFn) -> ss.Workflow:
    """Four agent nodes, each with a then exit (or none) to a node or END, some with an
    approval tool, some handing off to an agent that has one."""
    gate = ss.Agent("gate", "g", tools=[refund])
    agents = {n: ss.Agent(n, n, tools=[refund] if draw(st.booleans()) else [],
                          handoffs=[gate] if draw(st.booleans()) else [])
              for n in _NODES}
    targets = st.sampled_from([*_NODES, None])
    flow: list[Any] = []
    for name in _NODES:
        if draw(st.booleans()):
            t = draw(targets)
            flow.append(ss.then(agents[name], ss.END if t is None else agents[t],
                                max_uses=2))
    return ss.Workflow("random", agents["n0"], agents=[*agents.values(), gate], flow=flow)


@settings(max_examples=60, deadline=None)
@given(_flows())
def test_random_flows_every_stage_says_what_the_facts_say(wf: ss.Workflow) -> None:
    facts = _agree(wf)
    # the facts themselves, against a brute-force walk of every path
    spec = wf.to_spec()
    succ = {e.source: [t for t in e.targets()] for e in spec.flow or ()}
    for name, f in facts.items():
        walked = {name}
        for _ in range(len(facts)):
            walked |= {t for n in walked for t in succ.get(n, []) if t is not None}
        ends = any(None in succ.get(n, []) for n in walked)
        assert f.can_end == ends
        entry_walk = {"n0"}
        for _ in range(len(facts)):
            entry_walk |= {t for n in entry_walk for t in succ.get(n, []) if t is not None}
        assert f.reachable == (name in entry_walk)
        agent = wf.graph().agent(name)
        assert f.can_pause == bool(agent.tools or agent.handoffs)


@pytest.mark.parametrize("approve_b", [False, True])
def test_a_step_never_pauses_and_an_agent_without_approvals_never_does(
    approve_b: bool,
) -> None:
    b = ss.Agent(name="b", instructions="b", tools=[refund] if approve_b else [])
    wf = ss.Workflow(name="s", entry=b, flow=[ss.then(b, shout), ss.then(shout, ss.END)])
    facts = _agree(wf)
    assert facts["b"].can_pause is approve_b
    assert facts["shout"].can_pause is False
    assert list(itertools.chain(facts)) == ["b", "shout"]
