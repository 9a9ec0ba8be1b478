"""Durability: a worker killed with SIGKILL mid-run, a new worker finishes the run, and
every tool (and every step of a flow) ran exactly once (counted in an SQLite file
outside the workers); an approval decided three days later on the time-skipping server
resumes the run."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import ResetStickyTaskQueueRequest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment
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
from tests._paths import ROOT
from tests.temporal.drive import in_process, wait_for_interruptions
from tests.temporal.flows import counts, durable, durable_flow


def _worker(
    address: str, queue: str, env: dict[str, str], session: str | None = None,
    target: str = "tests/temporal/flows.py:durable",
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "stepswitch", "worker", target,
         "--address", address, "--task-queue", queue,
         "--model", "tests/temporal/flows.py:model", "--model-timeout", "2",
         *(["--session", session] if session else [])],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


async def _recorded(handle: Any, tool: str, timeout: float = 30) -> None:
    """Wait until the server has recorded that ``tool``'s activity completed. Seeing
    the tool's row in the ledger is not enough: a worker killed between the tool's
    return and its completion reaching the server would run it again (after its
    timeout), which is Temporal's at-least-once, not what these tests are about."""
    deadline = time.monotonic() + timeout
    while True:
        history = await handle.fetch_history()
        ids = {e.event_id for e in history.events
               if e.HasField("activity_task_scheduled_event_attributes")
               and e.activity_task_scheduled_event_attributes.activity_type.name.endswith(
                   ":" + tool)}
        if any(e.HasField("activity_task_completed_event_attributes")
               and e.activity_task_completed_event_attributes.scheduled_event_id in ids
               for e in history.events):
            return
        assert time.monotonic() < deadline, f"{tool}'s completion was never recorded"
        await asyncio.sleep(0.05)


async def _kill(proc: subprocess.Popen[bytes], client: Client, handle: Any) -> None:
    """SIGKILL the worker: nothing in it is cleaned up. Then tell the server the worker
    is gone (ResetStickyTaskQueue, what an operator does after losing a host), so the
    run's next workflow task goes to the shared task queue at once instead of after the
    dead worker's sticky queue times out (5 s): the new worker replays the history
    either way; the test only waits less."""
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    await client.workflow_service.reset_sticky_task_queue(ResetStickyTaskQueueRequest(
        namespace=client.namespace,
        execution=WorkflowExecution(workflow_id=handle.id, run_id=handle.result_run_id),
    ))


@pytest.mark.parametrize("conversation", [False, True], ids=["no-session", "session"])
def test_sigkilled_worker_mid_run_then_a_new_worker_finishes_each_tool_once(
    dev_server: str, tmp_path: Path, conversation: bool
) -> None:
    ledger, go = tmp_path / "ledger.db", tmp_path / "go"
    env = {**os.environ, "STEPSWITCH_LEDGER": str(ledger), "STEPSWITCH_GO": str(go)}
    os.environ["STEPSWITCH_LEDGER"] = str(ledger)  # for counts() in this process
    queue = f"durable-{uuid.uuid4().hex[:8]}"
    machine = durable.compile()
    db = tmp_path / "conversations.db"
    session = f"sqlite:///{db}" if conversation else None
    workflow_id = f"durable-{uuid.uuid4().hex}"
    workers = [_worker(dev_server, queue, env, session)]

    async def go_on() -> RunOutput:
        client = await Client.connect(dev_server)
        handle = await client.start_workflow(
            workflow_name(machine),
            RunInput("a lamp, please", session_id=workflow_id if conversation else None),
            id=workflow_id, task_queue=queue, result_type=RunOutput,
        )
        await _recorded(handle, "reserve")
        await asyncio.sleep(0.3)  # the second model call is now in flight, held
        await _kill(workers[0], client, handle)  # mid-run
        go.touch()
        workers.append(_worker(dev_server, queue, env, session))
        pending = await wait_for_interruptions(handle, timeout=30)
        assert [p.call_id for p in pending] == ["c2"]
        await _kill(workers[1], client, handle)  # and again while the run waits for the approval
        workers.append(_worker(dev_server, queue, env, session))
        await handle.execute_update("decide", Decision("c2", True))
        output: RunOutput = await handle.result()
        history = await handle.fetch_history()
        await Replayer(workflows=[workflow_for(machine)]).replay_workflow(history)
        return output

    try:
        output = asyncio.run(go_on())
    finally:
        for w in workers:
            if w.poll() is None:
                w.terminate()
                w.wait(10)
    assert output.final_output == "reserved and charged"
    assert counts(str(ledger)) == {"reserve": 1, "charge": 1}
    assert [i["type"] for i in output.items] == [
        "tool_call_item", "tool_call_output_item", "tool_call_item", "tool_approval_item",
        "tool_call_output_item", "message_output_item",
    ]
    if conversation:
        # every settled turn appended once, across two killed workers
        async def stored() -> list[dict[str, Any]]:
            kept = SQLiteSession(workflow_id, str(db))
            try:
                return write_items((await kept.load()).items)
            finally:
                await kept.close()

        assert [i["type"] for i in asyncio.run(stored())] == [
            "user_input_item", "tool_call_item", "tool_call_output_item", "tool_call_item",
            "tool_call_output_item", "message_output_item",
        ]


