"""SW650-SW654 (what the hosted Agents API cannot express): when they are checked, and
what each finds. The failing and passing case of each code is in
``tests/analysis/_agents_api_cases.py``."""

from __future__ import annotations

from typing import Any

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.models import AgentsAPIModel
from tests.analysis._agents_api_cases import EXTRA_SW654


def codes(report: Any) -> list[str]:
    return sorted(d.code for d in report.diagnostics if d.code.startswith("SW65"))


def warm() -> ss.Workflow:
    agent = ss.Agent("warm", "Be creative.", model_settings=ss.ModelSettings(temperature=0.9))
    return ss.Workflow("warm", entry=agent)


def test_only_checked_for_the_target() -> None:
    assert codes(warm().check()) == []
    assert codes(warm().check(target="agents-api")) == ["SW654"]
    assert codes(warm().check(target=AgentsAPIModel("gpt-test"))) == ["SW654"]


def test_an_agent_on_an_agents_api_model_brings_the_target_along() -> None:
    agent = ss.Agent("warm", "Be creative.", model=AgentsAPIModel("gpt-test"),
                     model_settings=ss.ModelSettings(temperature=0.9, top_p=0.5))
    report = ss.Workflow("warm", entry=agent).check()  # no agents=[...]: found from entry
    [finding] = [d for d in report.diagnostics if d.code == "SW654"]
    assert "temperature, top_p" in finding.message
    assert finding.location.path == "agents.warm"


def test_the_support_workflow_is_expressible() -> None:
    assert codes(support.check(target="agents-api")) == []


def test_a_handoff_between_output_types_and_an_instructions_function() -> None:
    failing, passing = EXTRA_SW654
    [finding] = [d for d in failing().check().diagnostics if d.code == "SW654"]
    assert finding.location.path == "agents.front.handoffs[0]"
    assert "output type differs" in finding.message
    assert codes(passing().check()) == []

    def today(ctx: Any, agent: Any) -> str:
        return "Today is a good day."

    agent = ss.Agent("daily", today)
    [finding] = [d for d in ss.Workflow("d", entry=agent).check(target="agents-api").diagnostics
                 if d.code == "SW654"]
    assert "instructions function" in finding.message


def test_multi_agent_is_fine_without_function_tools() -> None:
    agent = ss.Agent("thinker", "Think.")
    assert codes(ss.Workflow("t", entry=agent).check(
        target=AgentsAPIModel("gpt-test", multi_agent=True))) == []


def test_an_unknown_target_is_a_user_error() -> None:
    with pytest.raises(ss.UserError, match="target: expected 'agents-api'"):
        warm().check(target="bedrock")


def test_the_model_refuses_metadata_over_the_limits_at_once() -> None:
    with pytest.raises(ss.UserError, match="SW651"):
        AgentsAPIModel("gpt-test", metadata={f"k{i}": "v" for i in range(17)})
