from __future__ import annotations

import pytest

import stepswitch as ss
from stepswitch.analysis import analyze
from tests.analysis._cases import a, refund_order, wf


def _broken() -> ss.Workflow:
    lonely = a("lonely", tools=[refund_order])
    return wf("a", a(handoffs=["a", "ghost"]), lonely)


def test_reports_every_finding_not_the_first() -> None:
    assert {"SW103", "SW107", "SW201", "SW203", "SW501"} <= set(_broken().check().codes())


def test_select_and_ignore_take_prefixes() -> None:
    w = _broken()
    assert set(w.check(select=["SW2"]).codes()) == {"SW201", "SW203"}
    assert set(w.check(select=["SW1"], ignore=["SW107"]).codes()) == {"SW103"}
    assert "SW5" not in "".join(w.check(ignore=["SW5"]).codes())


def test_a_bare_string_is_one_code() -> None:
    w = _broken()
    assert set(w.check(select="SW2").codes()) == {"SW201", "SW203"}
    assert "SW107" not in w.check(ignore="SW107").codes()


def test_workflow_and_agent_ignore() -> None:
    lonely = a("lonely", tools=[refund_order], ignore=["SW107"])
    w = wf("a", a(handoffs=["a"]), lonely, ignore=["SW2"])
    codes = w.check().codes()
    assert "SW107" not in codes and "SW201" not in codes and "SW203" not in codes
    assert "SW501" in codes  # the agent ignores SW107 only


def test_agent_ignore_applies_to_its_own_elements_only() -> None:
    b = a("b", handoffs=["ghost"])
    w = wf("a", a(handoffs=["nowhere", b], ignore=["SW103"]), b)
    (d,) = [d for d in w.check().diagnostics if d.code == "SW103"]
    assert d.location.path == "agents.b.handoffs[0]"


def test_agent_names_with_dots_keep_their_ignores() -> None:
    w = wf("a.b", a("a.b", handoffs=["ghost"], ignore=["SW103"]))
    assert "SW103" not in w.check().codes()


def test_invalid_select_is_a_caller_error() -> None:
    with pytest.raises(ss.UserError, match="SW0"):
        _broken().check(select=["SW0"])


def test_report_is_sorted_and_counts() -> None:
    report = _broken().check()
    keys = [d.sort_key() for d in report.diagnostics]
    assert keys == sorted(keys)
    assert not report.ok
    assert len(report.errors) + len(report.warnings) + len(report.infos) == len(report)
    assert report.summary().startswith(f"{len(report.errors)} error")
    assert all(d.location.path == "agents.lonely" for d in report.by_path("agents.lonely"))


def test_analyze_accepts_a_graph_directly() -> None:
    report = analyze(wf("a", a()).graph(), max_model_calls=3)
    assert report.workflow == "case" and "SW204" in report.codes()
    assert report.model_call_bound == 10


def test_check_never_raises_on_an_empty_workflow() -> None:
    report = ss.Workflow("empty", None).check()
    assert report.codes() == ("SW101",)


def test_a_budget_hint_names_what_the_located_edge_takes() -> None:
    """SW705's hint names the edge that closes the cycle, its kind and where it is (it
    said ss.route for a cycle located at an ss.then, then 'this one' for the first edge
    of the cycle rather than the one going back), and SW201's says how an SDK app gets a
    budget (the SDK's handoff() takes no max_uses)."""
    from tests.analysis._cases import CASES

    failing, _ = CASES["SW705"]
    flow = failing()
    (loop,) = [d for d in flow.check().diagnostics if d.code == "SW705"]
    nodes = loop.message.split("flow cycle ", 1)[1].split(" has no", 1)[0].split(" → ")
    back_from, back_to = nodes[-2], nodes[-1]
    [back] = [e for e in flow.graph().spec.flow or ()
              if e.source == back_from and back_to in e.targets()]
    assert (f"e.g. the one back to {back_to!r}, ss.{back.kind}({back_from!r}, ..., "
            f"max_uses=3) at {back.location.file}:{back.location.line}") in (loop.help or ""), \
        loop.help
    failing, _ = CASES["SW201"]
    (cycle,) = [d for d in failing().check().diagnostics if d.code == "SW201"]
    assert "ss.from_sdk(agent, handoff_max_uses=2)" in (cycle.help or "")
