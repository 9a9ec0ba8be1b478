from __future__ import annotations

import stepswitch as ss
from tests.analysis._cases import a, wf


def _codes(w: ss.Workflow, code: str, **kw: object) -> list[ss.Diagnostic]:
    return [d for d in w.check(**kw).diagnostics if d.code == code]  # type: ignore[arg-type]


def test_cycle_is_named_in_order_once_per_component() -> None:
    c = a("c", handoffs=["a"])
    b = a("b", handoffs=[c])
    first = a("a", handoffs=[b])
    (d,) = _codes(wf(first, first, b, c), "SW201")
    assert "a → b → c → a" in d.message
    assert d.location.path == "agents.a.handoffs[0]"
    # a second cycle inside the same component is still one report
    c.handoffs.append("b")
    (d,) = _codes(wf(first, first, b, c), "SW201")
    assert "(one of several cycles among 3 agents)" in d.message


def test_self_handoff_is_a_cycle() -> None:
    (d,) = _codes(wf("a", a(handoffs=["a"])), "SW201")
    assert "a → a" in d.message


def test_a_budget_on_one_edge_does_not_hide_another_unbudgeted_cycle() -> None:
    # a ⇄ b (budgeted back-edge) and b ⇄ c (no budget): the b-c cycle is still unbounded.
    c = a("c", handoffs=["b"])
    b = a("b", handoffs=[ss.handoff("a", max_uses=1), c])
    w = wf(a("a", handoffs=[b]), b, c)
    (d,) = _codes(w, "SW201")
    assert "b → c → b" in d.message


def test_two_separate_cycles_are_two_reports() -> None:
    w = wf("a", a(handoffs=["a", "b"]), a("b", handoffs=["b"]))
    assert len(_codes(w, "SW201")) == 2


def test_recursion_through_a_handoff_inside_the_nested_run() -> None:
    # a calls b as a tool; b hands off to c; c calls a as a tool.
    c = a("c", tools=[ss.agent_tool("a", "back", "Back")])
    b = a("b", handoffs=[c])
    top = a("a", tools=[b.as_tool("ask_b", "B")])
    w = wf(top, top, b, c)
    (d,) = _codes(w, "SW202")
    assert "a calls b hands off to c calls a" in d.message
    assert not _codes(w, "SW203")  # unbounded recursion: no number


def test_direct_self_recursion() -> None:
    (d,) = _codes(wf("a", a(tools=[ss.agent_tool("a", "me", "Me")])), "SW202")
    assert d.location.path == "agents.a.agent_tools[0]"


def _bound(w: ss.Workflow, **kw: object) -> int | None:
    report = w.check(**kw)  # type: ignore[arg-type]
    return report.model_call_bound


def test_bound_of_a_single_agent_is_max_turns() -> None:
    assert _bound(wf("a", a(), max_turns=7)) == 7


def test_bound_sums_agent_tools_and_uses_their_max_turns() -> None:
    h1, h2 = a("h1"), a("h2")
    main = a("main", tools=[h1.as_tool("one", "1"), h2.as_tool("two", "2", max_turns=3)])
    # per turn: 1 + 10·1 + 3·1 = 14
    assert _bound(wf(main, max_turns=10)) == 140


def test_sequential_tool_calls_take_the_most_expensive_tool() -> None:
    h1, h2 = a("h1"), a("h2")
    main = a("main", tools=[h1.as_tool("one", "1"), h2.as_tool("two", "2", max_turns=3)],
             model_settings=ss.ModelSettings(parallel_tool_calls=False))
    assert _bound(wf(main, max_turns=10)) == 10 * (1 + 10)


def test_bound_takes_the_worst_agent_reachable_by_handoff() -> None:
    helper = a("helper")
    rich = a("rich", tools=[helper.as_tool("h", "H", max_turns=4)])
    w = wf(a("poor", handoffs=[rich]), max_turns=5)
    assert _bound(w) == 5 * (1 + 4)


def test_nested_handoffs_share_the_nested_budget() -> None:
    leaf = a("leaf")
    inner = a("inner", handoffs=[leaf])
    w = wf(a("top", tools=[inner.as_tool("in", "In", max_turns=2)]), max_turns=3)
    assert _bound(w) == 3 * (1 + 2)


def test_bounded_recursion_is_unrolled_by_depth() -> None:
    me = ss.agent_tool("a", "me", "Me", max_turns=2, max_depth=2)
    # depth 2: a makes 2 calls; depth 1: 2·(1+2)=6; top: 3·(1+6)=21
    assert _bound(wf("a", a(tools=[me]), max_turns=3)) == 21
    w = wf("a", a(tools=[ss.agent_tool("a", "me", "Me", max_turns=2, max_depth=5)]),
           max_turns=3, max_depth=1)
    assert _bound(w) == 3 * (1 + 2)  # the workflow's max_depth wins


def test_unbounded_max_turns_is_reported_and_fails_a_limit() -> None:
    w = wf("a", a(), max_turns=None)
    (info,) = _codes(w, "SW203")
    assert "unbounded" in info.message and "max_turns=None" in info.message
    assert _codes(w, "SW204", max_model_calls=100)


def test_limit_from_the_call_overrides_the_workflow() -> None:
    w = wf("a", a(), max_turns=10, max_model_calls=5)
    assert _codes(w, "SW204")
    assert not _codes(w, "SW204", max_model_calls=10)
    (d,) = _codes(w, "SW204", max_model_calls=9)
    assert "exceeds the limit max_model_calls=9" in d.message


def test_huge_bounds_are_capped_not_computed_exactly() -> None:
    agents = [a(f"n{i}") for i in range(40)]
    for i in range(39):
        agents[i].tools.append(agents[i + 1].as_tool(f"t{i}", "T", max_turns=10))
    (d,) = _codes(wf(agents[0], *agents), "SW203")
    assert "more than 1e+15" in d.message


def test_a_forced_tool_call_costs_a_second_call_before_the_answer() -> None:
    from tests.analysis._cases import lookup

    forced = ss.ModelSettings(tool_choice="required")
    (d,) = _codes(wf("a", a(tools=[lookup], model_settings=forced), max_turns=1), "SW205")
    assert "needs 2 model calls" in d.message
    stops = a(tools=[lookup], model_settings=forced, tool_use_behavior="stop_on_first_tool")
    assert not _codes(wf("a", stops, max_turns=1), "SW205")


def test_shortest_run_needs_more_turns_than_allowed() -> None:
    forced = ss.ModelSettings(tool_choice="required")
    c = a("c")
    b = a("b", handoffs=[c], model_settings=forced)
    w = wf(a("x", handoffs=[b, c], model_settings=forced), b, c, max_turns=1)
    (d,) = _codes(w, "SW205")
    assert "needs 2 model calls" in d.message  # x → c is the shortest
