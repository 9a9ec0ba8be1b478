"""Benchmark: durable runs on Temporal beside the in-process driver.

N concurrent runs of the support flow (graphs/support.py: triage looks the order up,
asks the researcher agent as a tool, answers: 4 model calls, 1 tool, a nested run, no
approval) on ONE worker against a local dev server started from the pinned `temporal`
binary, with a scripted model that answers by the request (so concurrent runs do not
share a script). The same N runs on ``machine.run`` for comparison; then on Temporal
with activities, and with ``local_activities=True`` (model calls and tools as local
activities: no server round trip per call).

For each row: runs/s, p50/p99 run latency, one run's latency alone (sequential runs),
and the CPU each run costs the server and the worker process (this process: worker
and client). The engine's per-turn overhead is (one run alone on Temporal - in-process)
/ model turns.

Two setups, each against its own fresh dev server (``--compare`` runs both; the default
runs only the tuned one):

- ``before``: the dev server's defaults plus eager activities, the worker as the
  first version of this benchmark started it;
- ``tuned``: the dev server reads its transfer queue without the 20-polls-a-second
  limit (``history.transferProcessorMaxPollRPS``: with one shard, that limit alone held
  each workflow task ~25 ms before matching saw it, the "flat 300 ms a run"), starts
  workflows eagerly (``request_eager_start``: the first workflow task comes back in the
  start call), and the worker runs workflow activations on one thread (they hold the
  GIL anyway; hundreds of threads only fight over it) and caches every running run; the
  client pins each run to the machine's digest (``RunInput(digest=...)``), which spares
  the worker's stamp activity. The server also keeps one partition per task queue
  (``matching.numTaskqueueReadPartitions`` and ``...WritePartitions`` = 1: the dev
  server is one matching host, and its four default partitions only forward tasks and
  polls among themselves) and runs with ``GOGC=400`` (Go's collector runs a quarter as
  often; the server's peak memory goes from ~460 to ~820 MB here); each cut the
  server's CPU per run by about 1 ms (docs/durable.md, "Performance").

``--floor`` also measures what Temporal itself costs on this machine, on the tuned
setup, for workflows that do nothing but the support run's shape: empty; five no-op
local activities (a support run with a pinned digest makes four model calls and one
tool call); four local and one regular activity (``local_activities="models"``); five
regular activities. A mode cannot run faster than its floor.

Three modes of running the support flow: ``activities`` (the default: every model call
and tool an activity), ``models-local`` (``local_activities="models"``: model calls as
local activities, tools as activities, so a tool that completed is never run again by
a crash) and ``local-act`` (``local_activities=True``: both local; a worker that dies
mid-task runs the task's local activities again, tools included).

``--instructions`` measures instead, with callgrind, the instructions one support run's
workflow side costs the worker (every activation: the SDK's work, our driver's and the
loop's, payload conversion), replaying a recorded history: the shared machine's load
cannot move that figure, as it moves every time above.

Goal (issue #14): >= 50 runs/s on this 2-core machine.

Run: ``.venv/bin/python bench/bench_temporal.py [--runs 1000] [--compare] [--floor]``
(``--quick``: 200 runs; ``--only local-act``: those runs alone, e.g. under py-spy), or
``.venv/bin/python bench/bench_temporal.py --instructions`` (needs valgrind, ~3 minutes).

``--versus-floor`` (issue #30) measures only the worker process's CPU per support run
(activities mode, a pinned digest) against the floor's (a bare workflow of five no-op
activities, the support run's shape), both workers up at once, in ``--rounds``
interleaved rounds of 100 concurrent runs (``--runs`` to change), and prints the
median ratio and its spread; goal ≤ 1.1×.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from temporalio import activity, workflow  # noqa: E402
from temporalio.worker import Worker  # noqa: E402

from graphs.support import support  # noqa: E402
from stepswitch.runtime.model import ModelRequest, ModelResponse  # noqa: E402
from stepswitch.temporal import (  # noqa: E402
    RunInput,
    RunOutput,
    connect,
    machine_digest,
    worker_for,
    workflow_name,
)
from stepswitch.testing import assistant_message, function_call  # noqa: E402

TURNS = 4


class ByRequest:
    """The support flow's answers, chosen by the agent and what the run has so far."""

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        out: list[Any]
        if request.agent == "researcher":
            out = [assistant_message('{"summary": "refundable within 30 days"}')]
        else:
            done = sum(1 for i in request.input if i.type == "tool_call_output_item")
            if done == 0:
                out = [function_call("lookup_order", {"order_id": 42}, call_id="c1")]
            elif done == 1:
                out = [function_call("research", {"input": "refundable?"}, call_id="c2")]
            else:
                out = [assistant_message("Order 42 is refundable within 30 days.")]
        return ModelResponse(tuple(out))


