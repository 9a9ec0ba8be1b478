"""What a flow costs the Temporal worker's workflow side, in instructions (callgrind).

One run of the judge flow (graphs/judge.py: two rounds, so 4 model calls and 6 step
calls, every one a local activity) is recorded on a dev server, then replayed 12 and 2
times under callgrind; the difference over 10 is what one run's workflow side costs
the worker: every activation, the SDK's work, the flow loop's and our driver's, payload
conversion. The shared machine's load cannot move this figure. The support run's figure
(bench_temporal.py --instructions: 4 model calls, 1 tool, a nested run) is the
handoff-workflow baseline.

Run: ``.venv/bin/python bench/bench_flow_temporal.py`` (needs valgrind, ~2 minutes).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_temporal import TUNED, dev_server, replayed  # noqa: E402
from graphs.judge import judge  # noqa: E402
from stepswitch.runtime.model import ModelRequest, ModelResponse  # noqa: E402
from stepswitch.temporal import (  # noqa: E402
    RunInput,
    RunOutput,
    connect,
    machine_digest,
    worker_for,
    workflow_name,
)
from stepswitch.testing import assistant_message  # noqa: E402


class TwoRounds:
    """The generator writes; the evaluator sends the first outline back, passes the
    second (by how many outlines the request holds, so any number of runs works)."""

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        text = " ".join(str(getattr(i, "content", "")) for i in request.input)
        if request.agent == "evaluator":
            score = "pass" if "Feedback" in text or "second" in text else "needs_improvement"
            out = json.dumps({"feedback": "add a twist", "score": score})
        else:
            out = "second outline" if "Feedback" in text else "first outline"
        return ModelResponse((assistant_message(out),))


async def _record(address: str, path: Path) -> None:
    machine = judge.compile()
    client = await connect(address, timeout=30)
    queue = f"record-{uuid.uuid4().hex[:8]}"
    async with worker_for(client, machine, task_queue=queue, model=TwoRounds(),
                          local_activities=True):
        handle = await client.start_workflow(
            workflow_name(machine), RunInput("a heist", digest=machine_digest(machine)),
            id=f"record-{uuid.uuid4().hex}", task_queue=queue, result_type=RunOutput,
        )
        out = await handle.result()
        assert out.final_output == "second outline", out
    path.write_text((await handle.fetch_history()).to_json())


def main() -> int:
    if shutil.which("valgrind") is None:
        print("bench_flow_temporal: needs valgrind", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        history = Path(tmp) / "judge.json"
        with dev_server(TUNED.server_flags, TUNED.server_env) as (address, _):
            asyncio.run(_record(address, history))
        per_run = (replayed(history, 12, "graphs.judge", "judge")
                   - replayed(history, 2, "graphs.judge", "judge")) / 10
    print(f"instructions per replayed judge-flow run (workflow side, local activities; "
          f"4 model calls, 6 steps): {per_run / 1e6:.1f} M")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
