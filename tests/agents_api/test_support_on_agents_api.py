"""The support workflow end to end on the hosted Agents API: the real ``openai`` client
over HTTP against ``AgentsAPIServer``, on ``run_sync``, ``run`` and ``run_streamed``.

Each test asserts what a user sees (items, final output, last agent, usage) and what
the server got: the session's agent config at create, each write-back's pair and
``Idempotency-Key``, the update a handoff makes, and the session's own item list.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.models import AgentsAPIServer
from stepswitch.models.script import Reply, call, message
from stepswitch.runtime.events import RawResponsesStreamEvent
from tests.agents_api.conftest import model_on, pins, run_on, without_pins

MODES = ["run_sync", "run", "run_streamed"]
ASK = "I want a refund for order 42"
PAUSE = [
    Reply((call("lookup_order", {"order_id": 42}),), input_tokens=50, output_tokens=5),
    Reply((message("Handing you to refunds."), call("transfer_to_refund", {})),
          input_tokens=70, output_tokens=9),
    Reply((call("process_refund", {"order_id": 42, "reason": "damaged"}),),
          input_tokens=90, output_tokens=7),
]
FINISH = Reply((message("Refunded order 42."),), input_tokens=120, output_tokens=8)


@pytest.fixture(scope="module")
def machine() -> ss.StateMachine:
    return support.compile()


def posted(server: AgentsAPIServer, kind: str) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """Every input event of ``kind`` the server got, with its request's headers."""
    return [(e, r.headers) for r in server.requests
            if r.method == "POST" and r.path.endswith("/events")
            for e in r.body["events"] if e["type"] == kind]


@pytest.mark.parametrize("mode", MODES)
def test_support_pauses_for_approval_then_resumes_from_saved_state(
    mode: str, machine: ss.StateMachine, server: AgentsAPIServer
) -> None:
    server.add(*PAUSE)
    model = model_on(server)
    first, events = run_on(machine, ASK, model, mode)

    assert first.final_output is None and first.last_agent == "refund"
    [pending] = first.interruptions
    assert pending.name == "process_refund"
    assert [(i.type, i.agent) for i in without_pins(first.new_items)] == [
        ("tool_call_item", "triage"),
        ("tool_call_output_item", "triage"),
        ("message_output_item", "triage"),
        ("handoff_call_item", "triage"),
        ("handoff_output_item", "triage"),
        ("tool_call_item", "refund"),
        ("tool_approval_item", "refund"),
    ]
    if mode == "run_streamed":
        raw = [e.data for e in events if isinstance(e, RawResponsesStreamEvent)]
        kinds = {getattr(d, "type", None) for d in raw}
        assert {"agent.session.requires_action", "agent.session.turn.output_text.delta",
                "agent.session.turn.item.done"} <= kinds
    # the session: created once with triage's config and the user's message
    [create] = [r for r in server.requests if r.method == "POST"
                and r.path == "/v1/agents/sessions"]
    assert create.headers["openai-beta"] == "agents=v1"
    body = create.body
    assert body["environment"] == {"type": "none"} and body["stream"] is True
    assert body["agent"]["model"] == "gpt-test"
    assert body["agent"]["instructions"].startswith("You triage customer requests")
    assert [t["name"] for t in body["agent"]["tools"]] == [
        "lookup_order", "research", "transfer_to_refund"]
    lookup = body["agent"]["tools"][0]
    assert lookup["type"] == "function" and "strict" not in lookup
    assert lookup["parameters"]["properties"]["order_id"]["type"] == "integer"
    assert body["input"] == [{"role": "user", "type": "message",
                              "content": [{"type": "input_text", "text": ASK}]}]
    # the handoff updated the session's agent: refund's tools, no instructions field
    [update] = [r for r in server.requests if r.method == "POST"
                and r.path.count("/") == 4 and not r.path.endswith("/events")]
    assert sorted(update.body["agent"]) == ["model", "reasoning", "tools"]
    assert [t["name"] for t in update.body["agent"]["tools"]] == [
        "process_refund", "transfer_to_triage"]
    assert [t["name"] for t in server.session()["agent"]["tools"]] == [
        "process_refund", "transfer_to_triage"]
    # the pending call waits in the session, answered by nobody yet
    session = server.session()
    assert session["status"] == "requires_action"
    assert [(a["name"], a["call_id"]) for a in session["required_actions"]] == [
        ("process_refund", pending.call_id)]
    assert pins(first.new_items)[-1]["calls"] == [
        {"turn_id": a["turn_id"], "call_id": a["call_id"]} for a in session["required_actions"]]

    state = ss.RunState.from_json(first.to_state().to_json())  # across processes
    state.approve(pending)
    server.add(FINISH)
    second, _ = run_on(machine, state, model, mode)

    assert second.final_output == "Refunded order 42."
    assert second.last_agent == "refund"
    # each turn reports what the session's usage grew by, before and after the pause; the
    # resumed run's usage goes on from the saved state's, as the SDK's does
    assert (first.usage.requests, first.usage.input_tokens, first.usage.output_tokens) == (
        3, 50 + 70 + 90, 5 + 9 + 7)
    assert (second.usage.requests, second.usage.input_tokens, second.usage.output_tokens) == (
        3 + 1, 50 + 70 + 90 + 120, 5 + 9 + 7 + 8)
    server.assert_complete()
    # every write-back answers a required action with the same pair, once, with a key
    results = posted(server, "agent.session.input.tool_result")
    assert [e["call_id"] for e, _ in results] == [
        i.call_id for i in without_pins(second.new_items) if i.type in
        ("tool_call_output_item", "handoff_output_item")]
    for event, headers in results:
        assert event["success"] is True and isinstance(event["output"], str)
        assert headers["idempotency-key"].startswith("stepswitch-")
    assert len({h["idempotency-key"] for _, h in results}) == len(results)
    handoff = json.loads(results[1][0]["output"])
    assert handoff == {"assistant": "refund", "instructions": support.agents[1].instructions}
    assert results[2][0]["output"] == "refunded order 42 (damaged)"
    # the session's item list: each call has exactly one output, paired by (turn, call)
    items = server.items()
    calls = [(i["turn_id"], i["call_id"]) for i in items if i["type"] == "function_call"]
    outputs = [(i["turn_id"], i["call_id"]) for i in items if i["type"] == "function_call_output"]
    assert calls == outputs and len(calls) == 3
    assert server.session()["status"] == "idle"


