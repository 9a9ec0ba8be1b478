"""Durable runs on Temporal (``pip install 'stepswitch[temporal]'``).

A run becomes a Temporal workflow that drives the same loop generator as
``machine.run``: the loop's decisions replay deterministically from the workflow's
history; model calls and function tools are activities, hooks that may do I/O are
local activities; an approval waits (for days if need be) on the ``decide`` update.
A flow runs the same way: its flow loop in the workflow, each ``@ss.step`` an activity.

::

    from stepswitch.temporal import RunInput, Decision, worker_for, workflow_name

    worker = worker_for(client, machine, task_queue="support", model=model)
    async with worker:
        handle = await client.start_workflow(
            workflow_name(machine), RunInput("refund order 42"),
            id="conversation-42", task_queue="support", result_type=RunOutput)
        pending = await handle.query("interruptions")
        await handle.execute_update("decide", Decision(pending[0].call_id, True))
        output = await handle.result()

See docs/durable.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

try:
    from temporalio.worker import Worker
except ImportError as exc:  # the extra is missing, or a temporalio.py shadows it
    from stepswitch._site import shadowing

    raise ImportError(
        shadowing("temporalio")
        or "stepswitch.temporal needs the temporalio package: pip install 'stepswitch[temporal]'"
    ) from exc

from stepswitch.errors import ToolFailure
from stepswitch.runtime.model import Model
from stepswitch.temporal._activities import Sessions, activities_for, machine_digest
from stepswitch.temporal._client import connect, wait_for_worker
from stepswitch.temporal._workflow import (
    Decision,
    Interruption,
    RunInput,
    RunOutput,
    workflow_for,
    workflow_name,
)

if TYPE_CHECKING:
    from temporalio.client import Client

    from stepswitch.runtime.machine import StateMachine

__all__ = [
    "Decision",
    "Interruption",
    "RunInput",
    "RunOutput",
    "Sessions",
    "ToolFailure",
    "activities_for",
    "connect",
    "machine_digest",
    "wait_for_worker",
    "worker_for",
    "workflow_for",
    "workflow_name",
]


def worker_for(
    client: Client,
    machine: StateMachine,
    *,
    task_queue: str,
    model: Model | None = None,
    sessions: Sessions | None = None,
    **options: Any,
) -> Worker:
    """A ready Temporal worker for ``machine``'s runs on ``task_queue``.

    ``model`` answers the model calls of agents without their own model; ``sessions``
    (a session URL, or a function from a session id to a session) keeps the
    conversations of runs started with ``RunInput(session_id=…)``; ``tracer_provider``
    (else the global one, if set) gets the runs' spans (docs/tracing.md);
    ``mcp_drift="allow"`` lets its runs call MCP servers that drifted from their lock
    (``activities_for``); ``hooks`` an ``ss.RunHooks`` for every run of the worker (its
    activities call it). ``options`` go to ``workflow_for`` when they are its keywords
    (timeouts, retry policies, ``continue_as_new_after``) and to
    ``temporalio.worker.Worker`` otherwise.
    """
    keys = {"model_timeout", "tool_timeout", "hook_timeout", "model_retry", "tool_retry",
            "continue_as_new_after", "local_activities", "tracer_provider", "hooks"}
    wf_options = {k: v for k, v in options.items() if k in keys}
    worker_options = {k: v for k, v in options.items() if k not in keys | {"mcp_drift"}}
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[workflow_for(machine, **wf_options)],
        activities=activities_for(machine, model=model, sessions=sessions,
                                  tracer_provider=options.get("tracer_provider"),
                                  mcp_drift=options.get("mcp_drift", "error"),
                                  hooks=options.get("hooks")),
        **worker_options,
    )
