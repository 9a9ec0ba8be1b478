"""Flows at run time: agents and steps chained by edges, on all three surfaces, with
pauses inside agent nodes and inside fan-out branches, resumed from JSON."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.runtime.events import FlowNodeStreamEvent
from stepswitch.runtime.model import ModelRequest, ModelResponse, OutputFunctionCall, OutputMessage
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests._items import text_of
from tests.conformance.harness import run_all


class Outline(BaseModel):
    text: str


class Check(BaseModel):
    good: bool
    genre: Literal["scifi", "other"]


class Verdict(BaseModel):
    score: Literal["pass", "needs_improvement"]
    feedback: str


class Plan(BaseModel):
    items: list[str]


RAN: list[str] = []


@ss.step
def check(outline: Outline) -> Check:
    RAN.append(f"check:{outline.text}")
    return Check(good="good" in outline.text, genre="scifi")


def is_good(c: Check) -> bool:
    return c.good


@ss.step
async def describe(ctx: ss.RunContext[dict[str, str]], c: Check) -> str:
    await asyncio.sleep(0)
    return f"{ctx.context['style']} {c.genre} story"


@ss.step
def split(text: str) -> Plan:
    return Plan(items=text.split())


@ss.step
def upper(word: str) -> str:
    RAN.append(f"upper:{word}")
    return word.upper()


@ss.step
def joined(words: list[str]) -> str:
    return "+".join(words)


@ss.function_tool(needs_approval=True)
def publish(title: str) -> str:
    """Publish a story."""
    RAN.append(f"publish:{title}")
    return f"published {title}"


def story_flow() -> ss.StateMachine:
    outline = ss.Agent("outline", "Outline a story.", output_type=Outline)
    story = ss.Agent("story", "Write the story.", tools=[publish])
    return ss.Workflow("story", outline, flow=[
        ss.then(outline, check),
        ss.branch(check, when=is_good, then=story, otherwise=ss.END),
        ss.then(story, ss.END),
    ]).compile()


def test_agents_and_steps_chain_on_every_surface() -> None:
    machine = story_flow()
    script: list[ScriptStep] = [
        [assistant_message('{"text": "a good outline"}')],
        [assistant_message("Once upon a time")],
    ]
    out = run_all(machine, "a story please", script)
    result = out.result
    assert result.final_output == "Once upon a time"
    assert result.last_agent == "story"
    assert [(i.type, i.agent) for i in result.new_items] == [
        ("message_output_item", "outline"), ("message_output_item", "story")]
    # the story agent got the step's output as JSON text, and only that
    story_call = out.model.calls[1]
    assert story_call.agent == "story"
    assert [json.loads(text_of(i)) for i in story_call.input] == [
        {"good": True, "genre": "scifi"}]


def test_branch_otherwise_ends_with_the_step_output() -> None:
    result = story_flow().run_sync(
        "x", model=ScriptedModel([[assistant_message('{"text": "a dull outline"}')]]))
    assert result.final_output == Check(good=False, genre="scifi")
    assert result.last_agent == "check"


def test_stream_names_every_node() -> None:
    machine = story_flow()
    model = ScriptedModel([[assistant_message('{"text": "good"}')], [assistant_message("S")]])
    streamed = machine.run_streamed("x", model=model)

    async def consume() -> list[Any]:
        return [e async for e in streamed.stream_events()]

    events = asyncio.run(consume())
    nodes = [(e.node, e.kind) for e in events if isinstance(e, FlowNodeStreamEvent)]
    assert nodes == [("outline", "agent"), ("check", "step"), ("story", "agent")]
    assert streamed.final_output == "S"


def test_pause_in_an_agent_node_resumes_from_json_where_it_stopped() -> None:
    RAN.clear()
    machine = story_flow()
    script: list[ScriptStep] = [
        [assistant_message('{"text": "good one"}')],
        [function_call("publish", {"title": "Dune"})],
        [assistant_message("published!")],
    ]
    model = ScriptedModel(script)
    first = machine.run_sync("x", model=model)
    assert first.final_output is None and [i.name for i in first.interruptions] == ["publish"]
    assert RAN == ["check:good one"]
    state = ss.RunState.from_json(first.to_state().to_json())
    state.approve(first.interruptions[0])
    done = run_all(machine, state, lambda: ScriptedModel([[assistant_message("published!")]]))
    assert done.result.final_output == "published!"
    # the outline agent and the check step did not run again: only publish ran, per surface
    assert RAN == ["check:good one"] + ["publish:Dune"] * 3
    types = [(i.type, i.agent) for i in done.result.new_items]
    assert types == [
        ("message_output_item", "outline"), ("tool_call_item", "story"),
        ("tool_approval_item", "story"), ("tool_call_output_item", "story"),
        ("message_output_item", "story")]


def test_async_step_with_context_and_typed_entry_input() -> None:
    flow = ss.Workflow("ctx", check, flow=[
        ss.then(check, describe), ss.then(describe, ss.END)])
    result = flow.compile().run_sync('{"text": "good"}', context={"style": "short"})
    assert result.final_output == "short scifi story"
    bad = flow.compile()
    with pytest.raises(ss.UserError, match=r"'check' takes Outline \(as JSON\), and the run"):
        bad.run_sync("not json")


def judge_flow(budget: int) -> ss.StateMachine:
    writer = ss.Agent("writer", "Write.")
    judge = ss.Agent("judge", "Judge.", output_type=Verdict)
    return ss.Workflow("judge", writer, flow=[
        ss.then(writer, judge),
        ss.route(judge, on="score", max_uses=budget,
                 cases={"pass": ss.END, "needs_improvement": writer}),
    ]).compile()


def _verdict(score: str) -> list[Any]:
    return [assistant_message(json.dumps({"score": score, "feedback": "more"}))]


def test_judge_loop_goes_round_until_it_passes() -> None:
    script: list[ScriptStep] = [[assistant_message("v1")], _verdict("needs_improvement"),
              [assistant_message("v2")], _verdict("pass")]
    out = run_all(judge_flow(3), "write", script)
    assert out.result.final_output == Verdict(score="pass", feedback="more")
    assert [c.agent for c in out.model.calls] == ["writer", "judge", "writer", "judge"]


def test_a_spent_loop_budget_stops_the_run_and_keeps_its_items() -> None:
    script: list[ScriptStep] = [[assistant_message("v1")], _verdict("needs_improvement"),
              [assistant_message("v2")], _verdict("needs_improvement")]
    with pytest.raises(ss.MaxTurnsExceeded, match="judge → writer was taken 1 time") as info:
        judge_flow(1).run_sync("write", model=ScriptedModel(script))
    assert len(info.value.run_data.new_items) == 4


class EchoModel:
    """Answers by rule: a translator echoes its input; a gated one first calls publish."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        last = request.input[-1]
        first = request.input[0]
        self.calls.append(f"{request.agent}:{getattr(first, 'content', '')}")
        if request.agent == "gated" and "gate" in text_of(first) and last is first:
            n = len(self.calls)
            return ModelResponse((OutputFunctionCall("publish", '{"title": "g"}', f"c{n}"),))
        return ModelResponse((OutputMessage(f"<{text_of(first)}>"),))


