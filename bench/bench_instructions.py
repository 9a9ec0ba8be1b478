"""Benchmark: the run loop's cost in CPU instructions, which the machine's load cannot move.

Wall and CPU times on a shared 2-core machine swing with whatever else runs; callgrind
counts the instructions a process executes, the same for the same code and input. Each
figure is the difference between two child processes that differ only in how many runs
they make (so start-up and imports cancel out), divided by the turns (or runs) between.
The children run with a fixed ``PYTHONHASHSEED``: string hashes decide how dicts and
sets probe, which moves a turn's count by a couple of thousand between seeds. After the
warm-up run each child freezes its heap (``gc.collect(); gc.freeze()``, as a server does
after start-up): the collector still runs over what the measured runs make, but no
longer walks every imported module's objects on its full passes, which made a turn's
count depend on how much code the process had imported (a traced turn moved by 30 k
when an unrelated change grew the import graph) rather than on what the turn does.

* ``loop``: one turn of the N-turn tool loop (bench_runtime's workload, N = 50), beside
  its floor (``bench_runtime.floor_runner``: the same run written by hand);
* ``traced``: the same turn with tracing on into an in-memory exporter;
* ``sdk floor``: the OpenTelemetry SDK alone making the same span tree (no stepswitch
  code; ``bench_runtime.sdk_floor``), so ``traced - loop - sdk floor`` is stepswitch's
  own tracing work per turn;
* ``support``: one whole support-flow run (4 model calls, 7 items), beside its floor;
* ``fanout``: one round of bench_flows' fan-out cycle (a step, a fan-out over K = 10
  sync steps, a join), beside its floor: the same calls written by hand.

Needs ``valgrind`` (``apt-get install valgrind``); takes a few minutes. ``--only``
measures some of the figures (e.g. ``--only loop,support`` while working on the loop).

    .venv/bin/python bench/bench_instructions.py [--only loop,traced,floor,support,fanout]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
N = 50

_CHILD = """
import asyncio, gc, sys
sys.path.insert(0, {bench!r})
import bench_runtime as b
import stepswitch as ss
k, mode, n = int(sys.argv[1]), sys.argv[2], {n}
collector = not mode.endswith("-nogc")  # "-nogc": the same figure, the collector off
mode = mode.removesuffix("-nogc")
exporter = provider = None
if mode in ("traced", "floor"):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
if mode in ("fanout", "fanout-floor"):
    import bench_flows as f
    run = f.stepswitch_fanout() if mode == "fanout" else f.baseline_fanout()
    run()  # the warm-up round
    gc.collect(); gc.freeze()
    for _ in range(k):
        run()
    raise SystemExit(0)
if mode == "support":
    once = b.ours_runner(b.ours_support_steps())
elif mode == "support-floor":
    once = b.floor_runner(b.ours_support_steps())
elif mode == "loop-floor":
    once = b.floor_runner(b.ours_loop_steps(n))
elif mode == "floor":
    once = b.sdk_floor(provider, exporter, n)
else:
    config = ss.RunConfig(tracer_provider=provider) if mode == "traced" else None
    once = b.ours_runner(b.ours_loop_steps(n), config)
async def main() -> None:
    for i in range(k + 1):  # one warm-up run, then k
        await once()
        if exporter is not None:
            exporter.clear()
        if i == 0:
            gc.collect(); gc.freeze()
            if not collector:
                gc.disable()
asyncio.run(main())
"""


def _instructions(runs: int, mode: str) -> int:
    child = _CHILD.format(bench=str(ROOT / "bench"), n=N)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, "-c", child, str(runs), mode],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{mode}: the child failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def per_unit(mode: str, few: int, many: int, units_per_run: int) -> float:
    # once outside valgrind first: a module changed since its bytecode was cached is
    # compiled by the first child only, which skewed the difference by tens of k a turn
    subprocess.run([sys.executable, "-c", _CHILD.format(bench=str(ROOT / "bench"), n=N),
                    "0", mode], cwd=ROOT, capture_output=True, check=False,
                   env={**os.environ, "PYTHONHASHSEED": "0"})
    return (_instructions(many, mode) - _instructions(few, mode)) / (
        (many - few) * units_per_run)


FIGURES = ("loop", "traced", "floor", "support", "fanout")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", default=",".join(FIGURES),
        help=f"comma-separated figures to measure, of {', '.join(FIGURES)} (default: all)",
    )
    args = parser.parse_args(argv)
    only = [f.strip() for f in args.only.split(",") if f.strip()]
    unknown = sorted(set(only) - set(FIGURES))
    if unknown or not only:
        parser.error(f"--only: unknown figure(s) {', '.join(unknown) or '(none given)'}; "
                     f"choose from {', '.join(FIGURES)}")
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: no instruction counts")
        return 0
    turns = N + 1
    loop = traced = floor = None
    if {"loop", "traced"} & set(only):
        loop = per_unit("off", 1, 11, turns)
    if "traced" in only:
        traced = per_unit("traced", 1, 11, turns)
    if {"floor", "traced"} & set(only):
        floor = per_unit("floor", 1, 11, turns)
    if loop is not None or floor is not None:
        print(f"instructions per turn (N={N} tool loop)")
    if loop is not None:
        by_hand = per_unit("loop-floor", 1, 11, turns)
        print(f"  loop                 {loop / 1e3:8.1f} k   floor {by_hand / 1e3:.1f} k   "
              f"ratio {loop / by_hand:.2f}x (target <= 1.8x)")
    if traced is not None and loop is not None and floor is not None:
        print(f"  traced               {traced / 1e3:8.1f} k   (+{(traced - loop) / 1e3:.1f} k)")
    if floor is not None:
        print(f"  sdk floor            {floor / 1e3:8.1f} k   (the SDK alone, same span tree)")
    if traced is not None and loop is not None and floor is not None:
        print(f"  stepswitch's tracing {(traced - loop - floor) / 1e3:8.1f} k   (target <= 15 k)")
        # how much of that is the collector walking the run's live items and history
        # more often, because the spans allocate: the same three figures, collector off
        bare = (per_unit("traced-nogc", 1, 11, turns) - per_unit("off-nogc", 1, 11, turns)
                - per_unit("floor-nogc", 1, 11, turns))
        print(f"    of which the collector {(traced - loop - floor - bare) / 1e3:6.1f} k   "
              f"(the code's own, collector off: {bare / 1e3:.1f} k)")
    if "support" in only:
        support = per_unit("support", 10, 110, 1)
        by_hand = per_unit("support-floor", 10, 110, 1)
        print(f"instructions per support-flow run {support / 1e3:8.1f} k   floor "
              f"{by_hand / 1e3:.1f} k   ratio {support / by_hand:.2f}x (target <= 3x)")
    if "fanout" in only:
        rounds = 1_000  # bench_flows.FAN_ROUNDS
        ours = per_unit("fanout", 1, 3, rounds)
        by_hand = per_unit("fanout-floor", 1, 3, rounds)
        print(f"instructions per fan-out round (K=10 sync steps) {ours / 1e3:8.1f} k   "
              f"floor {by_hand / 1e3:.1f} k   ratio {ours / by_hand:.2f}x (target <= 3x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
