"""The scene: what every format draws, built once from the workflow graph."""

from __future__ import annotations

from pydantic import BaseModel

import stepswitch as ss
from graphs.support import support
from stepswitch.render.scene import END_ID, START_ID, Scene, SceneEdge, SceneNode, build_scene
from tests.render.reports import report


class Answer(BaseModel):
    text: str


@ss.function_tool
def ping(x: int) -> str:
    """Ping."""
    return str(x)


@ss.function_tool(needs_approval=True)
def wipe(x: int) -> str:
    """Wipe."""
    return str(x)


def _scene(wf: ss.Workflow, **kwargs: object) -> Scene:
    return build_scene(wf.graph(), **kwargs)  # type: ignore[arg-type]


def _edges(scene: Scene, kind: str) -> list[SceneEdge]:
    return [e for e in scene.edges if e.kind == kind]


def _ids(scene: Scene) -> dict[str, str]:
    return {n.title: n.id for n in scene.nodes if n.kind == "agent"}


def test_support_scene_has_start_agents_and_end_in_declaration_order() -> None:
    scene = _scene(support)
    assert [n.id for n in scene.nodes] == [START_ID, "a0", "a1", "a2", END_ID]
    assert [n.title for n in scene.nodes if n.kind == "agent"] == ["triage", "refund", "researcher"]
    entry = [n for n in scene.nodes if n.entry]
    assert [n.title for n in entry] == ["triage"]
    assert _edges(scene, "start") == [SceneEdge(START_ID, "a0", "start")]


def test_every_agent_that_can_answer_reaches_end_not_only_leaves() -> None:
    scene = _scene(support)
    # triage and refund both hand off, yet either can give the final answer.
    assert {e.source for e in _edges(scene, "final")} == {"a0", "a1"}


def test_agent_only_run_as_a_tool_returns_instead_of_ending_the_run() -> None:
    scene = _scene(support)
    researcher = next(n for n in scene.nodes if n.title == "researcher")
    assert researcher.nested_only
    assert "nested run: returns to caller" in researcher.lines
    assert all(e.source != researcher.id for e in _edges(scene, "final"))


def test_handoff_label_has_tool_name_and_budget() -> None:
    labels = {(e.source, e.target): e.label for e in _edges(_scene(support), "handoff")}
    assert labels == {("a0", "a1"): "transfer_to_refund", ("a1", "a0"): "transfer_to_triage ≤2"}


def test_agent_tool_edge_is_its_own_kind_with_tool_name_and_limits() -> None:
    helper = ss.Agent(name="helper", instructions="h")
    boss = ss.Agent(
        name="boss",
        instructions="b",
        tools=[helper.as_tool("ask", "Ask", max_turns=3, max_depth=2, needs_approval=True)],
    )
    scene = _scene(ss.Workflow(name="w", entry=boss, agents=[boss, helper]))
    (edge,) = _edges(scene, "agent_tool")
    assert (edge.source, edge.target) == ("a0", "a1")
    assert edge.label == "ask turns ≤3 depth ≤2 [approval]"
    assert edge.pause


def test_function_tools_listed_in_agent_with_approval_marked() -> None:
    lines = {n.title: n.lines for n in _scene(support).nodes}
    assert "tool: lookup_order" in lines["triage"]
    assert "tool: process_refund [approval]" in lines["refund"]
    assert "output: Findings" in lines["researcher"]


def test_tools_as_nodes_are_shared_and_approval_tools_are_pause_points() -> None:
    a = ss.Agent(name="a", instructions="x", tools=[ping, wipe], handoffs=["b"])
    b = ss.Agent(name="b", instructions="x", tools=[ping])
    scene = _scene(ss.Workflow(name="w", entry=a, agents=[a, b]), tools=True)
    tools = [n for n in scene.nodes if n.kind == "tool"]
    assert [(n.id, n.title, n.pause) for n in tools] == [
        ("t0", "ping", False),
        ("t1", "wipe [approval]", True),
    ]
    assert [(e.source, e.target) for e in _edges(scene, "tool")] == [
        ("a0", "t0"), ("a0", "t1"), ("a1", "t0"),
    ]
    # Tools drawn as nodes are not listed again inside the agent.
    assert not any(line.startswith("tool:") for n in scene.nodes for line in n.lines)


