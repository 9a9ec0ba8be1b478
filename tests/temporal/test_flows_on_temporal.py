"""Flows on Temporal: each scenario's items, final output, last node and approvals (or
error) are the in-process run's; every history replays with ``Replayer``; steps are
activities (or local activities), agents' pauses wait on the ``decide`` update."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer

import stepswitch as ss
from graphs.judge import JudgeState, judge
from graphs.story import StoryState, story
from stepswitch.cli.main import main
from stepswitch.temporal import (
    Decision,
    Interruption,
    RunInput,
    RunOutput,
    machine_digest,
    worker_for,
    workflow_for,
    workflow_name,
)
from stepswitch.temporal._codec import write_items
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests._paths import ROOT
from tests.temporal import flow_cases as fc
from tests.temporal.conftest import wait_until_polling
from tests.temporal.drive import Script, Seen, in_process, on_temporal, wait_for_interruptions


def _verdict(score: str) -> list[Any]:
    return [assistant_message(json.dumps({"feedback": f"{score}!", "score": score}))]


def _check(good: bool, scifi: bool) -> list[Any]:
    return [assistant_message(json.dumps({"good_quality": good, "is_scifi": scifi}))]


# name: (machine, input, script, context in-process, context on Temporal)
Case = tuple[ss.StateMachine, str, Script, Any, Any]

CASES: dict[str, Callable[[], Case]] = {
    "then_chain": lambda: (fc.then_chain(), "a story", [
        [assistant_message('{"text": "a good one"}')], [assistant_message("Once upon")],
    ], {"style": "short"}, {"style": "short"}),
    "branch_then_with_context": lambda: (story.compile(), "space", [
        [assistant_message("outline: a ship")], _check(True, True),
        [assistant_message("The ship sailed.")],
    ], StoryState(), None),
    "branch_otherwise": lambda: (story.compile(), "a cat", [
        [assistant_message("outline: a cat")], _check(True, False),
    ], StoryState(), None),
    "route_loop_with_context": lambda: (judge.compile(), "a heist", [
        [assistant_message("outline 1")], _verdict("needs_improvement"),
        [assistant_message("outline 2")], _verdict("fail"),
        [assistant_message("outline 3")], _verdict("pass"),
    ], JudgeState(), {"request": "", "outline": ""}),
    "route_budget_spent": lambda: (judge.compile(), "a heist", [
        step for n in range(4)
        for step in ([assistant_message(f"outline {n}")], _verdict("needs_improvement"))
    ], JudgeState(), None),
    "fan_out_over_steps": lambda: (fc.fan_steps(), "a b c d", [], None, None),
    "fan_out_over_agents": lambda: (fc.fan_agents(), "a b c", fc.by_input, None, None),
    "approval_in_agent_node": lambda: (fc.gated_story(), "x", [
        [assistant_message('{"text": "good one"}')],
        [function_call("publish", {"title": "Dune"}, call_id="c1")],
        [assistant_message("published!")],
    ], None, None),
    "approval_in_fan_out_branch": lambda: (fc.fan_agents(), "a gate c", fc.by_input,
                                           None, None),
    # both rounds' calls are call_0: the second pause lists only its own
    "approval_in_a_loop_twice": lambda: (fc.publish_loop(), "x", [
        [function_call("publish", {"title": "one"}, call_id="call_0")],
        [assistant_message('{"score": "needs_improvement", "feedback": "more"}')],
        [function_call("publish", {"title": "two"}, call_id="call_0")],
        [assistant_message('{"score": "pass", "feedback": "ok"}')],
    ], None, None),
}


def _both(dev_server: str, case: Case, approve: bool = True, **options: Any
          ) -> tuple[Seen, Seen, Any]:
    machine, input, script, local_context, remote_context = case
    expected = in_process(machine, input, script, approve, local_context)

    async def go() -> Any:
        client = await Client.connect(dev_server)
        return await on_temporal(client, machine, input, script, approve, remote_context,
                                 **options)

    seen, history = asyncio.run(go())
    return expected, seen, history


@pytest.mark.parametrize("name", sorted(CASES))
def test_flow_on_temporal_matches_in_process(dev_server: str, name: str) -> None:
    expected, seen, history = _both(dev_server, CASES[name]())
    assert seen.error == expected.error
    assert seen.items == expected.items
    assert seen.final_output == expected.final_output
    assert seen.last_agent == expected.last_agent
    assert seen.asked == expected.asked
    assert len(history.events) > 3


def test_the_scenarios_say_what_they_should() -> None:
    """The cases above are not vacuous: what each in-process run shows."""
    def run(name: str) -> Seen:
        machine, input, script, context, _ = CASES[name]()
        return in_process(machine, input, script, True, context)

    assert run("then_chain").final_output == "Once upon"
    assert run("branch_then_with_context").final_output == "The ship sailed."
    assert run("branch_otherwise").final_output == (
        "Outline is not a scifi story, so we stop here.")
    assert run("route_loop_with_context").final_output == "outline 3"
    assert run("route_budget_spent").error is not None
    assert run("route_budget_spent").error[0] == "FlowBudgetExceeded"  # type: ignore[index]
    assert run("fan_out_over_steps").final_output == "A+B+C+D"
    assert run("fan_out_over_agents").final_output == "<a>+<b>+<c>"
    assert run("approval_in_agent_node").asked == [["c1"]]
    assert run("approval_in_fan_out_branch").asked == [["c-gate"]]
    looped = run("approval_in_a_loop_twice")
    assert looped.asked == [["call_0"], ["call_0"]]
    assert looped.final_output == {"score": "pass", "feedback": "ok"}


@pytest.mark.parametrize("name", ["approval_in_agent_node", "approval_in_fan_out_branch"])
def test_a_rejected_approval_in_a_flow_matches_in_process(dev_server: str, name: str) -> None:
    expected, seen, _ = _both(dev_server, CASES[name](), approve=False)
    assert seen.asked == expected.asked and seen.asked
    assert seen.items == expected.items
    assert seen.final_output == expected.final_output
    rejected = [i for i in seen.items if i["type"] == "tool_call_output_item"]
    assert rejected and "published" not in json.dumps(rejected)


def test_a_step_that_raises_fails_the_run_with_its_error_and_the_run_so_far(
    dev_server: str,
) -> None:
    machine, input = fc.failing(), "x"
    script = [[assistant_message('{"text": "good one"}')]]
    with pytest.raises(ValueError, match="no scifi story today") as info:
        machine.run_sync(input, model=fc.by_input())
    assert len(info.value.run_data.new_items) == 1  # type: ignore[attr-defined]

    async def go() -> Any:
        client = await Client.connect(dev_server)
        return await on_temporal(client, machine, input, script)

    seen, _ = asyncio.run(go())
    assert seen.error == ("ValueError", "no scifi story today")
    assert [i["agent"] for i in seen.items] == ["outline"]


@pytest.mark.parametrize("name", ["then_chain", "fan_out_over_steps", "approval_in_agent_node"])
def test_local_activities_run_steps_without_a_round_trip(dev_server: str, name: str) -> None:
    expected, seen, history = _both(dev_server, CASES[name](), local_activities=True)
    assert (seen.items, seen.final_output, seen.asked) == (
        expected.items, expected.final_output, expected.asked)
    kinds = {e.WhichOneof("attributes") for e in history.events}
    assert "activity_task_scheduled_event_attributes" not in kinds  # all local: markers


def test_local_models_keep_steps_as_activities_as_they_keep_tools(dev_server: str) -> None:
    expected, seen, history = _both(dev_server, CASES["then_chain"](),
                                    local_activities="models")
    assert (seen.items, seen.final_output) == (expected.items, expected.final_output)
    names = [e.activity_task_scheduled_event_attributes.activity_type.name
             for e in history.events
             if e.WhichOneof("attributes") == "activity_task_scheduled_event_attributes"]
    assert names == ["tests.temporal.flow_cases:check", "tests.temporal.flow_cases:describe"]


def test_steps_are_activities_named_by_their_import_path_fanned_out_two_at_once(
    dev_server: str,
) -> None:
    _, seen, history = _both(dev_server, CASES["fan_out_over_steps"]())
    names: list[str] = []
    running = most = 0
    for e in history.events:
        kind = e.WhichOneof("attributes")
        if kind == "activity_task_scheduled_event_attributes":
            names.append(e.activity_task_scheduled_event_attributes.activity_type.name)
            running += 1
            most = max(most, running)
        elif kind == "activity_task_completed_event_attributes":
            running -= 1
    assert names == ["tests.temporal.flow_cases:split", *["tests.temporal.flow_cases:upper"] * 4,
                     "tests.temporal.flow_cases:joined"]
    assert most == 2  # the fan-out's concurrency: its branches at once, two at most
    assert seen.final_output == "A+B+C+D"


def test_a_long_flow_continues_as_new_at_an_agent_nodes_turn(dev_server: str) -> None:
    expected, seen, _ = _both(dev_server, CASES["route_loop_with_context"](),
                              continue_as_new_after=2)
    assert seen.error is None
    assert seen.items == expected.items
    assert seen.final_output == "outline 3"  # the context the steps kept crossed over too
    assert seen.runs == 3  # 6 model turns, at most 2 per workflow run


def test_bad_input_to_a_flow_is_a_one_line_error_and_no_retry(dev_server: str) -> None:
    machine = fc.typed_entry()
    with pytest.raises(ss.UserError) as info:
        machine.run_sync("not json")
    said = str(info.value)
    assert said == ("flow entry 'check' takes Outline (as JSON), and the run's input does "
                    "not fit: Invalid JSON: expected ident at line 1 column 2 (got 'not json')")

    async def go(text: str) -> Seen:
        client = await Client.connect(dev_server)
        seen, _ = await on_temporal(client, machine, text, [])
        return seen

    assert asyncio.run(go("not json")).error == ("UserError", said)
    # a step whose output does not fit its declared type: revalidated in the workflow
    kind, message = asyncio.run(go('{"text": "good"}')).error or ("", "")
    assert (kind, message) == ("UserError", (
        "flow step 'liar' (tests.temporal.flow_cases:liar) returned a value that does not "
        "fit its output type: text: Field required (got {'title': 'not an outline'})"))


def test_a_flow_run_with_a_session_id_is_refused(dev_server: str) -> None:
    machine = fc.fan_steps()

    async def go() -> Any:
        client = await Client.connect(dev_server)
        queue = f"q-{uuid.uuid4().hex[:8]}"
        async with worker_for(client, machine, task_queue=queue):
            with pytest.raises(WorkflowFailureError) as info:
                await client.execute_workflow(
                    workflow_name(machine), RunInput("a b", session_id="s-1"), id="s-1",
                    task_queue=queue, result_type=RunOutput)
        return info.value.cause

    cause = asyncio.run(go())
    assert isinstance(cause, ApplicationError) and cause.type == "UserError"
    assert cause.message == (
        "workflow 'fan_steps' is a flow: session_id is for handoff workflows (a flow "
        "starts at its first node each run); start it without one")


def test_a_step_type_with_no_json_form_is_refused_when_the_workflow_is_made(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    machine = fc.plain_values.compile()
    assert machine.run_sync("hi").final_output == "hi"  # in-process the value never crosses
    # located at the step's declaration, as every error of the user's code is
    site = fc.boxed.site
    assert (site.file, site.line) == (fc.__file__, _line_of(fc.__file__, "def boxed("))
    said = (
        f"{site}: flow step 'boxed' (tests.temporal.flow_cases:boxed): its output type "
        "tests.temporal.flow_cases:Box cannot cross to a Temporal activity as JSON (Unable "
        "to generate pydantic-core schema for <class 'tests.temporal.flow_cases.Box'>); use "
        "a pydantic model, a dataclass or builtin types")
    with pytest.raises(ss.UserError) as info:
        workflow_for(machine)
    assert str(info.value) == said
    monkeypatch.chdir(ROOT)
    # port 9 has no server: the refusal comes first
    for argv in (["worker", "tests/temporal/flow_cases.py:plain_values", "--address",
                  "127.0.0.1:9", "--task-queue", "q"],
                 ["run", "tests/temporal/flow_cases.py:plain_values", "--temporal",
                  "127.0.0.1:9", "--input", "hi"]):
        assert main(argv) == 2
        assert capsys.readouterr().err.strip().splitlines() == [f"stepswitch: error: {said}"]


def test_a_worker_whose_flow_changed_fails_the_paused_flow_loudly(dev_server: str) -> None:
    old, new = fc.gated_story(), fc.gated_story(refusing=True)
    assert old.ir.states == new.ir.states  # the same agents: only the flow's edges differ
    assert machine_digest(old) != machine_digest(new)
    queue = f"v-{uuid.uuid4().hex[:8]}"
    _, _, script, _, _ = CASES["approval_in_agent_node"]()
    assert isinstance(script, list)

    async def go() -> None:
        client = await Client.connect(dev_server)
        async with worker_for(client, old, task_queue=queue, model=ScriptedModel(script)):
            handle = await client.start_workflow(
                workflow_name(old), RunInput("x"), id=f"v-{uuid.uuid4().hex}",
                task_queue=queue, result_type=RunOutput,
            )
            pending = await wait_for_interruptions(handle)
        await Replayer(workflows=[workflow_for(old)]).replay_workflow(
            await handle.fetch_history())
        async with worker_for(client, new, task_queue=queue, model=ScriptedModel(script)):
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await handle.execute_update("decide", Decision(pending[0].call_id, True))
            with pytest.raises(WorkflowFailureError) as failed:
                await handle.result()
        for error in (refused.value.cause, failed.value.cause):
            assert isinstance(error, ApplicationError)
            assert error.type == "MachineChanged"
            assert machine_digest(old) in error.message and machine_digest(new) in error.message

    asyncio.run(go())


BRANCHES = [["flow:translator#0"], ["flow:translator#1"]]
"""Where the twin calls wait: the fan-out node's two branches."""


