"""The flow DSL: @ss.step declarations, edge constructors, and the spec they build."""

from __future__ import annotations

import enum
import json
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.graph.spec import WorkflowSpec

HERE = "tests/dsl/test_flow_dsl.py"


class Draft(BaseModel):
    text: str
    mood: Literal["calm", "angry"]


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@ss.step
def draft_of(text: str) -> Draft:
    return Draft(text=text, mood="calm")


@ss.step(name="polish")
async def polish_draft(ctx: ss.RunContext[int], draft: Draft) -> str:
    return draft.text


def calm(d: Draft) -> bool:
    return d.mood == "calm"


def test_step_reads_its_signature() -> None:
    assert (draft_of.name, draft_of.input_type, draft_of.output_type) == ("draft_of", str, Draft)
    assert not draft_of.is_async and not draft_of.takes_context
    assert polish_draft.name == "polish" and polish_draft.is_async
    assert polish_draft.takes_context and polish_draft.context_type is int
    assert polish_draft.input_type is Draft
    assert draft_of("hi") == Draft(text="hi", mood="calm")  # still callable


def test_missing_annotations_are_located_errors() -> None:
    with pytest.raises(ss.UserError, match=rf"step 'bare' at {HERE}:\d+: parameter 'x' has no "
                       "type annotation"):
        @ss.step
        def bare(x):  # type: ignore[no-untyped-def]
            return x

    with pytest.raises(ss.UserError, match=rf"step 'noret' at {HERE}:\d+: no return annotation"):
        @ss.step
        def noret(x: int):  # type: ignore[no-untyped-def]
            return x


def test_a_step_takes_exactly_one_input() -> None:
    with pytest.raises(ss.UserError, match=r"exactly one input parameter .* got 2 \(a, b\)"):
        @ss.step
        def two(a: int, b: int) -> int:
            return a + b

    with pytest.raises(ss.UserError, match="a step needs a name"):
        ss.step(lambda x: x)


def test_edges_check_their_arguments_at_once() -> None:
    with pytest.raises(ss.UserError, match=rf"then at {HERE}:\d+: target: expected an Agent"):
        ss.then(draft_of, 42)  # type: ignore[arg-type]
    with pytest.raises(ss.UserError, match="max_items: expected a positive int"):
        ss.fan_out(draft_of, over="x", each=draft_of, then=ss.END, max_items=0)
    with pytest.raises(ss.UserError, match="when: expected a function"):
        ss.branch(draft_of, when="calm", then=ss.END, otherwise=ss.END)  # type: ignore[arg-type]
    with pytest.raises(ss.UserError, match="cases: expected a non-empty dict"):
        ss.route(draft_of, on="mood", cases={})
    with pytest.raises(ss.UserError, match=r"Workflow\('w'\) at .*: flow\[0\]: expected an edge"):
        ss.Workflow("w", draft_of, flow=["then"])  # type: ignore[list-item]
    with pytest.raises(ss.UserError, match="a step can only start a flow"):
        ss.Workflow("w", draft_of)


def test_route_keys_accept_enum_members() -> None:
    edge = ss.route(draft_of, on="color", cases={Color.RED: ss.END, Color.BLUE: ss.END})
    assert sorted(edge.cases) == ["blue", "red"]


def flow_workflow() -> ss.Workflow:
    writer = ss.Agent("writer", "Write.", output_type=Draft)
    return ss.Workflow("w", draft_of, flow=[
        ss.then(draft_of, writer),
        ss.branch(writer, when=calm, then=polish_draft, otherwise=ss.END, max_uses=2),
        ss.then(polish_draft, ss.END),
    ], context_type=int)


def test_the_spec_holds_steps_and_edges_and_round_trips() -> None:
    spec = flow_workflow().to_spec()
    assert [s.name for s in spec.steps] == ["draft_of", "polish"]
    assert spec.entry == "draft_of"
    assert spec.flow is not None
    assert [(e.kind, e.source, e.targets()) for e in spec.flow] == [
        ("then", "draft_of", ("writer",)),
        ("branch", "writer", ("polish", None)),
        ("then", "polish", (None,)),
    ]
    assert spec.flow[1].predicate is not None and spec.flow[1].predicate.display == "calm"
    text = flow_workflow().to_json()
    assert WorkflowSpec.model_validate(json.loads(text)) == spec
    assert flow_workflow().to_json() == text


def test_a_workflow_without_flow_serializes_as_before() -> None:
    a = ss.Agent("a", "x")
    data = json.loads(ss.Workflow("plain", a).to_json())
    assert "flow" not in data and "steps" not in data
    assert ss.Workflow("plain", a).to_spec().flow is None


def test_a_flow_compiles_and_checks_clean() -> None:
    report = flow_workflow().check()
    assert report.ok, [d.format_line() for d in report.diagnostics]
    assert report.model_call_bound == 10  # one agent node: max_turns=10, one visit


def test_a_steps_output_check_holds_it_to_its_annotation() -> None:
    @ss.step
    def listed(text: str) -> list[int]:
        return [len(text)]

    @ss.step
    def tagged(text: str) -> Annotated[int, ["unhashable metadata"]]:
        return len(text)

    for s in (listed, tagged):
        check = s.output_check()
        assert check is s.output_check()  # built once
    listed.output_check()([1, 2])
    tagged.output_check()(3)
    with pytest.raises(ss.UserError, match=r"step 'listed' at .*:\d+ returned tuple, but is "
                                           r"annotated -> list\[int\]"):
        listed.output_check()((1, 2))  # strict: no coercion
    with pytest.raises(ss.UserError, match="returned str, but is annotated"):
        tagged.output_check()("3")