def fan_flow(each: str = "translator") -> ss.StateMachine:
    translator = ss.Agent(each, "Translate.", tools=[publish])
    return ss.Workflow("fan", split, flow=[
        ss.fan_out(split, over="items", each=translator, then=joined, max_items=4,
                   concurrency=2),
        ss.then(joined, ss.END),
    ]).compile()


def test_fan_out_runs_each_element_and_joins_in_order() -> None:
    result = fan_flow().run_sync("a b c", model=EchoModel())
    assert result.final_output == "<a>+<b>+<c>"
    assert [text_of(i) for i in result.new_items] == ["<a>", "<b>", "<c>"]


def test_fan_out_over_steps() -> None:
    RAN.clear()
    flow = ss.Workflow("fan-steps", split, flow=[
        ss.fan_out(split, over="items", each=upper, then=joined, max_items=3),
        ss.then(joined, ss.END)])
    assert flow.compile().run_sync("x y").final_output == "X+Y"
    with pytest.raises(ss.ModelBehaviorError, match="4 elements in 'items', more than"):
        flow.compile().run_sync("a b c d")


def test_pause_in_a_fan_out_branch_keeps_the_finished_branches() -> None:
    RAN.clear()
    machine = fan_flow("gated")
    model = EchoModel()
    first = machine.run_sync("a gate c", model=model)
    assert [i.name for i in first.interruptions] == ["publish"]
    assert sorted(model.calls) == ["gated:a", "gated:c", "gated:gate"]
    text = first.to_state().to_json()
    state = ss.RunState.from_json(text)
    state.approve(first.interruptions[0].call_id)
    model2 = EchoModel()
    done = machine.run_sync(state, model=model2)
    assert done.final_output == "<a>+<gate>+<c>"
    assert model2.calls == ["gated:gate"]  # a and c are not run again
    assert RAN == ["publish:g"]
    # the paused run's items stay a prefix of the finished run's items: the finished
    # branches first (in element order), then the one the resume ran (docs/flows.md)
    assert done.new_items[: len(first.new_items)] == first.new_items
    said = [text_of(i) for i in done.new_items if i.type == "message_output_item"]
    assert said == ["<a>", "<c>", "<gate>"]


