"""The typed graph: handoffs by object and by name, cycles, agent tools, dangling edges."""

from __future__ import annotations

import networkx as nx
import pytest

import stepswitch as ss
from graphs import support as support_module


def test_support_graph_edges() -> None:
    g = support_module.support.graph()
    assert g.entry == "triage"
    assert g.agent_names() == ("triage", "refund", "researcher")
    edges = [(e.source, e.target, e.kind, e.tool_name, e.max_uses) for e in g.edges()]
    assert edges == [
        ("triage", "refund", "handoff", "transfer_to_refund", None),
        ("triage", "researcher", "agent_tool", "research", None),
        ("refund", "triage", "handoff", "transfer_to_triage", 2),
    ]
    assert g.edges().__next__().spec_path == "agents.triage.handoffs[0]"


def test_handoffs_by_name_and_object_make_the_same_graph() -> None:
    b1 = ss.Agent(name="b")
    by_object = ss.Workflow(name="w", entry=ss.Agent(name="a", handoffs=[b1]), agents=[b1])
    b2 = ss.Agent(name="b")
    by_name = ss.Workflow(name="w", entry=ss.Agent(name="a", handoffs=["b"]), agents=[b2])
    assert [(e.source, e.target) for e in by_object.graph().edges()] == [("a", "b")]
    assert [(e.source, e.target) for e in by_name.graph().edges()] == [("a", "b")]


def test_cycles_are_graph_structure_not_errors() -> None:
    a = ss.Agent(name="a", handoffs=["b"])
    b = ss.Agent(name="b", handoffs=["a", "b"])
    g = ss.Workflow(name="w", entry=a, agents=[a, b]).graph()
    sccs = list(nx.strongly_connected_components(g.subgraph("handoff")))
    assert {"a", "b"} in [set(c) for c in sccs]
    assert g.successors("b") == ("a", "b")


def test_agent_tool_recursion_is_visible() -> None:
    a = ss.Agent(name="a", tools=[ss.agent_tool("b", "ask_b", "")])
    b = ss.Agent(name="b", tools=[a.as_tool("ask_a", "")])
    g = ss.Workflow(name="w", entry=a, agents=[a, b]).graph()
    assert [(e.source, e.target) for e in g.edges("agent_tool")] == [("a", "b"), ("b", "a")]
    assert nx.is_directed_acyclic_graph(g.subgraph("agent_tool")) is False


def test_dangling_edges_are_kept_aside() -> None:
    a = ss.Agent(name="a", handoffs=["ghost"], tools=[ss.agent_tool("spirit", "ask", "")])
    g = ss.Workflow(name="w", entry=a).graph()
    assert list(g.edges()) == []
    assert [(e.target, e.spec_path) for e in g.dangling] == [
        ("ghost", "agents.a.handoffs[0]"),
        ("spirit", "agents.a.agent_tools[0]"),
    ]


def test_reachability_and_unknown_entry() -> None:
    a = ss.Agent(name="a", handoffs=["b"])
    b = ss.Agent(name="b")
    lonely = ss.Agent(name="lonely")
    g = ss.Workflow(name="w", entry=a, agents=[a, b, lonely]).graph()
    assert g.reachable() == {"a", "b"}
    g2 = ss.Workflow(name="w", entry="nope", agents=[a, b]).graph()
    assert g2.entry is None
    assert g2.reachable() == frozenset()


def test_graph_is_frozen() -> None:
    g = support_module.support.graph()
    with pytest.raises(nx.NetworkXError):
        g.nx.add_node("intruder")


def test_duplicate_names_keep_the_first_in_the_graph() -> None:
    first = ss.Agent(name="a", instructions="first")
    second = ss.Agent(name="a", instructions="second")
    g = ss.Workflow(name="w", entry=first, agents=[first, second]).graph()
    assert len(g) == 1
    assert g.agent("a").instructions == "first"
    assert len(g.spec.agents) == 2


def test_the_summary_counts_an_edge_to_no_agent_and_says_so() -> None:
    b = ss.Agent(name="b")
    a = ss.Agent(name="a", handoffs=[b, "nobody"])
    summary = ss.Workflow(name="w", entry=a, agents=[a, b]).graph().summary()
    assert "2 handoff(s) (1 to no agent)" in summary, summary
    assert "0 agent tool(s)" in summary
    assert "2 handoff(s), 1 agent tool(s)," in support_module.support.graph().summary()
