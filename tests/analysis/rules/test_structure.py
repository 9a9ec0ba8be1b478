from __future__ import annotations

import stepswitch as ss
from tests.analysis._cases import FORCED, a, lookup, wf


def _codes(w: ss.Workflow, code: str) -> list[ss.Diagnostic]:
    return [d for d in w.check().diagnostics if d.code == code]


def test_duplicate_is_reported_at_the_second_declaration() -> None:
    first = a("dup")
    second = a("dup")
    (d,) = _codes(wf(first, first, second), "SW105")
    assert d.location.line == second.site.line
    assert f":{first.site.line}" in d.message


def test_dangling_edges_are_located_on_the_edge() -> None:
    w = wf("a", a(handoffs=["b", "ghost"], tools=[ss.agent_tool("phantom", "p", "P")]), a("b"))
    (h,) = _codes(w, "SW103")
    (t,) = _codes(w, "SW104")
    assert h.location.path == "agents.a.handoffs[1]" and "'ghost'" in h.message
    assert t.location.path == "agents.a.agent_tools[0]" and "'phantom'" in t.message


def test_unreachable_needs_an_entry_and_follows_agent_tools() -> None:
    helper = a("helper")
    assert not _codes(wf("a", a(tools=[helper.as_tool("h", "H")])), "SW107")
    (d,) = _codes(wf("a", a(), a("lonely")), "SW107")
    assert d.location.path == "agents.lonely"
    assert not _codes(wf(None, a(), a("lonely")), "SW107")


def test_traps_propagate_back_through_handoffs_only() -> None:
    trap = a("trap", tools=[lookup], model_settings=FORCED)
    feeder = a("feeder", handoffs=[trap], model_settings=FORCED)
    free = a("free", handoffs=[trap])  # can answer in text: not a trap
    helper_caller = a("caller", tools=[trap.as_tool("t", "T")], model_settings=FORCED)
    w = wf(free, free, feeder, helper_caller)
    trapped = {d.location.path for d in _codes(w, "SW108")}
    assert trapped == {"agents.trap", "agents.feeder", "agents.caller"}


def test_a_forced_agent_escapes_through_a_handoff_to_an_ender() -> None:
    out = a("out")
    w = wf("a", a(tools=[lookup], handoffs=[out], model_settings=FORCED), out)
    assert not _codes(w, "SW108")


def test_stop_at_tools_must_name_one_of_its_function_tools() -> None:
    wrong = a(tools=[lookup], model_settings=FORCED, tool_use_behavior=ss.StopAtTools(["other"]))
    right = a(tools=[lookup], model_settings=FORCED, tool_use_behavior=ss.StopAtTools(["lookup"]))
    assert _codes(wf("a", wrong), "SW108")
    assert not _codes(wf("a", right), "SW108")


def test_forcing_one_handoff_tool_follows_only_that_handoff() -> None:
    stuck = a("stuck", tools=[lookup], model_settings=FORCED)
    out = a("out")
    forced_to_stuck = ss.ModelSettings(tool_choice="transfer_to_stuck")
    w = wf("a", a(handoffs=[stuck, out], model_settings=forced_to_stuck), stuck, out)
    assert {d.location.path for d in _codes(w, "SW108")} == {"agents.a", "agents.stuck"}


def test_unknown_ignore_codes_are_reported_for_workflow_and_agent() -> None:
    w = ss.Workflow("w", a(ignore=["XX1"]), ignore=["SW9"])
    assert {d.location.path for d in _codes(w, "SW109")} == {"workflow", "agents.a"}
