"""The checked-in generated runner (``codegen/support.py``) runs over real HTTP too, and
gives the same items and requests as the interpreted machine."""

from __future__ import annotations

from typing import Any

import pytest

import codegen.support as generated
import stepswitch as ss
from graphs.support import support
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.script import call, message

SCRIPT = [
    [call("lookup_order", {"order_id": 42}, "c1")],
    [message("Over to refunds."), call("transfer_to_refund", {}, "c2")],
    [call("process_refund", {"order_id": 42}, "c3")],
    [message("Refunded order 42.")],
]


def run_through(runner: Any, api: str) -> tuple[list[Any], Any, list[Any]]:
    cls = OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel
    with OpenAIServer(SCRIPT) as server:
        model = cls("gpt-test", server.client())
        first = runner.run_sync("refund 42", model=model)
        state = ss.RunState.from_json(first.to_state().to_json())
        state.approve(first.interruptions[0])
        done = runner.run_sync(state, model=model)
        server.assert_complete()
    return list(done.new_items), done.final_output, [r.body for r in server.requests]


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_generated_runner_matches_the_interpreter_over_http(api: str) -> None:
    assert run_through(generated, api) == run_through(support.compile(), api)
    items, final, _ = run_through(generated, api)
    assert final == "Refunded order 42."
    assert [i.type for i in items][-2:] == ["tool_call_output_item", "message_output_item"]
