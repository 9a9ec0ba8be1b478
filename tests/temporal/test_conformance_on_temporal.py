"""The loop's scenarios through the Temporal driver: the same items, final output and
last agent as the in-process run, or the same error with the same items; every run's
history replays cleanly with ``Replayer`` afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel
from temporalio.client import Client

import stepswitch as ss
from graphs.support import support
from stepswitch.temporal import workflow_for
from stepswitch.testing import assistant_message, function_call
from tests.conformance.kit import Ledger, compile_agents, lookup_tool, refund_tool
from tests.temporal.drive import in_process, on_temporal

Verdict = ss.GuardrailFunctionOutput


class Answer(BaseModel):
    verdict: str
    score: int


class Reason(BaseModel):
    reason: str


def _support() -> tuple[ss.StateMachine, list[Any]]:
    return support.compile(), [
        [function_call("lookup_order", {"order_id": 42})],
        [function_call("research", {"input": "is order 42 refundable?"})],
        [assistant_message('{"summary": "refundable within 30 days"}')],
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42, "reason": "damaged"})],
        [assistant_message("Refunded order 42.")],
    ]


def _typed_output() -> tuple[ss.StateMachine, list[Any]]:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)], output_type=Answer)
    return compile_agents(a), [
        [function_call("lookup_order", {"order_id": 7})],
        [assistant_message('{"verdict": "ok", "score": 3}')],
    ]


def _tool_errors() -> tuple[ss.StateMachine, list[Any]]:
    @ss.function_tool
    def flaky(n: int) -> str:
        """Fails on odd numbers."""
        if n % 2:
            raise ValueError(f"{n} is odd")
        return f"{n} is even"

    a = ss.Agent("a", tools=[flaky])
    return compile_agents(a), [
        [function_call("flaky", {"n": 3}), function_call("flaky", {"n": "x"}),
         function_call("nope", {}), function_call("flaky", {"n": 4})],
        [assistant_message("done")],
    ]


def _hooks() -> tuple[ss.StateMachine, list[Any]]:
    @ss.input_guardrail
    def polite(ctx: ss.RunContext[Any], agent: object, input: object) -> Verdict:
        return Verdict(output_info={"len": len(str(input))}, tripwire_triggered=False)

    @ss.output_guardrail
    def short(ctx: ss.RunContext[Any], agent: object, output: str) -> Verdict:
        return Verdict(output_info=len(output), tripwire_triggered=False)

    def instructions(ctx: ss.RunContext[Any], agent: object) -> str:
        return f"Help user {ctx.context['user']}."

    def on_handoff(ctx: ss.RunContext[Any], data: Reason) -> None:
        assert data.reason == "billing"

    def big(ctx: ss.RunContext[Any], params: dict[str, int], call_id: str) -> bool:
        return params["order_id"] > 100

    ledger = Ledger()
    b = ss.Agent("b", instructions=instructions, output_guardrails=[short],
                 tools=[refund_tool(ledger, needs_approval=big)])
    a = ss.Agent("a", input_guardrails=[polite],
                 handoffs=[ss.handoff(b, input_type=Reason, on_handoff=on_handoff)])
    return compile_agents(a, b), [
        [function_call("transfer_to_b", {"reason": "billing"})],
        [function_call("process_refund", {"order_id": 5}),
         function_call("process_refund", {"order_id": 500})],
        [assistant_message("both refunded")],
    ]


def _nested_approval() -> tuple[ss.StateMachine, list[Any]]:
    ledger = Ledger()
    inner = ss.Agent("inner", tools=[refund_tool(ledger, needs_approval=True)])
    outer = ss.Agent("outer", tools=[inner.as_tool("ask", "Ask")])
    return compile_agents(outer, inner), [
        [function_call("ask", {"input": "refund 5"})],
        [function_call("process_refund", {"order_id": 5})],
        [assistant_message("inner after approval")],
        [assistant_message("outer done")],
    ]


def _max_turns() -> tuple[ss.StateMachine, list[Any]]:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)])
    return compile_agents(a, max_turns=2), [
        [function_call("lookup_order", {"order_id": 1})],
        [function_call("lookup_order", {"order_id": 2})],
    ]


def _tripwire() -> tuple[ss.StateMachine, list[Any]]:
    @ss.output_guardrail
    def no_refunds(ctx: ss.RunContext[Any], agent: object, output: str) -> Verdict:
        return Verdict(output_info=len(output), tripwire_triggered="refund" in output)

    return compile_agents(ss.Agent("a", output_guardrails=[no_refunds])), [
        [assistant_message("here is a refund")],
    ]


def _bad_model_output() -> tuple[ss.StateMachine, list[Any]]:
    a = ss.Agent("a", output_type=Answer)
    return compile_agents(a), [[assistant_message('{"verdict": 1}')]]


def _stop_on_first_tool() -> tuple[ss.StateMachine, list[Any]]:
    @ss.function_tool
    def pick(n: int) -> dict[str, int]:
        """Pick n."""
        return {"picked": n}

    a = ss.Agent("a", tools=[pick], tool_use_behavior="stop_on_first_tool")
    return compile_agents(a), [[function_call("pick", {"n": 9})]]


def _tool_timeouts() -> tuple[ss.StateMachine, list[Any]]:
    @ss.function_tool(timeout=0.5)
    async def slow(n: int) -> str:
        """Sleeps n seconds."""
        await asyncio.sleep(n)
        return f"slept {n}"

    @ss.function_tool(timeout=0.5, failure_error_function=None)
    async def strict_slow(n: int) -> str:
        """Sleeps n seconds; a timeout ends the run."""
        await asyncio.sleep(n)
        return f"slept {n}"

    a = ss.Agent("a", tools=[slow, strict_slow])
    return compile_agents(a), [
        [function_call("slow", {"n": 0}), function_call("slow", {"n": 5})],
        [function_call("strict_slow", {"n": 5})],
    ]


SCENARIOS: dict[str, Callable[[], tuple[ss.StateMachine, list[Any]]]] = {
    "support_flow_with_nested_agent_handoff_and_approval": _support,
    "typed_output": _typed_output,
    "tool_errors_invalid_arguments_unknown_tool": _tool_errors,
    "hooks_as_local_activities_and_per_call_approval": _hooks,
    "nested_approval": _nested_approval,
    "max_turns_exceeded_keeps_items": _max_turns,
    "output_guardrail_tripwire": _tripwire,
    "invalid_structured_output": _bad_model_output,
    "stop_on_first_tool": _stop_on_first_tool,
    "a_tools_own_timeout": _tool_timeouts,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
def test_scenario_matches_in_process(dev_server: str, name: str, approve: bool) -> None:
    machine, script = SCENARIOS[name]()
    context = {"user": "ada"}
    expected = in_process(machine, "I need help", script, approve, context)

    async def go() -> Any:
        client = await Client.connect(dev_server)
        return await on_temporal(client, machine, "I need help", script, approve, context)

    seen, history = asyncio.run(go())
    assert seen.error == expected.error
    assert seen.items == expected.items
    assert seen.final_output == expected.final_output
    assert seen.last_agent == expected.last_agent
    assert seen.asked == expected.asked
    assert len(history.events) > 3


def test_a_long_conversation_continues_as_new_with_its_state(dev_server: str) -> None:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)], output_type=Answer)
    machine = compile_agents(a, max_turns=20)
    script: list[Any] = [[function_call("lookup_order", {"order_id": n})] for n in range(7)]
    script.append([assistant_message('{"verdict": "ok", "score": 7}')])
    expected = in_process(machine, "look them all up", script)

    async def go() -> Any:
        client = await Client.connect(dev_server)
        return await on_temporal(client, machine, "look them all up", script,
                                 continue_as_new_after=3)

    seen, history = asyncio.run(go())
    assert seen.error is None
    assert seen.items == expected.items
    assert seen.final_output == {"verdict": "ok", "score": 7}
    assert seen.runs == 3  # 8 model turns, at most 3 per workflow run
    kinds = [e.WhichOneof("attributes") for e in history.events]  # the last run's
    assert kinds.count("activity_task_scheduled_event_attributes") <= 6


@pytest.mark.parametrize("name", ["support_flow_with_nested_agent_handoff_and_approval",
                                  "tool_errors_invalid_arguments_unknown_tool"])
def test_local_activities_give_the_same_run(dev_server: str, name: str) -> None:
    machine, script = SCENARIOS[name]()
    expected = in_process(machine, "I need help", script, True, {"user": "ada"})

    async def go() -> Any:
        client = await Client.connect(dev_server)
        return await on_temporal(client, machine, "I need help", script, True,
                                 {"user": "ada"}, local_activities=True)

    seen, history = asyncio.run(go())
    assert (seen.items, seen.final_output, seen.error) == (
        expected.items, expected.final_output, expected.error
    )
    kinds = {e.WhichOneof("attributes") for e in history.events}
    assert "activity_task_scheduled_event_attributes" not in kinds  # all local: markers


def test_models_local_runs_model_calls_locally_and_tools_as_activities(
    dev_server: str,
) -> None:
    machine, script = SCENARIOS["support_flow_with_nested_agent_handoff_and_approval"]()
    expected = in_process(machine, "I need help", script, True, {"user": "ada"})

    async def go(mode: Any) -> Any:
        client = await Client.connect(dev_server)
        return await on_temporal(client, machine, "I need help", script, True,
                                 {"user": "ada"}, local_activities=mode)

    def scheduled(history: Any) -> list[str]:
        return [e.activity_task_scheduled_event_attributes.activity_type.name
                for e in history.events
                if e.HasField("activity_task_scheduled_event_attributes")]

    def markers(history: Any) -> int:
        return sum(e.HasField("marker_recorded_event_attributes") for e in history.events)

    seen, history = asyncio.run(go("models"))
    assert (seen.items, seen.final_output, seen.error) == (
        expected.items, expected.final_output, expected.error
    )
    _, all_remote = asyncio.run(go(False))
    models = [n for n in scheduled(all_remote) if n.endswith(".model")]
    tools = [n for n in scheduled(all_remote) if not n.endswith(".model")]
    assert models and tools
    # the tools still go through the server, exactly as before; each model call is a
    # local activity's marker instead
    assert scheduled(history) == tools
    assert markers(history) == markers(all_remote) + len(models)


def test_local_activities_takes_only_known_modes() -> None:
    machine, _ = SCENARIOS["support_flow_with_nested_agent_handoff_and_approval"]()
    with pytest.raises(ss.UserError, match=r"local_activities='tools'.*\"models\""):
        workflow_for(machine, local_activities="tools")  # type: ignore[arg-type]