def test_a_tampered_flow_state_fails_closed() -> None:
    first = story_flow().run_sync("x", model=ScriptedModel([
        [assistant_message('{"text": "good"}')], [function_call("publish", {"title": "t"})]]))
    doc = json.loads(first.to_state().to_json())
    doc["body"]["flow"]["node"] = "nowhere"
    with pytest.raises(ss.StateError, match="digest"):
        ss.RunState.from_json(json.dumps(doc))
    state = first.to_state()
    assert state.flow is not None
    state.flow.node = "nowhere"
    with pytest.raises(ss.StateError, match="flow node 'nowhere'"):
        story_flow().run_sync(state, model=ScriptedModel([]))


def test_a_failing_step_keeps_the_run() -> None:
    @ss.step
    def explode(outline: Outline) -> str:
        raise RuntimeError("boom")

    outline = ss.Agent("outline", "x", output_type=Outline)
    machine = ss.Workflow("boom", outline, flow=[
        ss.then(outline, explode), ss.then(explode, ss.END)], ignore=["SW709"]).compile()
    with pytest.raises(RuntimeError, match="boom") as info:
        machine.run_sync("x", model=ScriptedModel([[assistant_message('{"text": "t"}')]]))
    data = info.value.run_data  # type: ignore[attr-defined]
    assert [i.agent for i in data.new_items] == ["outline"]
    assert data.to_state().flow.node == "explode"


STAMPED: list[int] = []


@ss.function_tool(needs_approval=True)
def stamp(n: int) -> str:
    """Stamp round n."""
    STAMPED.append(n)
    return f"stamped {n}"


@ss.step
def again(v: Verdict) -> str:
    return f"again: {v.feedback}"


stamper = ss.Agent("stamper", "Stamp it, then grade it.", tools=[stamp], output_type=Verdict)
stamp_loop = ss.Workflow("stamp_loop", stamper, flow=[
    ss.route(stamper, on="score", max_uses=2, cases={"needs_improvement": again,
                                                      "pass": ss.END}),
    ss.then(again, stamper),
])


def stamp_script() -> list[ScriptStep]:
    """Two rounds, each pausing on a stamp; both calls are ``call_0`` (ids numbered per
    response, as some servers do)."""
    return [
        [function_call("stamp", {"n": 1}, call_id="call_0")],
        [assistant_message('{"score": "needs_improvement", "feedback": "more"}')],
        [function_call("stamp", {"n": 2}, call_id="call_0")],
        [assistant_message('{"score": "pass", "feedback": "ok"}')],
    ]


def test_a_loop_back_to_a_paused_node_lists_only_the_new_round_s_approval() -> None:
    """The node's run sits under the same key in each round: the first round's decided
    approval must not come back as pending (nor be decided again) in the second."""
    STAMPED.clear()
    machine = stamp_loop.compile()
    model = ScriptedModel(stamp_script())
    first = machine.run_sync("go", model=model)
    assert [json.loads(i.arguments) for i in first.interruptions] == [{"n": 1}]
    state = first.to_state()
    state.approve(first.interruptions[0])
    second = machine.run_sync(state, model=model)
    assert [json.loads(i.arguments) for i in second.interruptions] == [{"n": 2}]
    state = ss.RunState.from_json(second.to_state().to_json())
    assert [json.loads(i.arguments) for i in state.interruptions] == [{"n": 2}]
    state.approve("call_0")  # a bare id names the one pending call
    done = machine.run_sync(state, model=model)
    assert done.final_output == Verdict(score="pass", feedback="ok")
    assert STAMPED == [1, 2]


FLAKY: set[str] = set()
"""Words whose branch fails (once each): the fan-out's sync branches below."""


