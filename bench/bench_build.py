"""Benchmark: declaring an N-agent workflow and building its spec and graph.

Target (issue #2): 10,000 agents declared + spec + graph in <= 1 s, growing linearly.
Issue #30: after one build, check, Mermaid and DOT of 10,000 agents each <= 0.3 s from
the shared graph (the rows after the table; ``--sizes`` with no sizes for only those).
Run: .venv/bin/python bench/bench_build.py [--sizes 1000 10000 100000] [--shared N]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time

import stepswitch as ss


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look something up."""
    return str(order_id)


@ss.function_tool(needs_approval=True)
def act(order_id: int, note: str = "") -> str:
    """Do something that needs approval."""
    return note


def declare(n: int, seed: int = 7) -> ss.Workflow:
    """A chain of handoffs by object, random extra handoffs by name (some budgeted, making
    cycles), and an agent tool every tenth agent."""
    rng = random.Random(seed)
    agents: list[ss.Agent] = []
    previous: ss.Agent | None = None
    for i in range(n):
        handoffs: list[ss.Agent | ss.Handoff | str] = []
        if previous is not None:
            handoffs.append(previous)
        if i > 2:
            handoffs.append(ss.handoff(f"agent_{rng.randrange(i)}", max_uses=2))
        tools: list[ss.FunctionTool | ss.AgentTool] = [lookup]
        if i % 3 == 0:
            tools.append(act)
        if i % 10 == 0 and i:
            tools.append(ss.agent_tool(f"agent_{i - 1}", f"ask_{i - 1}", "Ask a helper."))
        agent = ss.Agent(
            name=f"agent_{i}", instructions="Work.", tools=tools, handoffs=handoffs
        )
        agents.append(agent)
        previous = agent
    return ss.Workflow(name=f"bench_{n}", entry=agents[-1], agents=agents, max_turns=None)


def measure(n: int) -> tuple[float, float, float]:
    gc.collect()
    t0 = time.perf_counter()
    wf = declare(n)
    t1 = time.perf_counter()
    built = wf.build()
    t2 = time.perf_counter()
    graph = ss.WorkflowGraph(built.spec, built.bindings)
    t3 = time.perf_counter()
    assert len(graph) == n
    return t1 - t0, t2 - t1, t3 - t2


def after_one_build(n: int, rounds: int) -> None:
    """Issue 30: one build, then check, Mermaid and DOT each from the built graph
    (``wf.graph()`` shared, as the CLI shares it), beside the facade methods, each of
    which builds the workflow again. Interleaved rounds; CPU seconds, median [min, max]."""
    from stepswitch.analysis import analyze
    from stepswitch.render import to_dot, to_mermaid

    wf = declare(n)
    gc.collect()
    t0 = time.process_time()
    graph = wf.graph()
    built_s = time.process_time() - t0
    report = analyze(graph)
    jobs = {
        "check (shared graph)": lambda: analyze(graph),
        "Mermaid (shared graph)": lambda: to_mermaid(graph, report=report),
        "DOT (shared graph)": lambda: to_dot(graph, report=report),
        "wf.check()": wf.check,
        "wf.to_mermaid()": wf.to_mermaid,
        "wf.to_dot()": wf.to_dot,
    }
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(rounds):
        for name, job in jobs.items():
            gc.collect()
            t0 = time.process_time()
            job()
            times[name].append(time.process_time() - t0)
    print(f"\n{n} agents: one build {built_s:.3f} s CPU, then each of (median [min, max] of "
          f"{rounds} interleaved rounds, CPU s; target after one build <= 0.3 s):")
    for name, ts in times.items():
        print(f"  {name:<24} {statistics.median(ts):7.3f}   [{min(ts):.3f}, {max(ts):.3f}]")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--shared", type=int, default=10_000, metavar="N",
                        help="agents for the check/Mermaid/DOT-after-one-build rows (0: none)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    measure(200)  # warm up imports and caches
    print(f"{'agents':>8} {'declare':>9} {'spec':>9} {'graph':>9} {'total':>9} {'µs/agent':>9}")
    for n in args.sizes:
        # best of three: the machine is shared, the minimum is the least disturbed run
        runs = [measure(n) for _ in range(3 if n <= 10_000 else 1)]
        declare_s, spec_s, graph_s = min(runs, key=sum)
        total = declare_s + spec_s + graph_s
        print(
            f"{n:>8} {declare_s:>8.3f}s {spec_s:>8.3f}s {graph_s:>8.3f}s {total:>8.3f}s "
            f"{total / n * 1e6:>9.1f}"
        )
    print("target: 10,000 agents in <= 1 s in all, linear growth")
    if args.shared:
        after_one_build(args.shared, args.rounds)


if __name__ == "__main__":
    main()
