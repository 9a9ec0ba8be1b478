"""Benchmark: static analysis of generated workflows of 1k, 10k and 100k agents.

Each workflow has a handoff chain through every agent, random extra handoffs (some
budgeted, many closing cycles), self-handoffs, agent tools (recursive, bounded by
max_depth), agents whose settings force tool calls, and a few shared function tools.

Printed per size: build time (DSL → spec), graph time (spec → WorkflowGraph), analysis
time (``analyze(graph)``, best of several runs) and the analysis' peak traced memory
(tracemalloc, a separate run); "cpu s" is the process CPU time of the best run, which
a machine shared with other work inflates less than wall time.
Target: 10k agents analysed in ≤ 0.3 s and ≤ 300 MB.

    python bench/bench_analysis.py [SIZES...]      # default: 1000 10000 100000
"""

from __future__ import annotations

import gc
import os
import random
import sys
import time
import tracemalloc

import stepswitch as ss
from stepswitch.analysis import analyze
from stepswitch.dsl.build import build
from stepswitch.graph.workflow_graph import WorkflowGraph


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look an order up."""
    return str(order_id)


@ss.function_tool(needs_approval=True)
def refund(order_id: int) -> str:
    """Refund an order."""
    return str(order_id)


def generate(n: int, seed: int = 7) -> ss.Workflow:
    rng = random.Random(seed)
    forced = ss.ModelSettings(tool_choice="required")
    agents = []
    for i in range(n):
        handoffs: list[ss.Handoff | str] = []
        if i + 1 < n:
            handoffs.append(f"a{i + 1}")
        if rng.random() < 0.5:  # random extra handoff, backwards half the time: cycles
            target = rng.randrange(n)
            budget = 2 if rng.random() < 0.5 else None
            handoffs.append(ss.handoff(f"a{target}", max_uses=budget))
        if rng.random() < 0.01:
            handoffs.append(f"a{i}")
        tools: list[ss.FunctionTool | ss.AgentTool] = [lookup]
        if rng.random() < 0.02:
            tools.append(refund)
        if rng.random() < 0.2:
            # Bounded (max_depth), so the worst-case bound is computed by depth levels;
            # an unbounded one would make SW202 replace the bound.
            tools.append(ss.agent_tool(f"a{rng.randrange(n)}", f"ask{i}", "Ask",
                                       max_turns=3, max_depth=2))
        agents.append(ss.Agent(
            f"a{i}", "Work.", tools=tools, handoffs=handoffs,
            model_settings=forced if rng.random() < 0.05 else None,
        ))
    return ss.Workflow("generated", agents[0], agents, max_turns=20, max_depth=4)


def measure(n: int) -> dict[str, float]:
    wf = generate(n)
    t0 = time.perf_counter()
    built = build(wf)
    t1 = time.perf_counter()
    graph = WorkflowGraph.from_built(built)
    t2 = time.perf_counter()
    runs = 3
    best = cpu = float("inf")
    report = None
    for _ in range(runs):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        report = analyze(graph)
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    assert report is not None
    gc.collect()
    tracemalloc.start()
    analyze(graph)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "agents": n,
        "edges": sum(1 for _ in graph.edges()) + len(graph.dangling),
        "build_s": t1 - t0,
        "graph_s": t2 - t1,
        "analyze_s": best,
        "analyze_cpu_s": cpu,
        "peak_mb": peak / 1e6,
        "diagnostics": len(report),
    }


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [1_000, 10_000, 100_000]
    print(f"{'agents':>8} {'edges':>8} {'build s':>8} {'graph s':>8} {'analyze s':>10} "
          f"{'cpu s':>7} {'µs/agent':>9} {'peak MB':>8} {'diags':>7}")
    ok = cpu_ok = True
    for n in sizes:
        r = measure(n)
        print(f"{r['agents']:>8} {r['edges']:>8} {r['build_s']:>8.2f} {r['graph_s']:>8.2f} "
              f"{r['analyze_s']:>10.3f} {r['analyze_cpu_s']:>7.3f} "
              f"{r['analyze_s'] / n * 1e6:>9.1f} {r['peak_mb']:>8.1f} "
              f"{r['diagnostics']:>7}")
        if n == 10_000:
            ok = r["analyze_s"] <= 0.3 and r["peak_mb"] <= 300
            cpu_ok = r["analyze_cpu_s"] <= 0.3 and r["peak_mb"] <= 300
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} CPU(s)")
    print("target (10k agents: analysis ≤ 0.3 s, ≤ 300 MB):", "met" if ok else "MISSED",
          f"(wall time); {'met' if cpu_ok else 'MISSED'} (CPU time)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