@dataclass
class Setup:
    name: str
    server_flags: list[str]
    eager_start: bool
    worker_options: dict[str, Any] = field(default_factory=dict)
    one_thread: bool = False
    pin_digest: bool = False
    server_env: dict[str, str] = field(default_factory=dict)


BEFORE = Setup(
    "before",
    ["system.enableActivityEagerExecution=true"],
    eager_start=False,
    worker_options={"max_concurrent_workflow_tasks": 200, "max_concurrent_activities": 400},
)
TUNED = Setup(
    "tuned",
    [
        "system.enableActivityEagerExecution=true",
        "system.enableEagerWorkflowStart=true",
        "history.transferProcessorMaxPollRPS=1000",
        "matching.numTaskqueueReadPartitions=1",
        "matching.numTaskqueueWritePartitions=1",
    ],
    eager_start=True,
    worker_options={"max_concurrent_workflow_tasks": 200, "max_concurrent_activities": 400},
    one_thread=True,
    pin_digest=True,
    server_env={"GOGC": "400"},
)


@dataclass
class Row:
    name: str
    runs: int
    total: float
    latencies: list[float]
    alone: float
    server_cpu: float = 0.0
    worker_cpu: float = 0.0


def _binary(name: str) -> str:
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"`{name}` is not installed: pip install -e '.[dev]'")
    return found


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@contextmanager
def dev_server(flags: list[str], env: dict[str, str] | None = None) -> Iterator[tuple[str, int]]:
    port = _port()
    command = [_binary("temporal"), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
               "--port", str(port), "--log-level", "error"]
    for flag in flags:
        command += ["--dynamic-config-value", flag]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the dev server did not start") from None
                time.sleep(0.05)
        yield f"127.0.0.1:{port}", server.pid
    finally:
        server.terminate()
        server.wait(20)


async def _measure(
    name: str, runs: int, one: Callable[[], Awaitable[float]], server_pid: int | None
) -> Row:
    for _ in range(5):  # warm up
        await one()
    s0, w0 = (_cpu_of(server_pid) if server_pid else 0.0), _own_cpu()
    t0 = time.perf_counter()
    lat = await asyncio.gather(*(one() for _ in range(runs)))
    total = time.perf_counter() - t0
    s1, w1 = (_cpu_of(server_pid) if server_pid else 0.0), _own_cpu()
    alone = statistics.median([await one() for _ in range(20)])
    return Row(name, runs, total, list(lat), alone, (s1 - s0) / runs, (w1 - w0) / runs)


async def _in_process(runs: int) -> Row:
    machine, model = support.compile(), ByRequest()

    async def one() -> float:
        t = time.perf_counter()
        result = await machine.run("is order 42 refundable?", model=model)
        assert result.final_output.startswith("Order 42")
        return time.perf_counter() - t

    return await _measure("in-process", runs, one, None)


def _worker_options(setup: Setup, runs: int) -> dict[str, Any]:
    options = dict(setup.worker_options)
    if setup.one_thread:
        options["workflow_task_executor"] = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="workflow"
        )
        options["max_cached_workflows"] = max(1000, runs + 100)
    return options


_MODES: dict[str, bool | str] = {"activities": False, "models-local": "models",
                                  "local-act": True}


async def _temporal(setup: Setup, address: str, pid: int, runs: int, mode: str) -> Row:
    machine = support.compile()
    client = await connect(address, timeout=30)
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    digest = machine_digest(machine) if setup.pin_digest else None

    async def one() -> float:
        t = time.perf_counter()
        handle = await client.start_workflow(
            workflow_name(machine), RunInput("is order 42 refundable?", digest=digest),
            id=f"bench-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
            request_eager_start=setup.eager_start,
        )
        out = await handle.result()
        assert out.final_output.startswith("Order 42")
        return time.perf_counter() - t

    name = f"{mode} ({setup.name})"
    async with worker_for(client, machine, task_queue=queue, model=ByRequest(),
                          local_activities=_MODES[mode], **_worker_options(setup, runs)):
        return await _measure(name, runs, one, pid)


@activity.defn(name="bench.noop")
async def _noop(value: dict[str, Any]) -> dict[str, Any]:
    return value


@workflow.defn(name="bench.floor", sandboxed=False)
class _Floor:
    """Temporal's own cost: ``local`` no-op local activities, then ``remote`` no-op
    activities, nothing else."""

    @workflow.run
    async def run(self, counts: list[int]) -> int:
        local, remote = counts
        for i in range(local):
            await workflow.execute_local_activity(
                _noop, {"i": i}, start_to_close_timeout=timedelta(seconds=30)
            )
        for i in range(remote):
            await workflow.execute_activity(
                _noop, {"i": i}, start_to_close_timeout=timedelta(seconds=30)
            )
        return local + remote


