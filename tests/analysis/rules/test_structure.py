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
    trap = a("trap", model_settings=FORCED)  # forced, nothing to call, nowhere to go
    feeder = a("feeder", handoffs=[trap], model_settings=FORCED)
    free = a("free", handoffs=[trap])  # can answer in text: not a trap
    # Forced, but it has an agent tool: after calling it, tool_choice resets.
    caller = a("caller", tools=[trap.as_tool("t", "T")], model_settings=FORCED)
    w = wf(free, free, feeder, caller)
    trapped = {d.location.path: d.message for d in _codes(w, "SW108")}
    assert set(trapped) == {"agents.trap", "agents.feeder"}
    assert "has no handoff either" in trapped["agents.trap"]
    assert "no agent it can hand off to ('trap')" in trapped["agents.feeder"]


def test_a_forced_agent_escapes_through_a_handoff_to_an_ender() -> None:
    out = a("out")
    w = wf("a", a(handoffs=[out], model_settings=FORCED), out)
    assert not _codes(w, "SW108")


def test_a_forced_tool_call_is_followed_by_a_free_turn() -> None:
    # The run loop resets tool_choice once the agent used a tool (as the Agents SDK).
    assert not _codes(wf("a", a(tools=[lookup], model_settings=FORCED)), "SW108")


def test_forcing_a_tool_the_agent_does_not_offer_is_a_trap() -> None:
    typo = ss.ModelSettings(tool_choice="lookup_order")
    (d,) = _codes(wf("a", a(tools=[lookup], model_settings=typo)), "SW108")
    assert "'lookup_order'" in d.message and "does not offer" in d.message


def test_forcing_one_handoff_tool_follows_only_that_handoff() -> None:
    stuck = a("stuck", model_settings=FORCED)
    out = a("out")
    forced_to_stuck = ss.ModelSettings(tool_choice="transfer_to_stuck")
    w = wf("a", a(handoffs=[stuck, out], model_settings=forced_to_stuck), stuck, out)
    assert {d.location.path for d in _codes(w, "SW108")} == {"agents.a", "agents.stuck"}


def test_unknown_ignore_codes_are_reported_for_workflow_and_agent() -> None:
    w = ss.Workflow("w", a(ignore=["XX1"]), ignore=["SW0"])
    assert {d.location.path for d in _codes(w, "SW109")} == {"workflow", "agents.a"}


def test_a_misspelt_agent_name_gets_the_closest_name() -> None:
    w = wf("a", a(handoffs=["refnds"], tools=[ss.agent_tool("bilingg", "b", "B")]),
           a("refunds"), a("billing"))
    (h,) = _codes(w, "SW103")
    (t,) = _codes(w, "SW104")
    assert h.message.endswith("(did you mean 'refunds'?)")
    assert t.message.endswith("(did you mean 'billing'?)")
    (e,) = _codes(wf("refund", a("refunds")), "SW102")
    assert e.message.endswith("(did you mean 'refunds'?)")
    # nothing close: no guess
    (far,) = _codes(wf("a", a(handoffs=["zzzz"]), a("refunds")), "SW103")
    assert "did you mean" not in far.message
