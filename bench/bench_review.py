"""Benchmark: ``stepswitch diff`` of two 10,000-agent workflows and ``stepswitch trail``
of a 100,000-item trail.

diff: a generated 10k-agent workflow (handoff chain, random budgeted back-edges, agent
tools, function tools, one approval tool) and a "pull request" on it: 50 prompts edited,
20 tools gone, 20 agents renamed, 20 added, 10 removed, budgets raised, max_turns
raised. Timed: ``diff_specs(base, head)`` on the two specs, including the analyzer's
worst-case model-call bound of both sides (the comparison the CLI makes once both sides
are imported). Building the workflows from the DSL is the import's cost, printed apart.

trail: a 100,000-item Responses API list of a long conversation on graphs/support.py
(user message, lookup calls and outputs, a handoff, the refund, a final message; again
and again). Timed: reading the JSON text and checking it against the compiled machine
(``read_trail`` + ``check_trail``), and the same through ``stepswitch trail`` in-process.
Both figures are the best of several runs; "cpu s" is process CPU time, which other work
on a shared machine inflates less than wall time.

    python bench/bench_review.py
"""

from __future__ import annotations

import gc
import io
import json
import os
import random
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

import stepswitch as ss
from stepswitch.review import check_trail, diff_specs, read_trail

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look an order up."""
    return str(order_id)


@ss.function_tool
def track(order_id: int) -> str:
    """Track an order's parcel."""
    return str(order_id)


@ss.function_tool(needs_approval=True)
def refund(order_id: int) -> str:
    """Refund an order."""
    return str(order_id)


def generate(n: int, *, head: bool, seed: int = 11) -> ss.Workflow:
    rng = random.Random(seed)
    changed = random.Random(seed + 1)
    edited = set(changed.sample(range(n), 50))
    lose_tool = set(changed.sample(range(n), 20))
    renamed = set(changed.sample(range(1, n), 20))
    removed = set(changed.sample(sorted(set(range(1, n)) - renamed), 10))

    def name(i: int) -> str:
        return f"r{i}" if head and i in renamed else f"a{i}"

    agents = []
    for i in range(n):
        handoffs: list[ss.Handoff | str] = []
        if i + 1 < n and not (head and i + 1 in removed):
            handoffs.append(name(i + 1))
        if rng.random() < 0.3:
            target = rng.randrange(n)
            raised = rng.random() < 0.05  # drawn on both sides: the graphs stay alike
            budget = 4 if head and raised else 2
            if not (head and target in removed):
                handoffs.append(ss.handoff(name(target), max_uses=budget))
        tools: list[ss.FunctionTool | ss.AgentTool] = [lookup]
        if not (head and i in lose_tool):
            tools.append(track)
        if rng.random() < 0.02:
            tools.append(refund)
        if rng.random() < 0.1:
            target = rng.randrange(n)
            if not (head and target in removed):
                tools.append(ss.agent_tool(name(target), f"ask{i}", "Ask", max_turns=3,
                                           max_depth=2))
        text = f"Work on step {i}." + (" Be brief." if head and i in edited else "")
        if head and i in removed:
            continue
        agents.append(ss.Agent(name(i), text, tools=tools, handoffs=handoffs))
    if head:
        agents.extend(ss.Agent(f"new{i}", "New.", tools=[lookup]) for i in range(20))
    return ss.Workflow("generated", agents[0], agents, max_turns=30 if head else 20,
                       max_depth=4)


def bench_diff(n: int = 10_000, runs: int = 3) -> tuple[float, float, int, float]:
    t0 = time.perf_counter()
    base, head = generate(n, head=False).to_spec(), generate(n, head=True).to_spec()
    build = time.perf_counter() - t0
    best = cpu = float("inf")
    changes = 0
    for _ in range(runs):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        diff = diff_specs(base, head)
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
        changes = len(diff.changes)
    return best, cpu, changes, build


def _conversation(size: int) -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    n = 0

    def call(name: str, output: str) -> None:
        nonlocal n
        n += 1
        items.append({"type": "function_call", "call_id": f"call_{n}", "name": name,
                      "arguments": "{\"order_id\": 42}", "id": f"fc_{n}"})
        items.append({"type": "function_call_output", "call_id": f"call_{n}",
                      "output": output})

    while len(items) < size:
        items.append({"role": "user", "content": "Where is my order 42? Refund it."})
        call("lookup_order", "order 42: shipped")
        call("research", "{\"summary\": \"late\"}")
        call("transfer_to_refund", json.dumps({"assistant": "refund"}))
        call("process_refund", "refunded order 42")
        call("transfer_to_triage", json.dumps({"assistant": "triage"}))
        items.append({"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": "Done."}]})
    return items  # whole conversations: a few items past size


def bench_trail(size: int = 100_000, runs: int = 3) -> tuple[float, float, float, int]:
    from graphs.support import support
    from stepswitch.cli.main import main

    machine = support.compile().ir
    text = json.dumps(_conversation(size))
    best = cpu = cli = float("inf")
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trail.json")
        Path(path).write_text(text)
        for _ in range(runs):
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            report = check_trail(read_trail(text), machine)
            best = min(best, time.perf_counter() - start)
            cpu = min(cpu, time.process_time() - start_cpu)
            assert report.ok, report.findings[:3]
            checked = report.items
            start = time.perf_counter()
            with redirect_stdout(io.StringIO()):
                code = main(["trail", path, "--workflow", str(ROOT / "graphs" / "support.py")
                             + ":support"])
            cli = min(cli, time.perf_counter() - start)
            assert code == 0
    return best, cpu, cli, checked


def main() -> int:
    wall, cpu, changes, build = bench_diff()
    print(f"diff  10,000 agents: {wall:.3f} s (cpu {cpu:.3f} s), {changes} changes; "
          f"building both specs from the DSL took {build:.2f} s")
    t_wall, t_cpu, t_cli, items = bench_trail()
    print(f"trail {items:,} items: {t_wall:.3f} s (cpu {t_cpu:.3f} s) read + check; "
          f"`stepswitch trail --workflow` in-process {t_cli:.3f} s")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} CPU(s)")
    ok = wall <= 1.0 and t_wall <= 1.0
    print("targets (diff of 10k agents ≤ 1 s; trail of 100k items ≤ 1 s):",
          "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