def _floor_name(local: int, remote: int) -> str:
    if not local and not remote:
        return "floor: empty workflow"
    parts = [f"{local} LAs" if local else "", f"{remote} acts" if remote else ""]
    return "floor: " + " + ".join(p for p in parts if p)


async def _floor(setup: Setup, address: str, pid: int, runs: int, local: int,
                 remote: int) -> Row:
    client = await connect(address, timeout=30)
    queue = f"floor-{uuid.uuid4().hex[:8]}"

    async def one() -> float:
        t = time.perf_counter()
        handle = await client.start_workflow(
            _Floor.run, [local, remote], id=f"floor-{uuid.uuid4().hex}", task_queue=queue,
            request_eager_start=setup.eager_start,
        )
        await handle.result()
        return time.perf_counter() - t

    async with Worker(client, task_queue=queue, workflows=[_Floor], activities=[_noop],
                      **_worker_options(setup, runs)):
        return await _measure(_floor_name(local, remote), runs, one, pid)


async def _versus_floor(address: str, rounds: int, runs: int) -> tuple[list[float], list[float]]:
    """Worker CPU per run of the support flow (every model call and tool an activity)
    and of the floor (a bare workflow of five no-op activities), in interleaved rounds
    of ``runs`` concurrent runs each, both workers up the whole time (issue #30)."""
    machine = support.compile()
    client = await connect(address, timeout=30)
    queue, floor_queue = f"bench-{uuid.uuid4().hex[:8]}", f"floor-{uuid.uuid4().hex[:8]}"
    digest = machine_digest(machine)

    async def ours() -> None:
        handle = await client.start_workflow(
            workflow_name(machine), RunInput("is order 42 refundable?", digest=digest),
            id=f"bench-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
            request_eager_start=True,
        )
        assert (await handle.result()).final_output.startswith("Order 42")

    async def floor() -> None:
        handle = await client.start_workflow(
            _Floor.run, [0, 5], id=f"floor-{uuid.uuid4().hex}", task_queue=floor_queue,
            request_eager_start=True,
        )
        assert await handle.result() == 5

    async def cpu_per_run(one: Callable[[], Awaitable[None]]) -> float:
        c0 = _own_cpu()
        await asyncio.gather(*(one() for _ in range(runs)))
        return (_own_cpu() - c0) / runs

    options = _worker_options(TUNED, rounds * runs)
    floor_options = _worker_options(TUNED, rounds * runs)
    mine: list[float] = []
    bare: list[float] = []
    async with worker_for(client, machine, task_queue=queue, model=ByRequest(),
                          local_activities=False, **options), \
            Worker(client, task_queue=floor_queue, workflows=[_Floor], activities=[_noop],
                   **floor_options):
        for _ in range(10):  # warm up both
            await ours()
            await floor()
        for r in range(rounds):
            if r % 2:
                bare.append(await cpu_per_run(floor))
                mine.append(await cpu_per_run(ours))
            else:
                mine.append(await cpu_per_run(ours))
                bare.append(await cpu_per_run(floor))
    return mine, bare


def _report_versus_floor(mine: list[float], bare: list[float]) -> float:
    ratios = sorted(a / b for a, b in zip(mine, bare, strict=True))
    ratio = statistics.median(ratios)
    print(f"worker CPU per run: support flow (activities) median "
          f"{statistics.median(mine) * 1000:.1f} ms, floor (5 no-op activities) "
          f"{statistics.median(bare) * 1000:.1f} ms")
    print(f"  ratio {ratio:.3f}× the floor (median of {len(ratios)} interleaved rounds; "
          f"spread {ratios[0]:.3f}–{ratios[-1]:.3f}×; goal ≤ 1.1×: "
          f"{'met' if ratio <= 1.1 else 'NOT met'})", flush=True)
    return ratio


def _report(row: Row) -> None:
    cpu = ""
    if row.server_cpu:
        cpu = (f"   cpu/run server {row.server_cpu * 1000:5.1f} ms"
               f" worker {row.worker_cpu * 1000:5.1f} ms")
    print(f"{row.name:<24} {row.runs / row.total:7.1f} runs/s   p50 "
          f"{_pct(row.latencies, 0.5) * 1000:8.1f} ms   p99 "
          f"{_pct(row.latencies, 0.99) * 1000:8.1f} ms   alone {row.alone * 1000:6.1f} ms{cpu}",
          flush=True)


_REPLAY_CHILD = """
import asyncio, concurrent.futures, sys
sys.path.insert(0, {root!r})
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer
from {module} import {name} as machine_source
from stepswitch.temporal import workflow_for
history = WorkflowHistory.from_json("bench", open(sys.argv[1]).read())
runs = int(sys.argv[2])
async def histories():
    for _ in range(runs + 1):  # one warm-up replay, then the runs
        yield history
async def main() -> None:
    replayer = Replayer(
        workflows=[workflow_for(machine_source.compile(), local_activities=True)],
        workflow_task_executor=concurrent.futures.ThreadPoolExecutor(1),
    )
    await replayer.replay_workflows(histories(), raise_on_replay_failure=True)
asyncio.run(main())
"""