def test_a_forced_tool_call_forces_the_first_call_only_so_the_agent_may_then_answer() -> None:
    # as the run loop does (reset_tool_choice): after a tool call it may answer
    forced = ss.ModelSettings(tool_choice="required")
    looper = ss.Agent(name="looper", instructions="x", tools=[ping], model_settings=forced)
    stopper = ss.Agent(name="stopper", instructions="x", tools=[ping], model_settings=forced,
                       tool_use_behavior="stop_on_first_tool")
    named = ss.Agent(name="named", instructions="x", tools=[ping],
                     model_settings=ss.ModelSettings(tool_choice="ping"),
                     tool_use_behavior=ss.StopAtTools(["ping"]))
    wrong_stop = ss.Agent(name="wrong_stop", instructions="x", tools=[ping], model_settings=forced,
                          tool_use_behavior=ss.StopAtTools(["not_a_tool"]))
    silent = ss.Agent(name="silent", instructions="x", tools=[ping],
                      model_settings=ss.ModelSettings(tool_choice="none"))
    both = ss.Agent(name="both", instructions="x", tools=[ping],
                    tool_use_behavior="stop_on_first_tool")
    agents = [looper, stopper, named, wrong_stop, silent, both]
    entry = ss.Agent(name="entry", instructions="x", handoffs=list(agents))
    scene = _scene(ss.Workflow(name="w", entry=entry, agents=[entry, *agents]))
    ids = _ids(scene)
    finals = {e.source: e.label for e in _edges(scene, "final")}
    assert finals[ids["looper"]] == ""
    assert finals[ids["wrong_stop"]] == ""  # it stops at no tool it has: it answers
    assert finals[ids["stopper"]] == "tool output"
    assert finals[ids["named"]] == "tool output"
    assert finals[ids["silent"]] == ""
    assert finals[ids["both"]] == "or tool output"
    lines = {n.title: n.lines for n in scene.nodes}
    assert "tool_choice: required" in lines["looper"]
    assert "stops on first tool" in lines["stopper"]
    assert "stops at: ping" in lines["named"]


def test_guardrails_and_output_type_are_shown() -> None:
    @ss.input_guardrail
    def no_spam(ctx: ss.RunContext[None], agent: ss.Agent, text: str) -> ss.GuardrailFunctionOutput:
        return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

    @ss.output_guardrail
    def polite(
        ctx: ss.RunContext[None], agent: ss.Agent, out: Answer
    ) -> ss.GuardrailFunctionOutput:
        return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

    a = ss.Agent(name="a", instructions="x", output_type=Answer, input_guardrails=[no_spam],
                 output_guardrails=[polite])
    (node,) = [n for n in _scene(ss.Workflow(name="w", entry=a, agents=[a])).nodes
               if n.kind == "agent"]
    assert node.lines == ("output: Answer", "guard in: no_spam", "guard out: polite")


def test_unknown_target_is_drawn_as_a_missing_node_not_dropped() -> None:
    a = ss.Agent(name="a", instructions="x", handoffs=["ghost"],
                 tools=[ss.agent_tool("ghost", "g", "G"), ss.agent_tool("phantom", "p", "P")])
    scene = _scene(ss.Workflow(name="w", entry=a, agents=[a]))
    missing = [(n.id, n.title) for n in scene.nodes if n.kind == "missing"]
    assert missing == [("m0", "? ghost"), ("m1", "? phantom")]
    assert [(e.kind, e.target) for e in scene.edges if e.target.startswith("m")] == [
        ("handoff", "m0"), ("agent_tool", "m0"), ("agent_tool", "m1"),
    ]


def test_scene_is_deterministic_across_separately_declared_workflows() -> None:
    def make() -> ss.Workflow:
        c = ss.Agent(name="c", instructions="x", tools=[ping])
        b = ss.Agent(name="b", instructions="x", handoffs=[c, ss.handoff("a", max_uses=1)])
        a = ss.Agent(name="a", instructions="x", handoffs=[b], tools=[c.as_tool("cc", "C"), wipe])
        return ss.Workflow(name="w", entry=a, agents=[a, b, c])

    assert _scene(make()) == _scene(make())
    assert _scene(make(), tools=True) == _scene(make(), tools=True)


def test_report_marks_land_on_the_elements_their_paths_name() -> None:
    rep = report(
        ("SW201", "warning", "unreachable", "agents.researcher"),
        ("SW302", "error", "cycle without budget", "agents.triage.handoffs[0]"),
        ("SW310", "error", "recursion", "agents.triage.agent_tools[0]"),
        ("SW401", "info", "pause point", "agents.refund.tools[0]"),
        ("SW100", "error", "no entry", "workflow"),
        ("SW999", "warning", "somewhere odd", "agents.nobody.handoffs[0]"),
    )
    scene = _scene(support, report=rep)
    nodes = {n.id: n for n in scene.nodes}
    assert [m.code for m in nodes["a2"].marks] == ["SW201"]
    assert nodes["a2"].severity == "warning"
    assert "warning SW201" in nodes["a2"].lines
    # The approval tool is listed inside refund, so refund carries its mark.
    assert [m.code for m in nodes["a1"].marks] == ["SW401"]
    assert "tool: process_refund [approval] [SW401]" in nodes["a1"].lines
    # Workflow-level and unplaceable diagnostics go on the start node: none is lost.
    assert [m.code for m in nodes[START_ID].marks] == ["SW100", "SW999"]
    assert nodes[START_ID].severity == "error"
    handoff = next(e for e in scene.edges if e.kind == "handoff" and e.source == "a0")
    assert handoff.label == "transfer_to_refund [SW302]"
    assert handoff.severity == "error"
    call = next(e for e in scene.edges if e.kind == "agent_tool")
    assert [m.code for m in call.marks] == ["SW310"]


