"""Benchmark: replay 1,000 recorded runs of the support workflow on its compiled machine.

Each run is recorded once with a scripted model (graphs/support.py: a lookup, a
handoff to refund, a refund the human approves, a final message; the order number
differs per run), saved as a ``RunState`` JSON, and read back as a recording. Timed:
``replay_run`` of all 1,000 recordings (read and replay; no tool runs, no model call),
best of three; "cpu s" is the process CPU time of the best round.
Target: ≤ 1 s for 1,000 runs.

    python bench/bench_replay.py [N]      # default: 1000
"""

from __future__ import annotations

import sys
import time

from graphs.support import support
from stepswitch.review.replay import read_recording, replay_run
from stepswitch.testing import ScriptedModel, assistant_message, function_call


def record(machine: object, n: int) -> str:
    order = 1000 + n
    model = ScriptedModel([
        [function_call("lookup_order", {"order_id": order})],
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": order})],
        [assistant_message(f"Order {order} is refunded.")],
    ])
    first = machine.run_sync(f"refund order {order}", model=model)  # type: ignore[attr-defined]
    state = first.to_state()
    state.approve(first.interruptions[0])
    done = machine.run_sync(state, model=model)  # type: ignore[attr-defined]
    text: str = done.to_state().to_json()
    return text


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    machine = support.compile()
    t0 = time.perf_counter()
    texts = [record(machine, i) for i in range(n)]
    print(f"recorded {n} runs in {time.perf_counter() - t0:.2f} s")
    best = cpu = float("inf")
    for _ in range(3):
        w0, c0 = time.perf_counter(), time.process_time()
        diverged = 0
        for text in texts:
            if replay_run(read_recording(text), machine).divergence is not None:
                diverged += 1
        wall, used = time.perf_counter() - w0, time.process_time() - c0
        if wall < best:
            best, cpu = wall, used
    assert diverged == 0, f"{diverged} runs diverged on an unchanged workflow"
    per = best / n * 1e6
    print(f"replayed {n} runs: {best:.3f} s wall, {cpu:.3f} cpu s ({per:.0f} µs/run); "
          f"target ≤ 1 s per 1,000: {'ok' if best * 1000 / n <= 1.0 else 'OVER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
