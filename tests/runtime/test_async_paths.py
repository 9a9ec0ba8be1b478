"""Paths that went untested: an async user hook, one async tool under ``run``, and an
input guardrail that runs in parallel with the model call and passes."""

from __future__ import annotations

import asyncio
from typing import Any

import stepswitch as ss
from stepswitch.testing import ScriptedModel, assistant_message, function_call

seen: list[str] = []


@ss.function_tool
async def fetch(order_id: int) -> str:
    """Fetch an order, asynchronously."""
    await asyncio.sleep(0)
    return f"order {order_id}: shipped"


async def instructions(ctx: ss.RunContext[Any], agent: Any) -> str:
    await asyncio.sleep(0)
    seen.append(f"instructions for {agent.name}")
    return f"You are {agent.name}, told asynchronously."


async def on_handoff(ctx: ss.RunContext[Any]) -> None:
    await asyncio.sleep(0)
    seen.append("on_handoff")


@ss.input_guardrail(run_in_parallel=True)
async def polite(ctx: ss.RunContext[Any], agent: Any, input: Any) -> ss.GuardrailFunctionOutput:
    await asyncio.sleep(0)
    seen.append("guardrail")
    return ss.GuardrailFunctionOutput(output_info={"polite": True}, tripwire_triggered=False)


def test_async_hooks_are_awaited_and_their_results_used() -> None:
    seen.clear()
    helper = ss.Agent(name="helper", instructions=instructions)
    entry = ss.Agent(name="entry", instructions="x",
                     handoffs=[ss.handoff(helper, on_handoff=on_handoff)])
    machine = ss.Workflow(name="w", entry=entry, agents=[entry, helper]).compile()
    model = ScriptedModel([[function_call("transfer_to_helper", {})],
                           [assistant_message("helped")]])
    result = machine.run_sync("hi", model=model)
    assert result.final_output == "helped"
    assert result.last_agent == "helper"
    assert seen == ["on_handoff", "instructions for helper"]
    assert model.calls[1].instructions == "You are helper, told asynchronously."


def test_one_async_tool_under_run_is_awaited_once() -> None:
    entry = ss.Agent(name="entry", instructions="x", tools=[fetch])
    machine = ss.Workflow(name="w", entry=entry).compile()
    model = ScriptedModel([[function_call("fetch", {"order_id": 7})], [assistant_message("ok")]])
    result = asyncio.run(machine.run("where is 7?", model=model))
    outputs = [i for i in result.new_items if i.type == "tool_call_output_item"]
    assert [(o.output, o.is_error) for o in outputs] == [("order 7: shipped", False)]
    assert result.final_output == "ok"


def test_a_passing_parallel_input_guardrail_lets_the_run_finish_and_is_reported() -> None:
    seen.clear()
    entry = ss.Agent(name="entry", instructions="x", input_guardrails=[polite])
    machine = ss.Workflow(name="w", entry=entry).compile()
    for surface in ("run", "run_sync"):
        model = ScriptedModel([[assistant_message("hello")]])
        if surface == "run":
            result = asyncio.run(machine.run("hi", model=model))
        else:
            result = machine.run_sync("hi", model=model)
        assert result.final_output == "hello"
        assert len(model.calls) == 1  # the model call ran beside the guardrail
        (report,) = result.input_guardrail_results
        assert (report.guardrail, report.agent) == ("polite", "entry")
        assert report.tripwire_triggered is False
        assert report.output_info == {"polite": True}
    assert seen == ["guardrail", "guardrail"]