def test_report_mark_on_tool_node_when_tools_are_drawn() -> None:
    rep = report(("SW401", "info", "pause point", "agents.refund.tools[0]"))
    scene = _scene(support, tools=True, report=rep)
    tool = next(n for n in scene.nodes if n.kind == "tool" and n.pause)
    assert [m.code for m in tool.marks] == ["SW401"]
    edge = next(e for e in scene.edges if e.kind == "tool" and e.target == tool.id)
    assert [m.code for m in edge.marks] == ["SW401"]
    refund = next(n for n in scene.nodes if n.title == "refund")
    assert refund.marks == ()


def test_report_paths_resolve_agent_names_with_dots_and_brackets() -> None:
    a = ss.Agent(name="team.lead", instructions="x", handoffs=["team.lead[2]"])
    b = ss.Agent(name="team.lead[2]", instructions="x")
    team = ss.Agent(name="team", instructions="x")
    wf = ss.Workflow(name="w", entry=a, agents=[a, b, team])
    rep = report(
        ("SW1", "error", "m", "agents.team.lead.handoffs[0]"),
        ("SW2", "warning", "m", "agents.team.lead[2]"),
        ("SW3", "warning", "m", "agents.team.lead[2].output_type"),
        ("SW4", "info", "m", "agents.team"),
    )
    scene = _scene(wf, report=rep)
    nodes = {n.title: n for n in scene.nodes}
    assert [m.code for m in nodes["team.lead[2]"].marks] == ["SW2", "SW3"]
    assert [m.code for m in nodes["team"].marks] == ["SW4"]
    assert nodes["team.lead"].marks == ()
    (edge,) = _edges(scene, "handoff")
    assert [m.code for m in edge.marks] == ["SW1"]


def test_paths_past_the_end_fall_back_to_the_agent_and_nothing_is_dropped() -> None:
    rep = report(
        ("SW1", "error", "m", "agents.triage.handoffs[7]"),
        ("SW2", "error", "m", "agents.triage.tools[3]"),
        ("SW3", "warning", "m", "agents.triage.handoffs[0].input_type"),
        ("SW4", "info", "m", ""),
    )
    scene = _scene(support, report=rep)
    elements: list[SceneNode | SceneEdge] = [*scene.nodes, *scene.edges]
    placed = sorted(m.code for element in elements for m in element.marks)
    assert placed == ["SW1", "SW2", "SW3", "SW4"]
    triage = next(n for n in scene.nodes if n.title == "triage")
    assert [m.code for m in triage.marks] == ["SW1", "SW2"]
    handoff = next(e for e in scene.edges if e.kind == "handoff" and e.source == triage.id)
    assert [m.code for m in handoff.marks] == ["SW3"]


def test_many_diagnostics_on_a_large_workflow_place_quickly() -> None:
    agents = [ss.Agent(name=f"agent.{i}", instructions="x") for i in range(3000)]
    wf = ss.Workflow(name="w", entry=agents[0], agents=agents)
    rep = report(*((f"SW{i}", "warning", "m", f"agents.agent.{i}") for i in range(3000)))
    scene = _scene(wf, report=rep)
    assert all(len(n.marks) == 1 for n in scene.nodes if n.kind == "agent")


def test_agent_reached_by_handoff_and_as_a_tool_can_end_the_run() -> None:
    helper = ss.Agent(name="helper", instructions="x")
    deep = ss.Agent(name="deep", instructions="x")  # handed to only inside a nested run
    inner = ss.Agent(name="inner", instructions="x", handoffs=[deep])
    boss = ss.Agent(name="boss", instructions="x", handoffs=[helper],
                    tools=[helper.as_tool("ask", "Ask"), inner.as_tool("dig", "Dig")])
    scene = _scene(ss.Workflow(name="w", entry=boss, agents=[boss, helper, inner, deep]))
    nested = {n.title for n in scene.nodes if n.nested_only}
    assert nested == {"inner", "deep"}
    ids = _ids(scene)
    assert {e.source for e in _edges(scene, "final")} == {ids["boss"], ids["helper"]}


