from __future__ import annotations

from typing import Any

import stepswitch as ss
from tests.analysis._cases import (
    Account,
    Draft,
    Findings,
    Tally,
    a,
    findings_guard,
    int_input_guard,
    shop_balance,
    tag,
    wf,
)


def _codes(w: ss.Workflow, code: str) -> list[ss.Diagnostic]:
    return [d for d in w.check().diagnostics if d.code == code]


def test_strict_problems_name_the_rule_and_where() -> None:
    (d,) = _codes(wf("a", a(output_type=Tally)), "SW401")
    assert "open-object" in d.message and "#/properties/counts" in d.message
    assert d.location.path == "agents.a.output_type"


def test_a_union_output_is_wrapped_and_fine() -> None:
    assert not _codes(wf("a", a(output_type=Findings | Draft)), "SW401")


def test_shared_tool_problem_reported_once() -> None:
    w = wf("a", a(tools=[tag], handoffs=[a("b", tools=[tag])]))
    assert len(_codes(w, "SW402")) == 1


def test_guardrail_paths_and_messages() -> None:
    w = wf("a", a(output_type=Draft, output_guardrails=[findings_guard],
                  input_guardrails=[int_input_guard]))
    found = {d.location.path: d.message for d in _codes(w, "SW405")}
    assert set(found) == {"agents.a.output_guardrails[0]", "agents.a.input_guardrails[0]"}
    assert "Findings" in found["agents.a.output_guardrails[0]"]


def test_output_guardrail_on_an_agent_without_output_type_expects_str() -> None:
    assert _codes(wf("a", a(output_guardrails=[findings_guard])), "SW405")


def test_context_is_not_checked_without_a_declared_context_type() -> None:
    assert not _codes(wf("a", a(tools=[shop_balance])), "SW407")
    (d,) = _codes(wf("a", a(tools=[shop_balance]), context_type=Account), "SW407")
    assert "RunContext[Shop]" in d.message and "Account" in d.message


class Premium(Account):
    pass


@ss.function_tool
def base_tool(ctx: ss.RunContext[Account]) -> str:
    """Base."""
    return ""


def test_context_subclass_fits() -> None:
    assert not _codes(wf("a", a(tools=[base_tool]), context_type=Premium), "SW407")

    def instructions(ctx: ss.RunContext[Premium], agent: Any) -> str:
        return ""

    w = wf("a", ss.Agent("a", instructions), context_type=Account)
    (d,) = _codes(w, "SW407")
    assert d.location.path == "agents.a"


class _Opaque:
    """A plain class: pydantic has no schema for it."""


def test_an_output_type_with_no_schema_is_one_line_without_pydantic_advice() -> None:
    agent = ss.Agent(name="a", output_type=_Opaque)
    (found,) = [d for d in ss.Workflow(name="w", entry=agent).check() if d.code == "SW401"]
    assert "\n" not in found.message
    assert "no JSON schema for" in found.message and "_Opaque" in found.message
    assert "arbitrary_types_allowed" not in found.message
