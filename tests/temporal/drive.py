"""Run a scenario through the Temporal driver and in-process, and compare them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Replayer

import stepswitch as ss
from stepswitch.temporal import (
    Decision,
    Interruption,
    RunInput,
    RunOutput,
    worker_for,
    workflow_for,
    workflow_name,
)
from stepswitch.temporal._codec import write_items
from stepswitch.testing import ScriptedModel


@dataclass
class Seen:
    """What a run showed: items, final output, last agent, or the error."""

    items: list[dict[str, Any]] = field(default_factory=list)
    final_output: Any = None
    last_agent: str | None = None
    error: tuple[str, str] | None = None
    asked: list[list[str]] = field(default_factory=list)
    runs: int = 1


Script = Sequence[Any] | Callable[[], Any]
"""A model's script, or a function making the model (one that answers by its input)."""


def model_of(script: Script) -> Any:
    return script() if callable(script) else ScriptedModel(list(script))


def in_process(
    machine: ss.StateMachine, input: str, script: Script, approve: bool = True,
    context: Any = None,
) -> Seen:
    model = model_of(script)
    seen = Seen()
    try:
        result = machine.run_sync(input, model=model, context=context)
        while result.interruptions:
            seen.asked.append([i.call_id for i in result.interruptions])
            state = result.to_state()
            for item in result.interruptions:
                if approve:
                    state.approve(item)
                else:
                    state.reject(item)
            result = machine.run_sync(state, model=model, context=context)
    except ss.StepswitchError as exc:
        seen.error = (type(exc).__name__, str(exc))
        data = getattr(exc, "run_data", None)
        seen.items = write_items(data.new_items) if data is not None else []
        return seen
    seen.items = write_items(result.new_items)
    final = result.final_output
    seen.final_output = final.model_dump(mode="json") if hasattr(final, "model_dump") else final
    seen.last_agent = result.last_agent
    return seen


async def wait_for_interruptions(
    handle: WorkflowHandle[Any, Any], timeout: float = 20
) -> list[Interruption]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            pending: list[Interruption] = await handle.query(
                "interruptions", result_type=list[Interruption]
            )
        except RPCError as e:
            # just after a worker is SIGKILLed, the server may cancel a query it had routed
            # to that worker's sticky queue; the next query goes to a live worker
            if e.status not in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED):
                raise
            pending = []
        if pending:
            return pending
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("no interruption appeared")
        await asyncio.sleep(0.05)


async def on_temporal(
    client: Client,
    machine: ss.StateMachine,
    input: str,
    script: Script,
    approve: bool = True,
    context: Any = None,
    **options: Any,
) -> tuple[Seen, Any]:
    """Run on a fresh worker; decide each approval; replay the history at the end."""
    queue = f"q-{uuid.uuid4().hex[:12]}"
    seen = Seen()
    async with worker_for(client, machine, task_queue=queue,
                          model=model_of(script), **options):
        handle = await client.start_workflow(
            workflow_name(machine), RunInput(input, context=context),
            id=f"run-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
        )
        task = asyncio.ensure_future(handle.result())
        try:
            while not task.done():
                done, _ = await asyncio.wait({task}, timeout=0.05)
                if done:
                    break
                pending = await handle.query("interruptions", result_type=list[Interruption])
                if pending:
                    seen.asked.append([p.call_id for p in pending])
                    for p in pending:
                        await handle.execute_update("decide", Decision(p.call_id, approve))
            output: RunOutput = await task
            seen.items = output.items
            seen.final_output = output.final_output
            seen.last_agent = output.last_agent
            seen.runs = output.runs
        except WorkflowFailureError as exc:
            cause = exc.cause
            assert isinstance(cause, ApplicationError), cause
            seen.error = (cause.type or "", cause.message)
            if cause.details:
                state = ss.RunState.from_json(cause.details[0])
                seen.items = write_items(state.items)
        history = await handle.fetch_history()
    replay = {k: v for k, v in options.items() if k != "mcp_drift"}  # the worker's alone
    await Replayer(workflows=[workflow_for(machine, **replay)]).replay_workflow(history)
    return seen, history