def test_forced_tool_choice_only_stops_if_that_tool_stops() -> None:
    @ss.function_tool
    def other(x: int) -> str:
        """Other."""
        return str(x)

    picks_ping = ss.ModelSettings(tool_choice="ping")
    stops_other = ss.Agent(name="stops_other", instructions="x", tools=[ping, other],
                           model_settings=picks_ping,
                           tool_use_behavior=ss.StopAtTools(["other"]))
    stops_ping = ss.Agent(name="stops_ping", instructions="x", tools=[ping, other],
                          model_settings=picks_ping,
                          tool_use_behavior=ss.StopAtTools(["ping"]))
    no_tools = ss.Agent(name="no_tools", instructions="x", tools=[ping],
                        model_settings=ss.ModelSettings(tool_choice="none"),
                        tool_use_behavior="stop_on_first_tool")
    entry = ss.Agent(name="entry", instructions="x", handoffs=[stops_other, stops_ping, no_tools])
    scene = _scene(ss.Workflow(name="w", entry=entry,
                               agents=[entry, stops_other, stops_ping, no_tools]))
    finals = {e.source: e.label for e in _edges(scene, "final")}
    ids = _ids(scene)
    assert finals[ids["stops_other"]] == ""  # ping does not stop: it answers after it
    assert finals[ids["stops_ping"]] == "tool output"
    assert finals[ids["no_tools"]] == ""  # tool_choice none: it can only answer


def test_handoff_input_type_and_filter_and_extractor_are_labelled() -> None:
    class Reason(BaseModel):
        why: str

    def on_handoff(ctx: ss.RunContext[None], data: Reason) -> None:
        return None

    def keep_last(data: ss.HandoffInputData) -> ss.HandoffInputData:
        return data

    def first_line(result: object) -> str:
        return str(result).splitlines()[0]

    helper = ss.Agent(name="helper", instructions="x")
    b = ss.Agent(name="b", instructions="x")
    a = ss.Agent(
        name="a",
        instructions="x",
        handoffs=[ss.handoff(b, input_type=Reason, on_handoff=on_handoff,
                             input_filter=keep_last)],
        tools=[helper.as_tool("ask", "Ask", output_extractor=first_line)],
    )
    scene = _scene(ss.Workflow(name="w", entry=a, agents=[a, b, helper]))
    (handoff,) = _edges(scene, "handoff")
    assert handoff.label == "transfer_to_b input: Reason filter: keep_last"
    (call,) = _edges(scene, "agent_tool")
    assert call.label == "ask extract: first_line"


def test_mcp_tools_are_drawn_in_a_box_of_their_server() -> None:
    from tests.render.mcp_case import mcp_workflow

    scene = _scene(mcp_workflow, tools=True)
    titles = {g.id: g.title for g in scene.groups}
    assert list(titles.values()) == ["MCP server files (stdio)",
                                     "MCP server tickets (streamable http)"]
    boxed = {n.title: titles.get(n.group) for n in scene.nodes if n.kind == "tool"}
    assert boxed == {
        "lookup_order": None,  # a function tool is in no box
        "delete_file [approval]": "MCP server files (stdio)",
        "read_file": "MCP server files (stdio)",
        "create_ticket": "MCP server tickets (streamable http)",
    }
    # both agents list files: its tools are drawn once, with an edge from each agent
    by_id = {n.id: n.title for n in scene.nodes}
    users = sorted(by_id[e.source] for e in scene.edges
                   if e.kind == "tool" and by_id[e.target] == "read_file")
    assert users == ["clerk", "triage"]
    # listed inside the agent, each MCP tool names its server
    (clerk,) = [n for n in _scene(mcp_workflow).nodes if n.title == "clerk"]
    assert clerk.lines == ("mcp files: delete_file [approval]", "mcp files: read_file",
                           "mcp tickets: create_ticket")
    assert not _scene(mcp_workflow).groups


def test_the_mermaid_subgraphs_hold_the_servers_tools() -> None:
    from stepswitch.render import to_mermaid
    from tests.render.mcp_case import mcp_workflow
    from tests.render.mermaid_check import check, decode_label

    parsed = check(to_mermaid(mcp_workflow, tools=True))
    groups = {decode_label(title): [decode_label(parsed.nodes[i]) for i in ids]
              for title, ids in parsed.groups.values()}
    assert groups == {"MCP server files (stdio)": ["delete_file [approval]", "read_file"],
                      "MCP server tickets (streamable http)": ["create_ticket"]}
