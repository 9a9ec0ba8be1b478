"""DSL objects are mutable builders: a value set after the declaration is checked when
the workflow is built, as a ``UserError`` naming the object, its declaration's
file:line and the field, never a crash deep in a later stage (issue 11, item 14)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import stepswitch as ss


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look an order up."""
    return "shipped"


def declare() -> tuple[ss.Agent, ss.Agent, ss.Workflow, Any]:
    helper = ss.Agent(name="helper", instructions="Help.")
    edge = ss.handoff(helper, max_uses=2)
    desk = ss.Agent(  # DESK
        name="desk",
        instructions="Route.",
        tools=[lookup, helper.as_tool("ask", "Ask the helper")],
        handoffs=[edge],
    )
    wf = ss.Workflow(name="w", entry=desk, agents=[desk, helper])  # WORKFLOW
    return desk, helper, wf, edge


Mutation = Callable[[ss.Agent, ss.Agent, ss.Workflow, Any], None]

MUTATIONS: dict[str, tuple[Mutation, str, str]] = {
    "handoffs.append(3)": (lambda d, h, w, e: d.handoffs.append(3), "DESK", "handoffs[1]"),  # type: ignore[arg-type]
    "handoffs.append(None)": (lambda d, h, w, e: d.handoffs.append(None), "DESK", "handoffs[1]"),  # type: ignore[arg-type]
    "handoffs = None": (lambda d, h, w, e: setattr(d, "handoffs", None), "DESK", "handoffs"),
    "tools.append('x')": (lambda d, h, w, e: d.tools.append("x"), "DESK", "tools[2]"),  # type: ignore[arg-type]
    "tools = 'abc'": (lambda d, h, w, e: setattr(d, "tools", "abc"), "DESK", "tools"),
    "name = 3": (lambda d, h, w, e: setattr(d, "name", 3), "DESK", "name"),
    "instructions = 5": (lambda d, h, w, e: setattr(d, "instructions", 5), "DESK",
                         "instructions"),
    "model_settings = 3": (lambda d, h, w, e: setattr(d, "model_settings", 3), "DESK",
                           "model_settings"),
    "input_guardrails.append(3)": (lambda d, h, w, e: d.input_guardrails.append(3), "DESK",  # type: ignore[arg-type]
                                   "input_guardrails[0]"),
    "edge.target = 3": (lambda d, h, w, e: setattr(e, "target", 3), "EDGE", "target"),
    "edge.max_uses = 'x'": (lambda d, h, w, e: setattr(e, "max_uses", "x"), "DESK", "max_uses"),
    "agent_tool.target = 3": (lambda d, h, w, e: setattr(d.tools[1], "target", 3),
                              "AGENT_TOOL", "target"),
    "tool.description = 5": (lambda d, h, w, e: setattr(lookup, "description", 5), "TOOL",
                             "description"),
    "wf.agents.append(3)": (lambda d, h, w, e: w.agents.append(3), "WORKFLOW", "agents[2]"),  # type: ignore[arg-type]
    "wf.entry = 3": (lambda d, h, w, e: setattr(w, "entry", 3), "WORKFLOW", "entry"),
    "wf.max_turns = -1": (lambda d, h, w, e: setattr(w, "max_turns", -1), "WORKFLOW",
                          "max_turns"),
    "wf.max_turns = 'x'": (lambda d, h, w, e: setattr(w, "max_turns", "x"), "WORKFLOW",
                           "max_turns"),
    "wf.name = None": (lambda d, h, w, e: setattr(w, "name", None), "WORKFLOW", "name"),
}


def line_of(marker: str) -> int:
    import inspect

    source, start = inspect.getsourcelines(declare)
    if marker == "EDGE":
        return start + next(i for i, ln in enumerate(source) if "ss.handoff(helper" in ln)
    if marker == "AGENT_TOOL":
        return start + next(i for i, ln in enumerate(source) if "helper.as_tool(" in ln)
    if marker == "TOOL":
        return lookup.site.line
    return start + next(i for i, ln in enumerate(source) if f"# {marker}" in ln)


@pytest.fixture(autouse=True)
def restore_tool() -> Any:
    description = lookup.description
    yield
    lookup.description = description


@pytest.mark.parametrize("stage", ["check", "compile", "to_mermaid", "to_json"])
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_declaration_changed_afterwards_is_a_located_user_error(
    mutation: str, stage: str
) -> None:
    desk, helper, wf, edge = declare()
    change, marker, field = MUTATIONS[mutation]
    change(desk, helper, wf, edge)
    with pytest.raises(ss.UserError) as caught:
        getattr(wf, stage)()
    text = str(caught.value)
    assert "changed after its declaration" in text
    assert f"test_mutated_declarations.py:{line_of(marker)}" in text
    assert field in text


def test_unchanged_declarations_build_as_before() -> None:
    _, _, wf, _ = declare()
    assert wf.check().ok
