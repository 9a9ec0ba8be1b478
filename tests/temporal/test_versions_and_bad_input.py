"""A worker whose machine changed under a running workflow fails it loudly; bad input
(unknown or repeated decisions, an unreachable server, a queue nobody polls) gets a
clear error and leaves the run unharmed."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer

import stepswitch as ss
from stepswitch.errors import UserError
from stepswitch.temporal import (
    Decision,
    RunInput,
    RunOutput,
    connect,
    machine_digest,
    wait_for_worker,
    worker_for,
    workflow_for,
    workflow_name,
)
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests.conformance.kit import Ledger, compile_agents, refund_tool
from tests.temporal.drive import wait_for_interruptions


def _machine(instructions: str) -> ss.StateMachine:
    ledger = Ledger()
    a = ss.Agent("a", instructions=instructions, tools=[refund_tool(ledger, needs_approval=True)])
    return compile_agents(a)


def _script() -> list[Any]:
    return [[function_call("process_refund", {"order_id": 5})], [assistant_message("done")]]


def test_a_worker_whose_machine_changed_fails_the_running_run_loudly(dev_server: str) -> None:
    old, new = _machine("Refund politely."), _machine("Refund twice as politely.")
    assert machine_digest(old) != machine_digest(new)
    queue = f"v-{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        client = await Client.connect(dev_server)
        async with worker_for(client, old, task_queue=queue, model=ScriptedModel(_script())):
            handle = await client.start_workflow(
                workflow_name(old), RunInput("refund 5"), id=f"v-{uuid.uuid4().hex}",
                task_queue=queue, result_type=RunOutput,
            )
            pending = await wait_for_interruptions(handle)
        # the history so far is the old machine's own: it replays cleanly (the final
        # history, written by two machines, is by design replayable by neither)
        before = await handle.fetch_history()
        await Replayer(workflows=[workflow_for(old)]).replay_workflow(before)
        # the deploy: the old worker is gone, a worker with the changed machine takes over
        async with worker_for(client, new, task_queue=queue, model=ScriptedModel(_script())):
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await handle.execute_update("decide", Decision(pending[0].call_id, True))
            with pytest.raises(WorkflowFailureError) as failed:
                await handle.result()
        for error in (refused.value.cause, failed.value.cause):
            assert isinstance(error, ApplicationError)
            assert error.type == "MachineChanged"
            assert machine_digest(old) in error.message and machine_digest(new) in error.message

    asyncio.run(go())


def test_a_client_may_pin_the_digest_and_a_worker_of_another_version_refuses_at_once(
    dev_server: str,
) -> None:
    old, new = _machine("Refund politely."), _machine("Refund twice as politely.")
    queue = f"p-{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        client = await Client.connect(dev_server)
        async with worker_for(client, new, task_queue=queue, model=ScriptedModel(_script())):
            # pinned to the worker's own machine: it runs, without the stamp activity
            handle = await client.start_workflow(
                workflow_name(new), RunInput("refund 5", digest=machine_digest(new)),
                id=f"p-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
            )
            [pending] = await wait_for_interruptions(handle)
            await handle.execute_update("decide", Decision(pending.call_id, True))
            assert (await handle.result()).final_output == "done"
            history = await handle.fetch_history()
            markers = [e for e in history.events if e.HasField("marker_recorded_event_attributes")]
            assert not any(b"stamp" in e.SerializeToString() for e in markers)
            await Replayer(workflows=[workflow_for(new)]).replay_workflow(history)
            # pinned to another version: refused before anything runs
            stale = await client.start_workflow(
                workflow_name(new), RunInput("refund 5", digest=machine_digest(old)),
                id=f"p-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
            )
            with pytest.raises(WorkflowFailureError) as failed:
                await stale.result()
        error = failed.value.cause
        assert isinstance(error, ApplicationError) and error.type == "MachineChanged"
        assert machine_digest(old) in error.message and machine_digest(new) in error.message

    asyncio.run(go())


def test_unknown_and_repeated_decisions_are_refused_and_the_run_goes_on(dev_server: str) -> None:
    machine = _machine("Refund.")
    queue = f"d-{uuid.uuid4().hex[:8]}"

    async def go() -> RunOutput:
        client = await Client.connect(dev_server)
        async with worker_for(client, machine, task_queue=queue, model=ScriptedModel(_script())):
            handle = await client.start_workflow(
                workflow_name(machine), RunInput("refund 5"), id=f"d-{uuid.uuid4().hex}",
                task_queue=queue, result_type=RunOutput,
            )
            [pending] = await wait_for_interruptions(handle)
            with pytest.raises(WorkflowUpdateFailedError) as unknown:
                await handle.execute_update("decide", Decision("call_nope", True))
            cause = unknown.value.cause
            assert isinstance(cause, ApplicationError)
            assert cause.message == (
                f"no approval is pending for call id 'call_nope' (pending: {pending.call_id})"
            )
            answer = await handle.execute_update("decide", Decision(pending.call_id, False))
            assert answer == f"rejected process_refund ({pending.call_id})"
            with pytest.raises(WorkflowUpdateFailedError) as again:
                await handle.execute_update("decide", Decision(pending.call_id, True))
            cause = again.value.cause
            assert isinstance(cause, ApplicationError)
            assert "already decided (rejected)" in cause.message
            output: RunOutput = await handle.result()
            history = await handle.fetch_history()
        await Replayer(workflows=[workflow_for(machine)]).replay_workflow(history)
        return output

    output = asyncio.run(go())
    assert output.final_output == "done"
    assert [i["type"] for i in output.items][-2:] == ["tool_call_output_item",
                                                      "message_output_item"]
    assert output.items[-2]["output"].startswith("Tool execution was not approved")


def test_an_unreachable_server_is_a_one_line_error() -> None:
    async def go() -> None:
        started = time.monotonic()
        with pytest.raises(UserError, match=r"cannot reach the Temporal server at 127\.0\.0\.1:9"):
            await connect("127.0.0.1:9", timeout=3)
        assert time.monotonic() - started < 10
        with pytest.raises(UserError, match="expected HOST:PORT"):
            await connect("nowhere")

    asyncio.run(go())


def test_a_task_queue_without_a_worker_is_a_bounded_wait(dev_server: str) -> None:
    async def go() -> None:
        client = await Client.connect(dev_server)
        started = time.monotonic()
        with pytest.raises(UserError, match="no worker polls task queue 'nobody-home'"):
            await wait_for_worker(client, "nobody-home", timeout=0.5)
        assert time.monotonic() - started < 5

    asyncio.run(go())
