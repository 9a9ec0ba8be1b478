"""Large graphs: no recursion-limit failures on long chains, and shared passes run once
(timings live in bench/bench_analysis.py, never in tests)."""

from __future__ import annotations

import sys

import pytest

import stepswitch as ss
from stepswitch.analysis import _index, analyze
from stepswitch.graph.spec import AgentName, AgentSpec, HandoffSpec, Location, WorkflowSpec
from stepswitch.graph.workflow_graph import WorkflowGraph


def _chain_spec(n: int, *, close: bool) -> WorkflowSpec:
    loc = Location(file="gen.py", line=1)
    agents = []
    for i in range(n):
        target = i + 1 if i + 1 < n else (0 if close else None)
        handoffs: tuple[HandoffSpec, ...] = ()
        if target is not None:
            handoffs = (HandoffSpec(target=AgentName(f"a{target}"), tool_name=f"to_a{target}",
                                    description="", location=loc),)
        agents.append(AgentSpec(name=AgentName(f"a{i}"), handoffs=handoffs, location=loc))
    return WorkflowSpec(name="chain", entry=AgentName("a0"), agents=tuple(agents),
                        max_turns=None, location=loc)


def test_a_chain_far_deeper_than_the_recursion_limit() -> None:
    n = sys.getrecursionlimit() * 3
    report = analyze(WorkflowGraph(_chain_spec(n, close=True)))
    (cycle,) = [d for d in report.diagnostics if d.code == "SW201"]
    assert cycle.message.startswith("handoff cycle a0 → a1 → a2")
    assert "unbounded" in next(d.message for d in report.diagnostics if d.code == "SW203")


def test_components_are_computed_once_per_distinct_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    real = _index.strongly_connected  # type: ignore[attr-defined]

    def counting(succ: list[list[int]]) -> tuple[list[list[int]], list[int]]:
        calls.append(len(succ))
        return real(succ)

    monkeypatch.setattr(_index, "strongly_connected", counting)
    # Handoffs only, no budgets, no agent tools: the four graphs the rules read coincide.
    b = ss.Agent("b", "B.", handoffs=["a"])
    a = ss.Agent("a", "A.", handoffs=[b])
    ss.Workflow("same", a, [a, b]).check()
    assert len(calls) == 1
    calls.clear()
    # A budget, an agent tool with max_depth and one without: four distinct graphs.
    helper = ss.Agent("helper", "Help.", tools=[ss.agent_tool("main", "back", "B", max_depth=2)])
    main = ss.Agent("main", "Main.", tools=[helper.as_tool("ask", "A")],
                    handoffs=[ss.handoff("main", max_uses=1)])
    ss.Workflow("w", main, [main, helper]).check()
    assert len(calls) == 4
