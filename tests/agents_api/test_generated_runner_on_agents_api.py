"""The checked-in generated runner (``codegen/support.py``) on the hosted Agents API: the
same items (pins included) and the same requests to the server as the interpreted
machine, through a pause, a resume from JSON and a handoff."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import codegen.support as generated
import stepswitch as ss
from graphs.support import support
from stepswitch.models import AgentsAPIModel, AgentsAPIServer
from stepswitch.models.script import call, message

SCRIPT = [
    [call("lookup_order", {"order_id": 42})],
    [message("Over to refunds."), call("transfer_to_refund", {})],
    [call("process_refund", {"order_id": 42})],
    [message("Refunded order 42.")],
]


def run_through(runner: Any, mode: str) -> tuple[list[Any], Any, list[Any]]:
    with AgentsAPIServer(SCRIPT) as server:
        model = AgentsAPIModel("gpt-test", server.client())
        first = runner.run_sync("refund 42", model=model)
        state = ss.RunState.from_json(first.to_state().to_json())
        state.approve(first.interruptions[0])
        if mode == "run_streamed":
            async def consume() -> Any:
                streamed = runner.run_streamed(state, model=model)
                [e async for e in streamed.stream_events()]
                return streamed

            done = asyncio.run(consume())
        else:
            done = runner.run_sync(state, model=model)
        server.assert_complete()
        requests = [(r.method, r.path, r.body) for r in server.requests]
    return list(done.new_items), done.final_output, requests


@pytest.mark.parametrize("mode", ["run_sync", "run_streamed"])
def test_the_generated_runner_drives_a_session_as_the_interpreter_does(mode: str) -> None:
    ours = run_through(generated, mode)
    assert ours == run_through(support.compile(), mode)
    _, final, requests = ours
    assert final == "Refunded order 42."
    assert sum(1 for m, p, _ in requests if m == "POST" and p == "/v1/agents/sessions") == 1
