"""Run the generated runner of the support workflow (codegen/support.py) with a script.

The generated module needs no DSL: it holds the tables and the step functions, and
imports the workflow's tools by path. Run: .venv/bin/python examples/generated_runner.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `codegen` and `graphs`

from codegen import support as runner
from stepswitch import RunState
from stepswitch.testing import ScriptedModel, assistant_message, function_call

model = ScriptedModel(
    [
        [function_call("lookup_order", {"order_id": 42})],
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42})],
        [assistant_message("Refunded order 42.")],
    ]
)

if __name__ == "__main__":
    paused = runner.run_sync("I want a refund for order 42", model=model)
    print(f"paused at {paused.last_agent}: {[i.name for i in paused.interruptions]}")
    state = RunState.from_json(paused.to_state().to_json())
    state.approve(paused.interruptions[0])
    done = runner.run_sync(state, model=model)
    for item in done.new_items:
        print(f"  {item.type:<22} {item.agent}")
    print(f"final output: {done.final_output!r} (last agent {done.last_agent})")
