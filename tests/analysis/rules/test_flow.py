"""SW6xx and the flow's model-call bound, beyond the one case per code."""

from __future__ import annotations

from pydantic import BaseModel

import stepswitch as ss
from tests.analysis._cases import Outline, Plan, Verdict, check_outline, plan_of, read_text


class Search(BaseModel):
    query: str


class Searches(BaseModel):
    searches: list[Search]


def test_judge_loop_bound_counts_every_round() -> None:
    writer = ss.Agent("writer", "w", output_type=Outline)
    judge = ss.Agent("judge", "j", output_type=Verdict)
    wf = ss.Workflow("judge", writer, max_turns=10, flow=[
        ss.then(writer, judge),
        ss.route(judge, on="score", max_uses=3,
                 cases={"pass": ss.END, "needs_improvement": writer}),
    ])
    report = wf.check()
    assert report.ok
    # 1 + 3 rounds of writer (10) and judge (10)
    assert report.model_call_bound == 80


def test_fan_out_bound_counts_its_width() -> None:
    planner = ss.Agent("planner", "p", output_type=Searches)
    search = ss.Agent("search", "s")
    writer = ss.Agent("writer", "w")
    wf = ss.Workflow("research", planner, max_turns=5, max_model_calls=20, flow=[
        ss.fan_out(planner, over="searches", each=search, then=writer, max_items=4),
        ss.then(writer, ss.END),
    ])
    report = wf.check()
    assert report.model_call_bound == 5 + 4 * 5 + 5
    assert "SW204" in report.codes()


def test_lambda_predicate_and_predicate_type_are_checked() -> None:
    wf = ss.Workflow("w", read_text, flow=[
        ss.then(read_text, check_outline),
        ss.branch(check_outline, when=lambda v: True, then=ss.END, otherwise=ss.END),
    ])
    assert "SW709" in wf.check().codes()

    def wants_plan(p: Plan) -> bool:
        return True

    wf2 = ss.Workflow("w", read_text, flow=[
        ss.then(read_text, check_outline),
        ss.branch(check_outline, when=wants_plan, then=ss.END, otherwise=ss.END),
    ])
    lines = [d.format_line() for d in wf2.check().diagnostics if d.code == "SW702"]
    assert lines and "takes Plan, but 'check_outline' gives Verdict" in lines[0]


def test_fan_out_over_a_non_list_and_join_types() -> None:
    wf = ss.Workflow("w", plan_of, flow=[
        ss.fan_out(plan_of, over="summary", each=read_text, then=ss.END, max_items=2)])
    found = [d.message for d in wf.check().diagnostics if d.code == "SW704"]
    assert found == ["fan-out from 'plan_of' over 'summary': the field is str, not a list"]
    wf2 = ss.Workflow("w", plan_of, flow=[
        ss.fan_out(plan_of, over="searches", each=read_text, then=read_text, max_items=2)])
    found = [d.message for d in wf2.check().diagnostics if d.code == "SW702"]
    assert found and "joins the outputs of read_text as list[Outline]" in found[0]


def test_agents_reached_only_through_the_flow_are_reachable() -> None:
    a = ss.Agent("a", "x")
    b = ss.Agent("b", "y")
    wf = ss.Workflow("w", a, flow=[ss.then(a, b), ss.then(b, ss.END)])
    assert wf.check().codes() == ("SW203",)


def test_a_type_mismatch_help_names_the_step_once() -> None:
    wf = ss.Workflow("w", plan_of, flow=[ss.then(plan_of, check_outline)])
    helps = [d.help for d in wf.check().diagnostics if d.code == "SW702"]
    assert helps == ["change the parameter type of step 'check_outline', or put a step "
                     "between them that converts the value"]


def test_misspelt_flow_names_and_fields_get_the_closest_one() -> None:
    wf = ss.Workflow("w", read_text, flow=[
        ss.then(read_text, "check_outlin"), ss.then("check_outlin", ss.END),
        ss.then(check_outline, ss.END)])
    (node,) = [d.message for d in wf.check().diagnostics if d.code == "SW701"]
    assert node.endswith("(did you mean 'check_outline'?)")
    wf2 = ss.Workflow("w", read_text, flow=[
        ss.then(read_text, check_outline),
        ss.route(check_outline, on="scor", cases={"pass": ss.END})])
    (field,) = [d.message for d in wf2.check().diagnostics if d.code == "SW704"]
    assert field.endswith("has no field 'scor' (did you mean 'score'?)")
    wf3 = ss.Workflow("w", plan_of, flow=[
        ss.fan_out(plan_of, over="serches", each=read_text, then=ss.END, max_items=2)])
    (fan,) = [d.message for d in wf3.check().diagnostics if d.code == "SW704"]
    assert fan.endswith("has no field 'serches' (did you mean 'searches'?)")


def test_each_extra_exit_of_a_node_is_told_apart() -> None:
    wf = ss.Workflow("w", read_text, flow=[
        ss.then(read_text, ss.END), ss.then(read_text, check_outline),
        ss.then(read_text, ss.END), ss.then(check_outline, ss.END)])
    found = [d.message.split(";")[0] for d in wf.check().diagnostics if d.code == "SW710"]
    assert found == [
        "flow node 'read_text' has 3 exits: this then edge is exit 2 of 3",
        "flow node 'read_text' has 3 exits: this then edge is exit 3 of 3",
    ]
