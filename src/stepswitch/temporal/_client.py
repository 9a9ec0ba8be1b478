"""Client-side helpers: connect with a clear error, and refuse to start a run on a
task queue no worker polls (it would wait forever, silently)."""

from __future__ import annotations

import asyncio
import shlex

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from stepswitch.errors import UserError

__all__ = ["connect", "wait_for_worker"]

_STARTING = "not healthy yet"
_RETRY_EVERY = 0.1


async def connect(address: str, *, namespace: str = "default", timeout: float = 5.0) -> Client:
    """A client of the Temporal server at ``address`` (``HOST:PORT``), or a ``UserError``
    saying it cannot be reached."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UserError(f"Temporal address {address!r}: expected HOST:PORT, e.g. 127.0.0.1:7233")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            return await asyncio.wait_for(
                Client.connect(address, namespace=namespace), max(0.0, deadline - loop.time())
            )
        except TimeoutError:
            raise UserError(
                f"cannot reach the Temporal server at {address}: no answer in {timeout:g}s "
                "(is it running? `temporal server start-dev` starts one)"
            ) from None
        except RuntimeError as exc:
            # A server that has just started listens before its frontend is ready and
            # answers "not healthy yet" for a moment: wait for it, within the timeout.
            if _STARTING in str(exc) and loop.time() + _RETRY_EVERY < deadline:
                await asyncio.sleep(_RETRY_EVERY)
                continue
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise UserError(f"cannot reach the Temporal server at {address}: {reason}") from None


async def _pollers(client: Client, task_queue: str) -> int:
    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
    )
    return len(response.pollers)


async def wait_for_worker(
    client: Client, task_queue: str, *, timeout: float = 10.0, target: str | None = None
) -> None:
    """Return once a worker polls ``task_queue``; after ``timeout`` seconds, a
    ``UserError`` that says how to start one (with ``target``, the workflow's
    ``file.py:name``, the command is complete)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if await _pollers(client, task_queue) > 0:
            return
        if loop.time() >= deadline:
            address = client.service_client.config.target_host
            command = shlex.join(["stepswitch", "worker", target or "TARGET", "--address",
                                  address, "--task-queue", task_queue])
            raise UserError(
                f"no worker polls task queue {task_queue!r} (waited {timeout:g}s): start one "
                f"with `{command}`"
            )
        await asyncio.sleep(min(0.2, max(0.0, deadline - loop.time())))
