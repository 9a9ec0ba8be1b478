"""The flow reference workflows in graphs/ run end to end on scripted models, through
the interpreter and through their checked-in generated runners, with the same items."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

import pytest

import stepswitch as ss
from graphs import financial, judge, research, story, translation
from stepswitch.runtime.model import ModelRequest, ModelResponse, OutputFunctionCall, OutputMessage
from stepswitch.testing import ScriptedModel, assistant_message
from tests._items import text_of


def both(name: str, wf: ss.Workflow) -> list[ss.StateMachine]:
    runner = importlib.import_module(f"codegen.{name}")
    return [wf.compile(), runner.MACHINE]


def _same(results: list[ss.RunResult]) -> ss.RunResult:
    first = results[0]
    for other in results[1:]:
        assert other.new_items == first.new_items
        assert other.final_output == first.final_output
        assert other.last_agent == first.last_agent
    return first


def test_story_gate_passes_a_good_scifi_outline() -> None:
    results = []
    for machine in both("story", story.story):
        model = ScriptedModel([
            [assistant_message("A robot learns to paint on Mars.")],
            [assistant_message('{"good_quality": true, "is_scifi": true}')],
            [assistant_message("The red dust settled on the canvas...")],
        ])
        results.append(machine.run_sync("a robot", model=model, context=story.StoryState()))
        # the writer got the outline the first agent wrote, not the checker's verdict
        assert [text_of(i) for i in model.calls[2].input] == ["A robot learns to paint on Mars."]
    result = _same(results)
    assert result.final_output == "The red dust settled on the canvas..."
    assert result.last_agent == "story_agent"


def test_story_gate_stops_a_story_that_is_not_scifi() -> None:
    for machine in both("story", story.story):
        model = ScriptedModel([
            [assistant_message("Two friends open a bakery.")],
            [assistant_message('{"good_quality": true, "is_scifi": false}')],
        ])
        result = machine.run_sync("bakery", model=model, context=story.StoryState())
        assert result.final_output == "Outline is not a scifi story, so we stop here."
        assert result.last_agent == "stop_here"


def _grade(score: str) -> list[Any]:
    return [assistant_message(json.dumps({"feedback": "more twists", "score": score}))]


def test_judge_loop_revises_until_it_passes() -> None:
    results = []
    for machine in both("judge", judge.judge):
        model = ScriptedModel([
            [assistant_message("outline 1")], _grade("needs_improvement"),
            [assistant_message("outline 2")], _grade("pass"),
        ])
        results.append(machine.run_sync("a heist", model=model, context=judge.JudgeState()))
        revised = text_of(model.calls[2].input[0])
        assert "a heist" in revised and "outline 1" in revised and "more twists" in revised
    assert _same(results).final_output == "outline 2"


def test_judge_loop_is_bounded_by_its_budget() -> None:
    script = [step for _ in range(4) for step in ([assistant_message("o")], _grade("fail"))]
    with pytest.raises(ss.MaxTurnsExceeded, match="max_uses"):
        judge.judge.compile().run_sync("x", model=ScriptedModel(script),
                                       context=judge.JudgeState())


class ByAgent:
    """A model that answers each agent by a rule (fan-out branches run concurrently)."""

    def __init__(self, rules: dict[str, Callable[[ModelRequest], list[Any]]]) -> None:
        self.rules = rules
        self.calls: list[tuple[str, str]] = []

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        first = getattr(request.input[0], "content", "")
        self.calls.append((request.agent, first))
        return ModelResponse(tuple(self.rules[request.agent](request)))


def _numbered(word: str) -> Callable[[ModelRequest], list[Any]]:
    count = iter(range(1, 100))
    return lambda request: [OutputMessage(f"{word} {next(count)}")]


def test_translation_fans_out_three_attempts_and_picks() -> None:
    results = []
    for machine in both("translation", translation.translation):
        model = ByAgent({
            "spanish_agent": _numbered("hola"),
            "translation_picker": lambda r: [OutputMessage("hola 2")],
        })
        results.append(machine.run_sync("hello", model=model))
        assert [a for a, _ in model.calls].count("spanish_agent") == 3
        picker_input = model.calls[-1][1]
        assert picker_input == "Translations:\n\n1. hola 1\n\n2. hola 2\n\n3. hola 3"
    result = _same(results)
    assert result.final_output == "hola 2"


PLAN = {"searches": [{"reason": "r1", "query": "q1"}, {"reason": "r2", "query": "q2"}]}
REPORT = {"short_summary": "s", "markdown_report": "# R", "follow_up_questions": ["?"]}


def test_research_bot_plans_searches_and_writes() -> None:
    results = []
    for machine in both("research", research.research):
        model = ByAgent({
            "PlannerAgent": lambda r: [OutputMessage(json.dumps(PLAN))],
            "SearchAgent": lambda r: [OutputMessage(
                "summary of " + json.loads(text_of(r.input[0]))["query"])],
            "WriterAgent": lambda r: [OutputMessage(json.dumps(REPORT))],
        })
        results.append(machine.run_sync("quantum batteries", model=model))
        assert model.calls[-1] == (
            "WriterAgent", "Summarized search results:\n\nsummary of q1\n\nsummary of q2")
    result = _same(results)
    assert result.final_output == research.ReportData(**REPORT)


def _writer(r: ModelRequest) -> list[Any]:
    if len(r.input) == 1:  # first turn: ask both analysts
        return [OutputFunctionCall("fundamentals_analysis", '{"input": "acme"}', "w1"),
                OutputFunctionCall("risk_analysis", '{"input": "acme"}', "w2")]
    return [OutputMessage(json.dumps(REPORT))]


@pytest.mark.parametrize("verified", [True, False])
def test_financial_manager_verifies_before_release(verified: bool) -> None:
    results = []
    for machine in both("financial", financial.financial):
        model = ByAgent({
            "FinancialPlannerAgent": lambda r: [OutputMessage(json.dumps(PLAN))],
            "FinancialSearchAgent": lambda r: [OutputMessage("found")],
            "FinancialWriterAgent": _writer,
            "FundamentalsAnalystAgent": lambda r: [OutputMessage('{"summary": "growing"}')],
            "RiskAnalystAgent": lambda r: [OutputMessage('{"summary": "debt"}')],
            "VerificationAgent": lambda r: [OutputMessage(json.dumps(
                {"verified": verified, "issues": "" if verified else "unsourced"}))],
        })
        results.append(machine.run_sync("acme", model=model, context=financial.ReportState()))
    result = _same(results)
    report = financial.FinancialReportData(**REPORT)
    if verified:
        assert result.final_output == report and result.last_agent == "release"
    else:
        assert result.final_output == financial.HeldReport(report=report, issues="unsourced")
    outputs = [i.output for i in result.new_items if i.type == "tool_call_output_item"]
    assert outputs == ["growing", "debt"]  # the analysts' summaries, by their extractor


def test_a_fan_outs_join_is_drawn_apart_from_a_step_called_join() -> None:
    """The fan-out's join node is named for its field: a flow whose own step is called
    `join` drew two nodes labelled "join"."""
    from graphs.research import research  # a fan-out over `searches`

    mermaid = research.to_mermaid()
    assert "join of searches" in mermaid
    assert '"join<br/>' not in mermaid
