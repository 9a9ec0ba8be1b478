"""Benchmark: all five policies proved on a generated 10,000-agent workflow.

The workflow: a handoff chain through every agent, random extra handoffs (budgeted),
agent tools on one agent in fifty (to random later agents, max_depth=2), a shared
lookup tool, an approved refund tool on one agent in a hundred, and a send tool on the
last agent. The five policies (require_approval, require_guardrail, forbid, max_calls,
only_after) are proved by the SW8xx rule alone, with the garbage collector paused as
``analyze`` runs its rules; printed: its time (best of several runs, wall and process CPU; the CPU
figure is the one a machine shared with other work inflates less) and which policies
fail.
Target: 10k agents, all five policies, ≤ 0.3 s.

    python bench/bench_policies.py [SIZES...]      # default: 10000
"""

from __future__ import annotations

import random
import sys
import time

import stepswitch as ss
from stepswitch._gc import gc_paused
from stepswitch.analysis._context import Ctx
from stepswitch.analysis.rules.policies import policies
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


@ss.function_tool
def send(text: str) -> str:
    """Send a message."""
    return text


def workflow(n: int, seed: int = 7) -> ss.Workflow:
    rng = random.Random(seed)
    once = ss.ModelSettings(parallel_tool_calls=False)
    agents: list[ss.Agent] = []
    for i in reversed(range(n)):
        tools: list[object] = [lookup]
        if i % 100 == 5:
            tools.append(refund)
        if i == n - 1:
            tools.append(send)
        handoffs: list[object] = []
        if agents:
            handoffs.append(ss.handoff(agents[-1], max_uses=1))
            for _ in range(2):
                handoffs.append(ss.handoff(rng.choice(agents), max_uses=1))
        if i % 50 == 0 and agents:
            tools.append(rng.choice(agents).as_tool(f"ask_{i}", "Ask", max_depth=2))
        agents.append(ss.Agent(f"a{i}", "x", tools=tools, handoffs=handoffs,
                               model_settings=once))
    agents.reverse()
    return ss.Workflow("big", agents[0], agents, max_turns=10, policies=[
        ss.require_approval(refund), ss.require_guardrail(send, "no_pii"),
        ss.forbid(send, from_agent=agents[n // 2]), ss.max_calls(refund, 100),
        ss.only_after(send, agents[n // 3])])


def main(sizes: list[int]) -> None:
    for n in sizes:
        t0 = time.perf_counter()
        graph = WorkflowGraph.from_built(build(workflow(n)))
        made = time.perf_counter() - t0
        best = cpu = float("inf")
        found = []
        for _ in range(5):
            ctx = Ctx(graph, None)
            with gc_paused():  # as analyze() runs every rule
                w0, c0 = time.perf_counter(), time.process_time()
                found = list(policies(ctx))
                best = min(best, time.perf_counter() - w0)
                cpu = min(cpu, time.process_time() - c0)
        print(f"{n:>7} agents: built in {made:.2f} s; 5 policies proved in {best:.3f} s "
              f"(cpu {cpu:.3f} s); failing: {', '.join(sorted(d.code for d in found))}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10000])