def test_sigkilled_worker_mid_flow_then_a_new_worker_finishes_each_step_and_tool_once(
    dev_server: str, tmp_path: Path
) -> None:
    ledger, go = tmp_path / "ledger.db", tmp_path / "go"
    env = {**os.environ, "STEPSWITCH_LEDGER": str(ledger), "STEPSWITCH_GO": str(go)}
    os.environ["STEPSWITCH_LEDGER"] = str(ledger)  # for counts() in this process
    queue = f"durable-flow-{uuid.uuid4().hex[:8]}"
    machine = durable_flow.compile()
    target = "tests/temporal/flows.py:durable_flow"
    workers = [_worker(dev_server, queue, env, target=target)]

    async def go_on() -> RunOutput:
        client = await Client.connect(dev_server)
        handle = await client.start_workflow(
            workflow_name(machine), RunInput("one lamp"),
            id=f"durable-flow-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
        )
        await _recorded(handle, "reserve")
        await asyncio.sleep(0.3)  # the agent node's second model call is in flight, held
        await _kill(workers[0], client, handle)  # mid-flow, mid-node
        go.touch()
        workers.append(_worker(dev_server, queue, env, target=target))
        pending = await wait_for_interruptions(handle, timeout=30)
        assert [(p.call_id, p.agent) for p in pending] == [("c2", "packer")]
        await _kill(workers[1], client, handle)  # and again while the flow waits for the approval
        workers.append(_worker(dev_server, queue, env, target=target))
        await handle.execute_update("decide", Decision("c2", True))
        output: RunOutput = await handle.result()
        history = await handle.fetch_history()
        await Replayer(workflows=[workflow_for(machine)]).replay_workflow(history)
        return output

    try:
        output = asyncio.run(go_on())
    finally:
        for w in workers:
            if w.poll() is None:
                w.terminate()
                w.wait(10)
    assert output.final_output == "receipt: reserved and charged"
    assert output.last_agent == "receipt"
    assert counts(str(ledger)) == {"take_order": 1, "reserve": 1, "charge": 1, "receipt": 1}
    assert [i["type"] for i in output.items] == [
        "tool_call_item", "tool_call_output_item", "tool_call_item", "tool_approval_item",
        "tool_call_output_item", "message_output_item",
    ]


def _support_script() -> list[ScriptStep]:
    return [
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42, "reason": "late"})],
        [assistant_message("Refunded.")],
    ]


def test_an_approval_decided_three_days_later_resumes_the_run(test_server_path: str) -> None:
    machine = support.compile()

    async def go_on() -> tuple[RunOutput, timedelta]:
        env = await WorkflowEnvironment.start_time_skipping(
            test_server_existing_path=test_server_path
        )
        async with env, worker_for(env.client, machine, task_queue="slow-humans",
                              model=ScriptedModel(_support_script())):
            handle = await env.client.start_workflow(
                workflow_name(machine), RunInput("refund order 42"),
                id="three-days", task_queue="slow-humans", result_type=RunOutput,
            )
            pending = await wait_for_interruptions(handle)
            await env.sleep(timedelta(days=3))
            described = await handle.describe()
            assert described.status == WorkflowExecutionStatus.RUNNING
            again = await wait_for_interruptions(handle)
            assert again == pending
            await handle.execute_update("decide", Decision(pending[0].call_id, True))
            output = await handle.result()
            history = await handle.fetch_history()
        await Replayer(workflows=[workflow_for(machine)]).replay_workflow(history)
        events = history.events
        waited = events[-1].event_time.ToDatetime() - events[0].event_time.ToDatetime()
        return output, waited

    output, waited = asyncio.run(go_on())
    assert waited >= timedelta(days=3)
    expected = in_process(machine, "refund order 42", _support_script())
    assert output.items == expected.items
    assert output.final_output == "Refunded."