def _twins_in_process() -> Seen:
    """Both branches pause on call_0: approve branch 0's, reject branch 1's."""
    machine = fc.fan_agents()
    result = machine.run_sync("a b", model=fc.twin_calls)
    pending = result.interruptions
    assert sorted(list(i.run_path) for i in pending) == BRANCHES
    assert [i.call_id for i in pending] == ["call_0", "call_0"]
    state = result.to_state()
    for item in pending:
        if list(item.run_path) == BRANCHES[0]:
            state.approve(item)
        else:
            state.reject(item, "not b")
    result = machine.run_sync(state, model=fc.twin_calls)
    assert not result.interruptions
    final = result.final_output
    return Seen(items=write_items(result.new_items), final_output=final,
                last_agent=result.last_agent)


def test_fan_out_branches_pausing_on_one_call_id_are_decided_one_by_one(
    dev_server: str,
) -> None:
    """The trial's repro: both branches' models number their call call_0. A decision
    without a path is refused with the paths to choose from, harmlessly; with them,
    each call is decided alone, and the run is the in-process run."""
    expected = _twins_in_process()
    assert expected.final_output == "<a: published a>+<b: not b>"
    machine = fc.fan_agents()
    queue = f"twins-{uuid.uuid4().hex[:8]}"

    async def go() -> tuple[RunOutput, Any]:
        client = await Client.connect(dev_server)
        async with worker_for(client, machine, task_queue=queue, model=fc.twin_calls):
            handle = await client.start_workflow(
                workflow_name(machine), RunInput("a b"), id=f"twins-{uuid.uuid4().hex}",
                task_queue=queue, result_type=RunOutput,
            )
            pending = await wait_for_interruptions(handle)
            for _ in range(100):  # the branches pause at once: both listed, each once
                if len(pending) >= 2:
                    break
                await asyncio.sleep(0.05)
                pending = await wait_for_interruptions(handle)
            assert sorted(p.path for p in pending) == BRANCHES
            assert {p.call_id for p in pending} == {"call_0"}
            with pytest.raises(WorkflowUpdateFailedError) as ambiguous:
                await handle.execute_update("decide", Decision("call_0", True))
            cause = ambiguous.value.cause
            assert isinstance(cause, ApplicationError) and cause.type == "AmbiguousCall"
            assert cause.message == (
                "call id 'call_0' names 2 pending calls (publish at flow:translator#0, "
                "publish at flow:translator#1); say which with the decision's path: "
                "['flow:translator#0'] or ['flow:translator#1']")
            again = await handle.query("interruptions", result_type=list[Interruption])
            assert sorted(p.path for p in again) == BRANCHES  # the run is unharmed
            said = await handle.execute_update(
                "decide", Decision("call_0", True, path=BRANCHES[0]), result_type=str)
            assert said == "approved publish (call_0) at flow:translator#0"
            with pytest.raises(WorkflowUpdateFailedError) as twice:
                await handle.execute_update(
                    "decide", Decision("call_0", False, path=BRANCHES[0]))
            assert isinstance(twice.value.cause, ApplicationError)
            assert twice.value.cause.type == "AlreadyDecided"
            assert "at flow:translator#0" in twice.value.cause.message
            said = await handle.execute_update(
                "decide", Decision("call_0", False, "not b", path=BRANCHES[1]),
                result_type=str)
            assert said == "rejected publish (call_0) at flow:translator#1"
            output = await handle.result()
            history = await handle.fetch_history()
        await Replayer(workflows=[workflow_for(machine)]).replay_workflow(history)
        return output, history

    output, history = asyncio.run(go())
    assert output.items == expected.items
    assert output.final_output == expected.final_output
    assert output.last_agent == expected.last_agent
    assert len(history.events) > 3


def test_a_cli_run_with_approve_all_decides_each_of_the_twin_calls(
    dev_server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    monkeypatch.chdir(ROOT)
    queue = f"cli-twins-{uuid.uuid4().hex[:8]}"
    target = "tests/temporal/flow_cases.py:fan_agents_flow"
    worker = subprocess.Popen(
        [sys.executable, "-m", "stepswitch", "worker", target, "--address", dev_server,
         "--task-queue", queue, "--model", "tests/temporal/flow_cases.py:twin_calls"],
        env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        wait_until_polling(dev_server, queue, worker)
        code = main(["run", target, "--temporal", dev_server, "--task-queue", queue,
                     "--input", "a b", "--approve", "all"])
    finally:
        worker.terminate()
        worker.communicate(timeout=20)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out == "<a: published a>+<b: published b>\n"
    assert "approved publish (call_0) at flow:translator#0" in out.err
    assert "approved publish (call_0) at flow:translator#1" in out.err


def _line_of(path: str, text: str) -> int:
    """The 1-based line of ``path`` that starts with ``text``."""
    lines = Path(path).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.startswith(text))
