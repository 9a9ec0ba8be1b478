"""Differential: the same script through ``ScriptedModel`` (in process) and through
``OpenAIServer`` + the real client (both APIs, plain and streamed) gives the same run:
items, final output, last agent, interruptions, or the same error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.testing import ScriptedModel, assistant_message, function_call

SCENARIOS: dict[str, list[Any]] = {
    "seed_flow_pauses": [
        [function_call("lookup_order", {"order_id": 42}, "c1")],
        [function_call("transfer_to_refund", {}, "c2")],
        [function_call("process_refund", {"order_id": 42}, "c3")],
    ],
    "several_tools_and_text": [
        [
            assistant_message("Checking both."),
            function_call("lookup_order", {"order_id": 1}, "c1"),
            function_call("lookup_order", {"order_id": 2}, "c2"),
        ],
        [assistant_message("Both shipped.")],
    ],
    "invalid_arguments_are_fed_back": [
        [function_call("lookup_order", '{"order_id": "forty', "c1")],
        [function_call("lookup_order", {"order_id": 40}, "c2")],
        [assistant_message("Order 40 shipped.")],
    ],
    "agent_tool_with_structured_output": [
        [function_call("research", {"input": "late?"}, "c1")],
        [assistant_message('{"summary": "on time"}')],
        [assistant_message("It is on time.")],
    ],
    "handoff_there_and_back": [
        [function_call("transfer_to_refund", {}, "c1")],
        [function_call("transfer_to_triage", {}, "c2")],
        [assistant_message("Back at triage.")],
    ],
    "unknown_tool_is_model_behavior_error": [
        [function_call("delete_everything", {}, "c1")],
    ],
}


def observe(machine: ss.StateMachine, model: Any, streamed: bool) -> dict[str, Any]:
    try:
        if streamed:

            async def consume() -> Any:
                s = machine.run_streamed("I need help with order 42", model=model)
                async for _ in s.stream_events():
                    pass
                return s

            result = asyncio.run(consume())
        else:
            result = machine.run_sync("I need help with order 42", model=model)
    except ss.StepswitchError as exc:
        data = getattr(exc, "run_data", None)
        return {"error": (type(exc), str(exc)), "items": list(data.new_items) if data else None}
    return {
        "items": list(result.new_items),
        "final_output": result.final_output,
        "last_agent": result.last_agent,
        "interruptions": [i.call_id for i in result.interruptions],
    }


@pytest.fixture(scope="module")
def machine() -> ss.StateMachine:
    return support.compile()


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_http_run_equals_scripted_run(
    scenario: str, api: str, streamed: bool, machine: ss.StateMachine
) -> None:
    script = SCENARIOS[scenario]
    scripted = ScriptedModel(script)
    expected = observe(machine, scripted, streamed)
    with OpenAIServer(script) as server:
        cls = OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel
        got = observe(machine, cls("gpt-test", server.client()), streamed)
    assert got == expected
    # the model saw the same conversation: one request per scripted call, same tools
    requests = server.model_requests(api)
    assert len(requests) == len(scripted.calls)
    for req, call in zip(requests, scripted.calls, strict=True):
        tools = req.body.get("tools", [])
        names = tuple(t.get("name") or t["function"]["name"] for t in tools)
        assert names == call.tools
