"""Benchmark: flows, side by side with pydantic-graph and LangGraph.

Two workloads:

* **Per-step overhead.** A cycle of two code steps (``a`` adds one, ``b`` passes it on,
  a branch goes back to ``a`` until 200), so a run is 400 steps; the same loop in
  pydantic-graph (``GraphBuilder`` steps and a decision) and in LangGraph (a
  ``StateGraph`` with a conditional edge). Reported: time per step of a whole run, and
  per step minus the cost of calling the two functions in a plain Python loop.
  Target (issue 13): ≤ 5 µs per step for stepswitch.
* **Fan-out.** A cycle whose every round is a step (``split``) whose output fans out
  over K = 10 elements to a sync step (``work``), joined into a step (``join``) that
  branches back to ``split`` until 1,000 rounds; the floor is the same calls written by
  hand (the same functions, a list comprehension for the fan-out, no framework).
  Interleaved rounds, each contender timed once per round; reported: CPU µs per round
  (median and spread) and the ratio to the floor (median of the rounds' ratios).
  Target (issue 30): ≤ 3× the floor. ``--only fanout`` runs just this.
* **Scale.** A linear flow of N nodes (every tenth an agent, the rest steps): build,
  ``check`` (the analysis of the built graph) and Mermaid (scene and text), for
  N = 1,000 / 10,000 / 100,000. Targets: check ≤ 0.5 s and Mermaid ≤ 0.5 s at 10,000,
  growing linearly.

Run: ``.venv/bin/python bench/bench_flows.py`` (``pip install -e '.[bench]'`` adds
pydantic-graph and LangGraph; without them only our figures are printed).
``--quick`` for a short run (no 100,000); ``--only cycle,fanout,scale`` picks workloads.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import time
import types
from collections.abc import Callable
from typing import Any, TypedDict

import stepswitch as ss
from stepswitch.analysis import analyze
from stepswitch.graph.workflow_graph import WorkflowGraph
from stepswitch.render import to_mermaid

ROUNDS = 200
STEPS_PER_RUN = 2 * ROUNDS


# -- the two-step cycle -----------------------------------------------------------------------


@ss.step
def step_a(n: int) -> int:
    return n + 1


@ss.step
def step_b(n: int) -> int:
    return n


def more(n: int) -> bool:
    return n < ROUNDS


def stepswitch_cycle() -> Callable[[], Any]:
    wf = ss.Workflow("cycle", step_a, flow=[
        ss.then(step_a, step_b),
        ss.branch(step_b, when=more, then=step_a, otherwise=ss.END, max_uses=ROUNDS),
    ])
    assert wf.check().ok
    machine = wf.compile()

    def run() -> Any:
        result = machine.run_sync(0)
        assert result.final_output == ROUNDS
        return result

    return run


def baseline_cycle() -> Callable[[], Any]:
    a, b = step_a.fn, step_b.fn

    def run() -> int:
        n = 0
        while True:
            n = b(a(n))
            if not more(n):
                return n

    return run


class PGState:
    """pydantic-graph's state (module level: its step annotations are resolved)."""

    n = 0


class LGState(TypedDict):
    """LangGraph's state (module level: its functions' annotations are resolved)."""

    n: int


def pydantic_graph_cycle() -> Callable[[], Any] | None:
    try:
        from pydantic_graph import GraphBuilder, StepContext
    except ImportError:
        return None

    g: Any = GraphBuilder(state_type=PGState, output_type=int)

    @g.step
    async def a(ctx: StepContext[PGState, None, None]) -> int:
        ctx.state.n += 1
        return ctx.state.n

    @g.step
    async def b(ctx: StepContext[PGState, None, int]) -> int:
        return ctx.inputs

    g.add(
        g.edge_from(g.start_node).to(a),
        g.edge_from(a).to(b),
        g.edge_from(b).to(
            g.decision()
            .branch(g.match(int, matches=more).to(a))
            .branch(g.match(int).to(g.end_node))
        ),
    )
    graph = g.build()

    def run() -> Any:
        out = graph.run_sync(state=PGState())
        assert out == ROUNDS
        return out

    return run


def langgraph_cycle() -> Callable[[], Any] | None:
    try:
        from langgraph.graph import END, START, StateGraph
    except ImportError:
        return None

    def a(s: LGState) -> dict[str, int]:
        return {"n": s["n"] + 1}

    def b(s: LGState) -> dict[str, int]:
        return {"n": s["n"]}

    def route(s: LGState) -> str:
        return "a" if more(s["n"]) else END

    g: Any = StateGraph(LGState)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("b", route)
    app = g.compile()

    def run() -> Any:
        out = app.invoke({"n": 0}, {"recursion_limit": STEPS_PER_RUN + 10})
        assert out["n"] == ROUNDS
        return out

    return run


def per_step(run: Callable[[], Any], repeats: int) -> float:
    """Median µs per step over ``repeats`` runs (after one warm-up)."""
    run()
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / STEPS_PER_RUN * 1e6


# -- fan-out ----------------------------------------------------------------------------------

K = 10
FAN_ROUNDS = 1_000


class Batch:
    """What ``split`` gives: the round and the K elements the fan-out runs over."""

    __slots__ = ("items", "n")

    def __init__(self, n: int, items: list[int]) -> None:
        self.n = n
        self.items = items


@ss.step
def split(n: int) -> Batch:
    return Batch(n, list(range(n, n + K)))


