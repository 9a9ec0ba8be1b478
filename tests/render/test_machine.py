"""The machine view: states and Final / Handoff / Interruption / RunAgain transitions,
drawn from the compiler's IR."""

from __future__ import annotations

import stepswitch as ss
from graphs.support import support
from stepswitch.compiler import lower
from stepswitch.render.machine import build_machine_scene
from stepswitch.render.scene import END_ID, PAUSED_ID, START_ID, Scene
from tests.render.cases import SUPPORT_MACHINE_REPORT


@ss.function_tool
def ping(x: int) -> str:
    """Ping."""
    return str(x)


def _scene(wf: ss.Workflow) -> Scene:
    return build_machine_scene(lower(wf.to_spec()))


def _transitions(scene: Scene) -> set[tuple[str, str, str, str]]:
    return {(e.source, e.kind, e.target, e.label) for e in scene.edges}


def test_support_machine_has_one_state_per_agent_and_every_step() -> None:
    scene = _scene(support)
    assert scene.view == "machine"
    assert [n.id for n in scene.nodes] == [START_ID, "a0", "a1", "a2", PAUSED_ID, END_ID]
    assert _transitions(scene) == {
        (START_ID, "start", "a0", ""),
        ("a0", "handoff", "a1", "Handoff: transfer_to_refund"),
        ("a1", "handoff", "a0", "Handoff: transfer_to_triage ≤2"),
        ("a0", "agent_tool", "a2", "research: nested run"),
        ("a0", "run_again", "a0", "RunAgain"),
        ("a1", "run_again", "a1", "RunAgain"),
        ("a2", "run_again", "a2", "RunAgain"),  # a typed answer that does not parse
        ("a1", "interrupt", PAUSED_ID, "Interruption: process_refund"),
        (PAUSED_ID, "resume", "a1", "resume"),
        ("a0", "final", END_ID, "Final: text"),
        ("a1", "final", END_ID, "Final: text"),
    }
    start = scene.nodes[0]
    assert start.lines == ("max_turns: 10", "max_depth: 8")


def test_states_list_output_and_tools() -> None:
    lines = {n.title: n.lines for n in _scene(support).nodes}
    assert lines["triage"] == ("output: text", "tool: lookup_order")
    assert lines["refund"] == ("output: text", "tool: process_refund [approval]")
    assert lines["researcher"] == ("output: Findings", "nested run: Final returns to caller")


def test_final_edges_follow_tool_choice_and_tool_use_rules() -> None:
    forced = ss.ModelSettings(tool_choice="required")
    looper = ss.Agent(name="looper", instructions="x", tools=[ping], model_settings=forced)
    stopper = ss.Agent(name="stopper", instructions="x", tools=[ping], model_settings=forced,
                       tool_use_behavior=ss.StopAtTools(["ping"]))
    both = ss.Agent(name="both", instructions="x", tools=[ping],
                    tool_use_behavior="stop_on_first_tool")
    entry = ss.Agent(name="entry", instructions="x", handoffs=[looper, stopper, both])
    wf = ss.Workflow(name="w", entry=entry, agents=[entry, looper, stopper, both])
    ir = lower(wf.to_spec())
    assert [(s.facts.answers, s.facts.stops) for s in ir.states] == [
        (True, False), (True, False), (False, True), (True, True),
    ]
    finals = {(e.source, e.label) for e in build_machine_scene(ir).edges if e.kind == "final"}
    assert finals == {
        ("a0", "Final: text"),
        ("a1", "Final: text"),  # the forced call is the first only: then it may answer
        ("a2", "Final: tool output"),
        ("a3", "Final: text"),
        ("a3", "Final: tool output"),
    }


def test_agent_with_no_tools_and_text_output_never_runs_again() -> None:
    a = ss.Agent(name="a", instructions="x")
    scene = _scene(ss.Workflow(name="w", entry=a, agents=[a]))
    assert not [e for e in scene.edges if e.kind == "run_again"]
    assert PAUSED_ID not in {n.id for n in scene.nodes}


def test_report_marks_land_on_states_and_transitions() -> None:
    scene = build_machine_scene(lower(support.to_spec()), report=SUPPORT_MACHINE_REPORT)
    nodes = {n.title: n for n in scene.nodes}
    assert [m.code for m in nodes["refund"].marks] == ["SW501"]
    # A function tool's mark goes on the state that lists it.
    assert [m.code for m in nodes["triage"].marks] == ["SW402"]
    by_label = {e.label: e for e in scene.edges}
    assert by_label["Handoff: transfer_to_triage ≤2 [SW201]"].severity == "error"
    assert by_label["research: nested run [SW202]"].severity == "error"


def test_a_flows_moves_to_the_next_node_are_flow_edges_not_handoffs() -> None:
    from graphs.story import story
    from stepswitch.render import to_mermaid

    text = to_mermaid(story, view="machine")
    assert '"Handoff' not in text  # story's agents hand off to no one
    assert text.count('-->|"then"|') == 3  # outline → keep, keep → checker, writer → story
    assert '-->|"Final"|' in text