async def _record(address: str, path: Path) -> None:
    """One support run with local activities; its history, as JSON, to ``path``."""
    machine = support.compile()
    client = await connect(address, timeout=30)
    queue = f"record-{uuid.uuid4().hex[:8]}"
    async with worker_for(client, machine, task_queue=queue, model=ByRequest(),
                          local_activities=True):
        handle = await client.start_workflow(
            workflow_name(machine),
            RunInput("is order 42 refundable?", digest=machine_digest(machine)),
            id=f"record-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
        )
        out = await handle.result()
        assert out.final_output.startswith("Order 42")
    path.write_text((await handle.fetch_history()).to_json())


def replayed(history: Path, runs: int, module: str = "graphs.support",
             name: str = "support") -> int:
    """Instructions (callgrind) of a child replaying ``history`` ``runs`` + 1 times with
    the workflow of ``module:name`` (its activities all local)."""
    child = _REPLAY_CHILD.format(root=str(ROOT), module=module, name=name)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, "-c", child, str(history), str(runs)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the replaying child failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def replay_instructions() -> float | None:
    """Instructions the worker spends on one support run's workflow side (its
    activations: the SDK's, our driver's and the loop's work, payload conversion),
    counted by callgrind while replaying a recorded history: 12 replays minus 2."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        history = Path(tmp) / "support.json"
        with dev_server(TUNED.server_flags, TUNED.server_env) as (address, _):
            asyncio.run(_record(address, history))
        return (replayed(history, 12) - replayed(history, 2)) / 10


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 runs")
    parser.add_argument("--compare", action="store_true",
                        help="also run the setup before tuning, on its own server")
    parser.add_argument("--floor", action="store_true",
                        help="also measure empty workflows (Temporal's own cost)")
    parser.add_argument("--only", choices=list(_MODES),
                        help="measure only this kind of Temporal run (e.g. to profile it)")
    parser.add_argument("--instructions", action="store_true",
                        help="only count (callgrind) the instructions of one run's workflow "
                        "side, replaying a recorded history; load-independent")
    parser.add_argument("--versus-floor", action="store_true",
                        help="only the worker's CPU per support run against the floor's "
                        "(5 no-op activities), in interleaved rounds (issue #30)")
    parser.add_argument("--rounds", type=int, default=9,
                        help="interleaved rounds for --versus-floor (runs per round: --runs, "
                        "default 100 there)")
    args = parser.parse_args()
    if args.versus_floor:
        per_round = 100 if args.runs == parser.get_default("runs") else args.runs
        print(f"{args.rounds} interleaved rounds of {per_round} concurrent runs each, support "
              f"flow and floor, one worker each, a local dev server (tuned); load average "
              f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
        with dev_server(TUNED.server_flags, TUNED.server_env) as (address, _):
            mine, bare = asyncio.run(_versus_floor(address, args.rounds, per_round))
        _report_versus_floor(mine, bare)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return 0
    if args.instructions:
        count = replay_instructions()
        if count is None:
            print("valgrind is not installed: no instruction counts")
        else:
            print(f"instructions per replayed support run (workflow side, local activities): "
                  f"{count / 1e6:.2f} M")
        return 0
    runs = 200 if args.quick else args.runs
    print(f"{runs} concurrent support-flow runs ({TURNS} model turns each), one worker, "
          f"a local dev server; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    local = asyncio.run(_in_process(runs))
    _report(local)
    rows: dict[str, Row] = {}
    for setup in ([BEFORE, TUNED] if args.compare else [TUNED]):
        with dev_server(setup.server_flags, setup.server_env) as (address, pid):
            for mode in _MODES:
                if args.only and args.only != mode:
                    continue
                if setup is BEFORE and mode == "models-local":
                    continue
                row = asyncio.run(_temporal(setup, address, pid, runs, mode))
                rows[row.name] = row
                _report(row)
            if args.floor and setup is TUNED:
                # what the modes' shapes cost Temporal with no work at all: a support
                # run with a pinned digest makes four model calls and one tool call
                for n_local, n_remote in ((0, 0), (5, 0), (4, 1), (0, 5)):
                    _report(asyncio.run(_floor(setup, address, pid, runs, n_local, n_remote)))
    for name, row in rows.items():
        overhead = (row.alone - local.alone) / TURNS
        rate = runs / row.total
        print(f"{name:<24} per-turn overhead {overhead * 1000:6.2f} ms; goal >= 50 runs/s "
              f"{'met' if rate >= 50 else 'NOT met'} ({rate:.1f})")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
