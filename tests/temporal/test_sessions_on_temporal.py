"""Conversations on Temporal: the conversation id is the workflow id, run once per
message; the history is read and each settled turn appended by activities on a real
SQLite file, so the next run continues at the agent that holds the conversation. The
stored conversation equals the one an in-process run with a session writes."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer

from graphs.support import support
from stepswitch.sessions import SQLiteSession
from stepswitch.temporal import (
    Decision,
    RunInput,
    RunOutput,
    worker_for,
    workflow_for,
    workflow_name,
)
from stepswitch.temporal._codec import write_items
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests.temporal.drive import wait_for_interruptions


def _script() -> list[ScriptStep]:
    return [
        # message 1: triage hands the refund over; the refund agent asks which order
        [function_call("transfer_to_refund", {})],
        [assistant_message("Which order should I refund?")],
        # message 2, at the refund agent: a refund that needs an approval, then the answer
        [function_call("process_refund", {"order_id": 42})],
        [assistant_message("Order 42 is refunded.")],
    ]


MESSAGES = ("I want a refund", "order 42")


def _stored(path: Path, conversation: str) -> tuple[list[dict[str, Any]], int, str | None]:
    async def load() -> tuple[list[dict[str, Any]], int, str | None]:
        session = SQLiteSession(conversation, str(path))
        try:
            snap = await session.load()
        finally:
            await session.close()
        return write_items(snap.items), snap.version, snap.current_agent

    return asyncio.run(load())


def _in_process(path: Path) -> ScriptedModel:
    machine, model = support.compile(), ScriptedModel(_script())
    session = SQLiteSession("conversation", str(path))
    for text in MESSAGES:
        result = machine.run_sync(text, model=model, session=session)
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                state.approve(item)
            result = machine.run_sync(state, model=model, session=session)
    asyncio.run(session.close())
    return model


@pytest.mark.parametrize("options", [{}, {"continue_as_new_after": 1}],
                         ids=["one-run-per-message", "continue-as-new-each-turn"])
def test_a_conversation_is_a_workflow_id_and_continues_at_its_agent(
    dev_server: str, tmp_path: Path, options: dict[str, Any]
) -> None:
    machine = support.compile()
    db = tmp_path / "conversations.db"
    conversation = f"conversation-{uuid.uuid4().hex[:8]}"
    queue = f"s-{uuid.uuid4().hex[:8]}"
    model = ScriptedModel(_script())

    async def go() -> list[RunOutput]:
        client = await Client.connect(dev_server)
        outputs, histories = [], []
        async with worker_for(client, machine, task_queue=queue, model=model,
                              sessions=f"sqlite:///{db}", **options):
            for text in MESSAGES:
                handle = await client.start_workflow(
                    workflow_name(machine), RunInput(text, session_id=conversation),
                    id=conversation, task_queue=queue, result_type=RunOutput,
                )
                task = asyncio.ensure_future(handle.result())
                if text == "order 42":
                    [pending] = await wait_for_interruptions(handle)
                    await handle.execute_update("decide", Decision(pending.call_id, True))
                outputs.append(await task)
                histories.append(await handle.fetch_history())
        for history in histories:
            await Replayer(workflows=[workflow_for(machine, **options)]).replay_workflow(history)
        return outputs

    first, second = asyncio.run(go())
    assert (first.last_agent, second.last_agent) == ("refund", "refund")
    if options:
        assert (first.runs, second.runs) == (2, 2)
    assert second.final_output == "Order 42 is refunded."
    # the second run started at the refund agent, having read the first run's turns
    assert [c.agent for c in model.calls] == ["triage", "refund", "refund", "refund"]
    seen = [i.content for i in model.calls[2].input if i.type == "user_input_item"]
    assert seen == list(MESSAGES)

    items, version, agent = _stored(db, conversation)
    assert agent == "refund"
    assert [i["type"] for i in items] == [
        "user_input_item", "handoff_call_item", "handoff_output_item", "message_output_item",
        "user_input_item", "tool_call_item", "tool_call_output_item", "message_output_item",
    ]
    # the same conversation as an in-process run with a session writes
    reference = tmp_path / "reference.db"
    _in_process(reference)
    ref_items, ref_version, ref_agent = _stored(reference, "conversation")
    assert (items, agent) == (ref_items, ref_agent)
    # in-process, resuming after the approval claims the session (an empty append: one
    # version more); the workflow holds the conversation by its id and needs no claim
    assert version == ref_version - 1


def test_a_session_id_other_than_the_workflow_id_is_refused(dev_server: str,
                                                            tmp_path: Path) -> None:
    machine = support.compile()
    queue = f"s-{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        client = await Client.connect(dev_server)
        async with worker_for(client, machine, task_queue=queue,
                              model=ScriptedModel(_script()),
                              sessions=f"sqlite:///{tmp_path / 'c.db'}"):
            with pytest.raises(WorkflowFailureError) as failed:
                await client.execute_workflow(
                    workflow_name(machine), RunInput("hi", session_id="someone-else"),
                    id=f"mine-{uuid.uuid4().hex[:8]}", task_queue=queue, result_type=RunOutput,
                )
        cause = failed.value.cause
        assert isinstance(cause, ApplicationError) and cause.type == "UserError"
        assert "is not this workflow's id" in cause.message

    asyncio.run(go())


def test_a_worker_without_sessions_says_how_to_give_it_some(dev_server: str) -> None:
    machine = support.compile()
    queue = f"s-{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        client = await Client.connect(dev_server)
        async with worker_for(client, machine, task_queue=queue,
                              model=ScriptedModel(_script())):
            conversation = f"c-{uuid.uuid4().hex[:8]}"
            with pytest.raises(WorkflowFailureError) as failed:
                await client.execute_workflow(
                    workflow_name(machine), RunInput("hi", session_id=conversation),
                    id=conversation, task_queue=queue, result_type=RunOutput,
                )
        cause = failed.value.cause
        assert isinstance(cause, ApplicationError)
        assert "the worker has no sessions" in cause.message

    asyncio.run(go())
