"""What goes wrong on the way to a hosted session, and what stepswitch does about it.

A counted ledger records every tool execution: a resume after a dropped connection, a
500 or a failed process resubmits the saved result with the same ``(turn_id,
call_id)`` and the same ``Idempotency-Key``, and never runs the tool again. Bad
arguments, unknown tools, failing tools, the pending-call race and a failed session each
get the loop's own treatment, over real HTTP.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.types.beta.agent_session import (
    RequiredActionSessionRequiredActionResourceFunctionCall,
)

import stepswitch as ss
from stepswitch.models import AgentsAPIServer
from stepswitch.models.agents_api_server import Fault, FaultKind, session_failed
from stepswitch.models.script import call, message
from stepswitch.runtime.items import ToolCallItem
from tests.agents_api.conftest import Ledger, ledger_workflow, model_on, without_pins

FAST = (0.01, 0.02, 0.03)
"""Race retry delays short enough for a test (the client's helper waits 0.1/0.3/0.6 s)."""


def write_backs(server: AgentsAPIServer) -> list[tuple[str, dict[str, Any], str]]:
    """Every tool_result post as (call id, event, Idempotency-Key), retries included."""
    return [(e["call_id"], e, r.headers.get("idempotency-key", ""))
            for r in server.requests if r.method == "POST" and r.path.endswith("/events")
            for e in r.body["events"] if e["type"] == "agent.session.input.tool_result"]


def _call_id(item: Any) -> str:
    assert isinstance(item, ToolCallItem)
    return item.call_id


def paused(server: AgentsAPIServer, machine: ss.StateMachine) -> ss.RunState:
    """The ledger workflow paused at its approval, approved, saved and loaded."""
    server.add(
        [call("lookup_order", {"order_id": 7})],
        [call("transfer_to_refund", {})],
        [call("process_refund", {"order_id": 7})],
    )
    first = machine.run_sync("refund order 7", model=model_on(server))
    [pending] = first.interruptions
    state = first.to_state()
    state.approve(pending)
    return ss.RunState.from_json(state.to_json())


@pytest.mark.parametrize("kind", ["drop", "error_500"])
def test_a_resume_after_the_write_back_was_lost_resubmits_it_and_never_reruns_the_tool(
    kind: FaultKind, server: AgentsAPIServer
) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    state = paused(server, machine)
    server.add([message("Refunded order 7.")])
    # the refund's write-back (the third) is applied, then its answer is lost
    server.faults.append(Fault(kind, nth=3))
    with pytest.raises(ss.ModelProviderError) as caught:
        machine.run_sync(state, model=model_on(server, max_retries=0))
    assert ledger.count("process_refund") == 1
    refund_call = _call_id(state.items[-2])
    assert server.applied[-1][2] == refund_call  # the server has the result
    assert server.session()["status"] == "idle"  # and went on to the final answer

    again = ss.RunState.from_json(caught.value.run_data.to_state().to_json())
    done = machine.run_sync(again, model=model_on(server, max_retries=0))

    assert done.final_output == "Refunded order 7."
    assert ledger.count("process_refund") == 1  # the tool never ran twice
    assert [p[2] for p in server.applied].count(refund_call) == 1  # nor was it applied twice
    posts = [(e, key) for c, e, key in write_backs(server) if c == refund_call]
    assert len(posts) == 2 and posts[0] == posts[1]  # the same result, the same key
    assert json.loads(posts[0][0]["output"]) == {"refunded": 7, "ok": True}
    assert posts[0][0]["turn_id"] == server.items()[-4]["turn_id"]
    server.assert_complete()


def test_the_client_s_own_retry_of_a_lost_write_back_reuses_its_key(
    server: AgentsAPIServer,
) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    state = paused(server, machine)
    server.add([message("Refunded order 7.")])
    server.faults.append(Fault("drop", nth=3))
    done = machine.run_sync(state, model=model_on(server, max_retries=2))

    assert done.final_output == "Refunded order 7."
    refund_call = _call_id(state.items[-2])
    posts = [key for c, _, key in write_backs(server) if c == refund_call]
    assert len(posts) == 2 and len(set(posts)) == 1
    assert [p[2] for p in server.applied].count(refund_call) == 1
    assert ledger.count("process_refund") == 1


def test_the_pending_call_race_is_retried_with_the_same_key(server: AgentsAPIServer) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    server.faults.append(Fault("race", nth=1, times=2))
    server.add([call("lookup_order", {"order_id": 3})], [message("Order 3 has shipped.")])
    done = machine.run_sync("where is 3?", model=model_on(server, race_delays=FAST))

    assert done.final_output == "Order 3 has shipped."
    posts = write_backs(server)
    assert len(posts) == 3 and len({key for _, _, key in posts}) == 1
    assert len(server.applied) == 1 and ledger.count("lookup_order") == 1


def test_a_race_that_outlasts_the_retries_is_a_located_error_with_the_run_kept(
    server: AgentsAPIServer,
) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    server.faults.append(Fault("race", nth=1, times=9))
    server.add([call("lookup_order", {"order_id": 3})])
    with pytest.raises(ss.UserError) as caught:
        machine.run_sync("where is 3?", model=model_on(server, race_delays=FAST))
    message_ = str(caught.value)
    assert "Unknown pending tool call: call_0_0" in message_ and "400" in message_
    assert "\n" not in message_
    kept: Any = caught.value  # a UserError of a run carries the run as run_data too
    kinds = [i.type for i in without_pins(kept.run_data.new_items)]
    assert kinds == ["tool_call_item", "tool_call_output_item"]
    assert len(write_backs(server)) == 4  # one try and three retries


def test_a_write_back_for_a_pair_that_is_not_pending_gets_a_400(
    server: AgentsAPIServer,
) -> None:
    import asyncio

    server.add([call("lookup_order", {"order_id": 1})])

    async def main() -> Any:
        sessions = server.client(max_retries=0).beta.agents.sessions
        created = await sessions.create(environment={"type": "none"},
                                        agent={"model": "m"}, input="hi")
        [action] = created.required_actions
        assert isinstance(action, RequiredActionSessionRequiredActionResourceFunctionCall)

        with pytest.raises(openai.BadRequestError) as wrong:
            await sessions.events.create(created.id, events=[{
                "type": "agent.session.input.tool_result", "turn_id": "turn_other",
                "call_id": action.call_id, "success": True, "output": "x"}])
        return wrong.value.body

    body = asyncio.run(main())
    assert body["message"] == "Unknown pending tool call: call_0_0"
    assert body["code"] == "invalid_request_error"


def test_arguments_the_schema_rejects_go_back_as_a_failure_and_the_tool_never_runs(
    server: AgentsAPIServer,
) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    server.add(
        [call("lookup_order", {"order_id": "not a number"})],
        [call("lookup_order", {"order_id": 5})],
        [message("Order 5 has shipped.")],
    )
    done = machine.run_sync("where is 5?", model=model_on(server))

    assert done.final_output == "Order 5 has shipped."
    assert ledger.ran == [("lookup_order", 5)]
    first, second = (e for _, e, _ in write_backs(server))
    assert first["success"] is False and "output" not in first
    assert "order_id" in first["error"]
    assert second == {"type": "agent.session.input.tool_result", "turn_id": second["turn_id"],
                      "call_id": "call_1_0", "success": True, "output": "order 5: shipped"}
    [failed] = [i for i in server.items() if i["type"] == "function_call_output"
                and i["status"] == "failed"]
    assert failed["error"] == first["error"]


def test_a_tool_that_raises_goes_back_as_a_failure(server: AgentsAPIServer) -> None:
    @ss.function_tool
    def flaky(order_id: int) -> str:
        """Fails."""
        raise RuntimeError("database is down")

    agent = ss.Agent(name="a", instructions="x", tools=[flaky])
    machine = ss.Workflow("w", entry=agent, agents=[agent]).compile()
    server.add([call("flaky", {"order_id": 1})], [message("Sorry.")])
    done = machine.run_sync("go", model=model_on(server))
    [(_, event, _)] = write_backs(server)
    assert event["success"] is False and "database is down" in event["error"]
    assert done.final_output == "Sorry."


def test_an_unknown_tool_is_the_loop_s_error_or_a_failure_it_sends_back(
    server: AgentsAPIServer,
) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    server.add([call("delete_everything", {})])
    with pytest.raises(ss.ModelBehaviorError) as caught:
        machine.run_sync("go", model=model_on(server))
    assert "Tool delete_everything not found in agent triage" in str(caught.value)
    assert caught.value.run_data is not None
    assert write_backs(server) == []

    server.add([call("delete_everything", {})], [message("I cannot do that.")])
    done = machine.run_sync("go", model=model_on(server),
                            run_config=ss.RunConfig(unknown_tool="return_error"))
    assert done.final_output == "I cannot do that."
    [(_, event, _)] = write_backs(server)
    assert event["success"] is False and event["error"] == "Tool 'delete_everything' not found."


def test_a_failed_session_is_a_located_error_and_the_run_is_kept(
    server: AgentsAPIServer,
) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    server.add([call("lookup_order", {"order_id": 9})], session_failed("the model is overloaded"))
    with pytest.raises(ss.ModelProviderError) as caught:
        machine.run_sync("where is 9?", model=model_on(server))
    text = str(caught.value)
    session_id = server.session()["id"]
    assert text == (f"Agents API session {session_id} failed: the model is overloaded")
    kept = without_pins(caught.value.run_data.new_items)
    assert [(i.type, getattr(i, "name", None)) for i in kept] == [
        ("tool_call_item", "lookup_order"), ("tool_call_output_item", "lookup_order")]
    assert server.session()["status"] == "failed"
    assert ledger.count("lookup_order") == 1


def test_a_cut_event_stream_is_read_back_from_the_session(server: AgentsAPIServer) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    server.faults.append(Fault("stream_drop", nth=2, after=1))
    server.add([call("lookup_order", {"order_id": 2})],
               [message("Order 2 "), message("has shipped.")])
    done = machine.run_sync("where is 2?", model=model_on(server))
    assert [i.content for i in done.new_items if i.type == "message_output_item"] == [
        "Order 2 ", "has shipped."]
    assert ledger.count("lookup_order") == 1
    assert any(r.path.endswith("/items") for r in server.requests)


def test_a_create_whose_answer_was_lost_makes_one_session(server: AgentsAPIServer) -> None:
    ledger = Ledger()
    machine = ledger_workflow(ledger)
    server.faults.append(Fault("create_drop"))
    server.add([message("Hello.")])
    done = machine.run_sync("hi", model=model_on(server, max_retries=2))
    assert done.final_output == "Hello."
    creates = [r for r in server.requests if r.path == "/v1/agents/sessions"]
    assert len(creates) == 2 and len(server.sessions) == 1
    assert creates[0].headers["idempotency-key"] == creates[1].headers["idempotency-key"]