@ss.step
def shout(ctx: ss.RunContext[dict[str, str]], word: str) -> str:
    RAN.append(f"shout:{word}")
    if word in FLAKY:
        FLAKY.discard(word)
        raise RuntimeError(f"no {word}")
    return word.upper() + ctx.context["mark"]


def shout_flow() -> ss.StateMachine:
    return ss.Workflow("shout", split, flow=[
        ss.fan_out(split, over="items", each=shout, then=joined, max_items=5),
        ss.then(joined, ss.END)], context_type=dict[str, str]).compile()


def test_a_failing_sync_branch_resumes_alone_and_the_join_keeps_input_order() -> None:
    """Sync branches are called one after another (no task each), yet each branch's
    outcome is its own: every branch runs, the first failure is raised after them all,
    and a resume from the error's state calls only the failed ones again."""
    RAN.clear()
    FLAKY.update({"b", "d"})
    machine = shout_flow()
    with pytest.raises(RuntimeError, match="no b") as info:
        machine.run_sync("a b c d e", context={"mark": "!"})
    assert RAN == ["shout:a", "shout:b", "shout:c", "shout:d", "shout:e"]
    data = info.value.run_data  # type: ignore[attr-defined]
    state = ss.RunState.from_json(data.to_state().to_json())
    RAN.clear()
    done = machine.run_sync(state, context={"mark": "!"})
    assert RAN == ["shout:b", "shout:d"]
    assert done.final_output == "A!+B!+C!+D!+E!"


@ss.step
def split_counted(text: str) -> Plan:
    RAN.append("split")
    return Plan(items=text.split())


@ss.step
def interrupted(word: str) -> str:
    RAN.append(word)
    if word in FLAKY:
        FLAKY.discard(word)
        raise KeyboardInterrupt
    return word.upper()


def test_an_interrupt_in_a_sync_branch_leaves_a_state_at_the_fan_out() -> None:
    """Ctrl-C inside a branch is no branch's failure: the state the error carries
    resumes at the fan-out itself (its step is not called again), every branch anew."""
    RAN.clear()
    FLAKY.add("b")
    machine = ss.Workflow("ctrl_c", split_counted, flow=[
        ss.fan_out(split_counted, over="items", each=interrupted, then=joined, max_items=3),
        ss.then(joined, ss.END)]).compile()
    with pytest.raises(KeyboardInterrupt) as info:
        machine.run_sync("a b c")
    assert RAN == ["split", "a", "b"]
    state = ss.RunState.from_json(info.value.run_data.to_state().to_json())  # type: ignore[attr-defined]
    assert state.flow is not None and state.flow.fan is not None
    RAN.clear()
    assert machine.run_sync(state).final_output == "A+B+C"
    assert RAN == ["a", "b", "c"]


@ss.step
def badly_typed(word: str) -> int:
    return word  # type: ignore[return-value]


def test_a_sync_branch_output_that_misfits_its_annotation_is_a_located_user_error() -> None:
    machine = ss.Workflow("misfit", split, flow=[
        ss.fan_out(split, over="items", each=badly_typed, then=ss.END, max_items=3)],
        ignore=["SW7"]).compile()
    with pytest.raises(ss.UserError, match=r"step 'badly_typed' at .*\.py:\d+ returned str"):
        machine.run_sync("x y")


@ss.step
def anything(word: str) -> Any:
    return {"word": word}


def test_a_step_annotated_any_passes_whatever_it_returns() -> None:
    machine = ss.Workflow("any", split, flow=[
        ss.fan_out(split, over="items", each=anything, then=ss.END, max_items=3)],
        ignore=["SW7"]).compile()
    assert machine.run_sync("x y").final_output == [{"word": "x"}, {"word": "y"}]


RUNNING: list[int] = [0, 0]
"""Async branches running now, and the most at once."""


@ss.step
async def slow_upper(word: str) -> str:
    RUNNING[0] += 1
    RUNNING[1] = max(RUNNING)
    await asyncio.sleep(0.01)
    RUNNING[0] -= 1
    return word.upper()


def test_async_branches_keep_the_concurrency_limit() -> None:
    RUNNING[:] = [0, 0]
    machine = ss.Workflow("limit", split, flow=[
        ss.fan_out(split, over="items", each=slow_upper, then=joined, max_items=6,
                   concurrency=2),
        ss.then(joined, ss.END)]).compile()
    assert machine.run_sync("a b c d e f").final_output == "A+B+C+D+E+F"
    assert RUNNING == [0, 2]
