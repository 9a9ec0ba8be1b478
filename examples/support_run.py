"""Run the support workflow on a scripted model, pause for the refund approval, save
the paused run to disk, load it back, approve and resume.

Run: .venv/bin/python examples/support_run.py [--state out/support_state.json]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # so `graphs.support` imports when run from anywhere
    sys.path.insert(0, str(ROOT))

import stepswitch as ss  # noqa: E402
from graphs.support import support  # noqa: E402
from stepswitch.runtime import RunItemStreamEvent  # noqa: E402
from stepswitch.testing import ScriptedModel, assistant_message, function_call  # noqa: E402


def show(item: ss.runtime.RunItem) -> str:
    if item.type == "message_output_item":
        return f"[{item.agent}] says: {item.content}"
    if item.type in ("tool_call_item", "handoff_call_item"):
        return f"[{item.agent}] calls {item.name}({item.arguments})"
    if item.type == "tool_approval_item":
        return f"[{item.agent}] waits for approval of {item.name}({item.arguments})"
    if item.type == "handoff_output_item":
        return f"[{item.agent}] hands off to {item.target_agent}"
    return f"[{item.agent}] {item.name} returned: {item.output}"


async def first_half(machine: ss.StateMachine, model: ScriptedModel) -> ss.RunState:
    print("== run (streamed) ==")
    streamed = machine.run_streamed("I want a refund for order 42", model=model)
    async for event in streamed.stream_events():
        if isinstance(event, RunItemStreamEvent):
            print("  " + show(event.item))
        elif event.type == "agent_updated_stream_event":
            print(f"  -- agent: {event.new_agent}")
    for pending in streamed.interruptions:
        print("  " + show(pending))
    assert streamed.final_output is None and streamed.interruptions
    return streamed.to_state()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Pause and resume the support workflow.")
    parser.add_argument("--state", default="out/support_state.json", help="where to save")
    args = parser.parse_args(argv)

    machine = support.compile()
    print(f"compiled {machine!r}: states {', '.join(machine.agents)}")
    model = ScriptedModel([
        [function_call("lookup_order", {"order_id": 42})],
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42, "reason": "damaged"})],
        [assistant_message("Your refund for order 42 has been processed.")],
    ])

    state = asyncio.run(first_half(machine, model))
    path = Path(args.state)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(state.to_json(indent=2), encoding="utf-8")
    print(f"== paused: saved the run to {path} ({path.stat().st_size} bytes) ==")

    loaded = ss.RunState.from_json(path.read_text(encoding="utf-8"))
    pending = loaded.interruptions[0]
    print(f"== loaded; a human approves {pending.name} (call {pending.call_id}) ==")
    loaded.approve(pending)

    result = machine.run_sync(loaded, model=model)
    resumed = result.new_items[len(loaded.items):]
    for item in resumed:
        print("  " + show(item))
    print(f"== final output ({result.last_agent}): {result.final_output}")
    print(f"   model calls: {len(model.calls)}, items: {len(result.new_items)}")
    model.assert_complete()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