@ss.step
def work(x: int) -> int:
    return x + 1


@ss.step
def join(xs: list[int]) -> int:
    return xs[0]


def more_rounds(n: int) -> bool:
    return n < FAN_ROUNDS


def stepswitch_fanout() -> Callable[[], Any]:
    wf = ss.Workflow("fan", split, flow=[
        ss.fan_out(split, over="items", each=work, then=join, max_items=K),
        ss.branch(join, when=more_rounds, then=split, otherwise=ss.END,
                  max_uses=FAN_ROUNDS),
    ])
    assert wf.check().ok, [d.format_line() for d in wf.check().diagnostics]
    machine = wf.compile()

    def run() -> Any:
        result = machine.run_sync(0)
        assert result.final_output == FAN_ROUNDS, result.final_output
        return result

    return run


def baseline_fanout() -> Callable[[], Any]:
    s, w, j = split.fn, work.fn, join.fn

    def run() -> int:
        n = 0
        while True:
            batch = s(n)
            n = j([w(x) for x in batch.items])
            if not more_rounds(n):
                return n

    return run


def fanout(repeats: int) -> None:
    """Interleaved rounds: each round times one run of each contender."""
    runs = {"plain Python": baseline_fanout(), "stepswitch": stepswitch_fanout()}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for run in runs.values():
        run()  # warm up
    for _ in range(repeats):
        for name, run in runs.items():
            gc.collect()
            t0 = time.process_time()
            run()
            times[name].append((time.process_time() - t0) / FAN_ROUNDS * 1e6)
    print(f"fan-out over K={K} sync steps, {FAN_ROUNDS} rounds per run (split, fan-out, "
          f"join), CPU µs per round: median [min, max] of {repeats} interleaved runs")
    for name, ts in times.items():
        print(f"  {name:<22} {statistics.median(ts):9.3f}   [{min(ts):.3f}, {max(ts):.3f}]")
    ratios = [o / b for o, b in zip(times["stepswitch"], times["plain Python"], strict=True)]
    print(f"  ratio to the floor     {statistics.median(ratios):9.2f}x  "
          f"[{min(ratios):.2f}, {max(ratios):.2f}]   (target <= 3x)")


# -- scale ------------------------------------------------------------------------------------


def _identity(text: str) -> str:
    return text


def linear_flow(n: int) -> ss.Workflow:
    """N nodes in a line: every tenth an agent, the others steps, then END."""
    nodes: list[Any] = []
    for i in range(n):
        if i % 10 == 5:
            nodes.append(ss.Agent(f"agent_{i}", "Rewrite the text."))
        else:
            fn = types.FunctionType(_identity.__code__, globals(), f"step_{i}")
            fn.__qualname__ = f"step_{i}"
            fn.__annotations__ = {"text": str, "return": str}
            nodes.append(ss.step(fn))
    edges = [ss.then(x, y) for x, y in itertools.pairwise(nodes)]
    edges.append(ss.then(nodes[-1], ss.END))
    return ss.Workflow(f"line{n}", nodes[0], flow=edges, max_turns=3)


def scale(n: int) -> dict[str, float]:
    gc.collect()
    wf = linear_flow(n)
    t0 = time.perf_counter()
    built = wf.build()
    graph = WorkflowGraph.from_built(built)
    t1 = time.perf_counter()
    report = analyze(graph)
    t2 = time.perf_counter()
    text = to_mermaid(graph)
    t3 = time.perf_counter()
    assert report.ok, [d.format_line() for d in report.diagnostics[:3]]
    assert text.count("-->") >= n
    return {"build": t1 - t0, "check": t2 - t1, "mermaid": t3 - t2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no 100,000")
    parser.add_argument("--only", default="cycle,fanout,scale",
                        help="comma-separated workloads of cycle, fanout, scale")
    args = parser.parse_args()
    repeats = 5 if args.quick else 20
    only = {w.strip() for w in args.only.split(",") if w.strip()}
    unknown = only - {"cycle", "fanout", "scale"}
    if unknown or not only:
        parser.error(f"--only: unknown workload(s) {sorted(unknown)}")
    if "cycle" in only:
        cycle(repeats)
    if "fanout" in only:
        fanout(repeats)
    if "scale" in only:
        sizes = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
        print("\nlinear flow of N nodes (every tenth an agent): seconds")
        print(f"  {'N':>8} {'build':>8} {'check':>8} {'mermaid':>8}")
        for n in sizes:
            r = scale(n)
            print(f"  {n:>8} {r['build']:8.3f} {r['check']:8.3f} {r['mermaid']:8.3f}")


def cycle(repeats: int) -> None:
    print(f"two-step cycle, {ROUNDS} rounds = {STEPS_PER_RUN} steps per run "
          f"(median of {repeats} runs)")
    base = per_step(baseline_cycle(), repeats)
    print(f"  {'plain Python loop':<22} {base:9.3f} µs/step")
    rows: list[tuple[str, Callable[[], Any] | None]] = [
        ("stepswitch", stepswitch_cycle()),
        ("pydantic-graph", pydantic_graph_cycle()),
        ("LangGraph", langgraph_cycle()),
    ]
    for name, run in rows:
        if run is None:
            print(f"  {name:<22} not installed (pip install -e '.[bench]')")
            continue
        us = per_step(run, repeats)
        print(f"  {name:<22} {us:9.2f} µs/step   overhead {us - base:9.2f} µs/step")


if __name__ == "__main__":
    main()
