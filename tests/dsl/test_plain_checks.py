"""The DSL's plain argument checks accept only what its pydantic argument models accept.

``Agent``, ``handoff``, ``as_tool`` and ``Workflow`` skip the pydantic model when a few
type tests say the fields are plainly right; anything else goes to the model, which
accepts or explains. So a plain check must never pass a value the model refuses (that
value would slip through unexplained). Each case sets one field to each value of a
varied pool, the others to valid values, and asks both.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import stepswitch as ss
from stepswitch.dsl import _arg_models
from stepswitch.dsl.agent import (
    _plain_agent_fields,
    _plain_agent_tool,
    _plain_handoff,
)
from stepswitch.dsl.workflow import _plain_workflow
from stepswitch.errors import UserError


class _Text(str):
    pass


class _Count(int):
    pass


@ss.function_tool
def _tool(x: int) -> str:
    """A tool."""
    return str(x)


@ss.input_guardrail
def _guard(ctx: Any, agent: Any, value: Any) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(None, False)


@ss.output_guardrail
def _out_guard(ctx: Any, agent: Any, value: Any) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(None, False)


_AGENT = ss.Agent("b", "b")
POOL: list[Any] = [
    None, 0, 1, 3, -1, True, False, 2.0, 2.5, "3", "", " ", "x", _Text("t"), _Count(2),
    b"x", [], (), {}, [1], ["x"], ("x",), {"temperature": 1}, lambda: 1, print, object(),
    _AGENT, ss.handoff(_AGENT), _tool, _AGENT.as_tool("t", "d"), _guard, _out_guard,
    ss.StopAtTools(["x"]), ss.ModelSettings(temperature=0.5), "run_llm_again",
    "stop_on_first_tool", "SW101", [_tool], [_AGENT], [_guard], [_out_guard], ["SW101"],
    [ss.handoff(_AGENT)], [_AGENT.as_tool("t", "d")], [42], ["a", 1],
]


def _accepts(model: type[Any], values: dict[str, Any]) -> bool:
    try:
        model.model_validate(values)
    except ValidationError:
        return False
    return True


def _cases(valid: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**valid, field: value} for field in valid for value in POOL]


HANDOFF: dict[str, Any] = {
    "target": _AGENT, "max_uses": None, "tool_name": None, "description": None,
    "on_handoff": None, "input_filter": None,
}
AGENT_TOOL: dict[str, Any] = {
    "target": "b", "name": "t", "description": None, "max_turns": None, "max_depth": None,
    "needs_approval": False, "output_extractor": None,
}
AGENT: dict[str, Any] = {
    "instructions": "i", "tools": [], "handoffs": [], "model_settings": None,
    "handoff_description": None, "input_guardrails": [], "output_guardrails": [],
    "tool_use_behavior": "run_llm_again", "ignore": [],
}
WORKFLOW: dict[str, Any] = {
    "entry": _AGENT, "agents": [_AGENT], "max_turns": 10, "max_depth": 8,
    "max_model_calls": None, "ignore": [],
}


def test_the_pool_holds_both_verdicts() -> None:
    """A pool every value of which one side accepted would test nothing."""
    verdicts = {_plain_handoff(**case) for case in _cases(HANDOFF)}
    assert verdicts == {True, False}


def _slipped(
    valid: dict[str, Any], plain: Any, model: type[Any], lists: tuple[str, ...]
) -> list[str]:
    """The cases ``plain`` passes and ``model`` refuses (cases with a non-list where a
    list goes are refused before either check, with "expected a list")."""
    return [
        repr(case) for case in _cases(valid)
        if all(type(case[name]) in (list, tuple) for name in lists)
        and plain(**case) and not _accepts(model, case)
    ]


def test_a_plain_handoff_is_one_the_model_accepts() -> None:
    assert _slipped(HANDOFF, _plain_handoff, _arg_models.HandoffArgs, ()) == []


def test_a_plain_agent_tool_is_one_the_model_accepts() -> None:
    assert _slipped(AGENT_TOOL, _plain_agent_tool, _arg_models.AgentToolArgs, ()) == []


def test_plain_agent_fields_are_ones_the_model_accepts() -> None:
    lists = ("tools", "handoffs", "input_guardrails", "output_guardrails", "ignore")
    assert _slipped(AGENT, _plain_agent_fields, _arg_models.AgentArgs, lists) == []


def test_a_plain_workflow_is_one_the_model_accepts() -> None:
    lists = ("agents", "ignore")
    assert _slipped(WORKFLOW, _plain_workflow, _arg_models.WorkflowArgs, lists) == []


def test_what_only_the_model_accepts_is_still_accepted() -> None:
    """Values the plain checks leave to pydantic (its lax coercions, subclasses) keep
    working as they did when every declaration went through the model."""
    ss.handoff(_AGENT, max_uses=_Count(2))
    ss.handoff(_AGENT, tool_name=_Text("go"))
    ss.Agent("c", _Text("i"), ignore=[_Text("SW101")])
    ss.Workflow("w", entry=_AGENT, max_turns=_Count(3))


def test_what_the_model_refuses_is_still_a_located_error() -> None:
    with pytest.raises(UserError, match=r"handoff at .*test_plain_checks.py:\d+: max_uses: "):
        ss.handoff(_AGENT, max_uses=0)
    with pytest.raises(UserError, match=r"tools\[0\]: expected a @function_tool"):
        ss.Agent("c", "i", tools=[42])  # type: ignore[list-item]
    with pytest.raises(UserError, match=r"Workflow\('w'\) at .*: max_depth: expected"):
        ss.Workflow("w", entry=_AGENT, max_depth=None)  # type: ignore[arg-type]
