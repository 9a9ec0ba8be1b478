from __future__ import annotations

import stepswitch as ss
from tests.analysis._cases import a, bad_name, lookup, wf


def _codes(w: ss.Workflow, code: str) -> list[ss.Diagnostic]:
    return [d for d in w.check().diagnostics if d.code == code]


def test_long_agent_name_makes_an_invalid_handoff_name() -> None:
    long = a("x" * 60)
    (d,) = _codes(wf("a", a(handoffs=[long])), "SW301")
    assert d.location.path == "agents.a.handoffs[0]" and "longer than 64" in d.message


def test_a_shared_invalid_tool_is_reported_once() -> None:
    w = wf("a", a(tools=[bad_name], handoffs=[a("b", tools=[bad_name])]))
    (d,) = _codes(w, "SW301")
    assert d.location.path == "agents.a.tools[0]"


def test_agent_tool_name_and_explicit_handoff_name_are_checked() -> None:
    w = wf("a", a(tools=[a("b").as_tool("bad name!", "B")],
                  handoffs=[ss.handoff(a("c"), tool_name="é")]))
    assert {d.location.path for d in _codes(w, "SW301")} == {
        "agents.a.agent_tools[0]", "agents.a.handoffs[0]"}


def test_collision_between_a_handoff_and_a_function_tool() -> None:
    w = wf("a", a(tools=[lookup], handoffs=[ss.handoff(a("b"), tool_name="lookup")]))
    (d,) = _codes(w, "SW302")
    assert d.location.path == "agents.a.handoffs[0]"
    assert "agents.a.tools[0]" in d.message


def test_normalised_names_collide_inside_one_agent() -> None:
    w = wf("a", a(handoffs=[a("Billing Agent"), a("billing-agent")]))
    assert _codes(w, "SW302") and _codes(w, "SW106")