def test_a_local_run_of_the_same_script_makes_the_same_items(
    machine: ss.StateMachine, server: AgentsAPIServer
) -> None:
    script = [*PAUSE[:2], Reply((message("Which order?"),))]
    server.add(*script)
    hosted = machine.run_sync(ASK, model=model_on(server))
    local = machine.run_sync(ASK, model=ss.testing.ScriptedModel(
        [list(step.output) for step in script]))

    def shape(items: Any) -> list[tuple[Any, ...]]:
        return [(i.type, i.agent, getattr(i, "name", None), getattr(i, "output", None),
                 getattr(i, "content", None)) for i in items]

    assert shape(without_pins(hosted.new_items)) == shape(local.new_items)
    assert hosted.final_output == local.final_output == "Which order?"
    assert hosted.last_agent == local.last_agent == "refund"


def test_an_agent_tool_runs_as_its_own_session_with_its_output_format(
    machine: ss.StateMachine, server: AgentsAPIServer
) -> None:
    server.add(
        [call("research", {"input": "Is order 42 refundable?"})],
        [message('{"summary": "Yes, within 30 days."}')],
        [message("Order 42 can be refunded within 30 days.")],
    )
    result = machine.run_sync("Can I return order 42?", model=model_on(server))

    assert result.final_output == "Order 42 can be refunded within 30 days."
    [output] = [i for i in result.new_items if i.type == "tool_call_output_item"]
    assert json.loads(output.output) == {"summary": "Yes, within 30 days."}
    creates = [r.body for r in server.requests if r.method == "POST"
               and r.path == "/v1/agents/sessions"]
    assert len(creates) == 2 and len(server.sessions) == 2
    nested = creates[1]
    assert nested["agent"]["instructions"].startswith("Research the customer's question")
    assert nested["agent"]["tools"] == []
    schema = nested["agent"]["text"]["format"]
    assert schema["type"] == "json_schema" and "summary" in schema["schema"]["properties"]
    assert nested["input"][0]["content"][0]["text"] == "Is order 42 refundable?"
    assert "text" not in creates[0]["agent"]
    server.assert_complete()
