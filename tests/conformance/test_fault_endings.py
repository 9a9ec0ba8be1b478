"""Issue 11, item 5: every exception that ends a run carries the run so far.

A user hook that raises (guardrails, instructions functions, ``on_handoff``, input
filters, ``failure_error_function``, ``tool_use_behavior`` functions, per-call approval
functions), a Ctrl-C and a cancelled task all end the run with ``exc.run_data``
(``new_items``, ``last_agent``, ``to_state()``), under every surface; a state saved
from it never runs an approved call a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.runtime.model import OutputItem
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests.conformance.harness import run_all
from tests.conformance.kit import Ledger, compile_agents, lookup_tool, refund_tool


class Boom(Exception):
    """What the user's hook raises."""


def _boom(*args: Any) -> Any:
    raise Boom("the hook failed")


def _boom_guard(ctx: Any, agent: Any, value: Any) -> Any:
    raise Boom("the guardrail failed")


def _guardrail_input() -> tuple[ss.StateMachine, list[list[OutputItem]]]:
    guard = ss.input_guardrail(_boom_guard)
    return compile_agents(ss.Agent("a", input_guardrails=[guard])), []


def _guardrail_output() -> tuple[ss.StateMachine, list[list[OutputItem]]]:
    guard = ss.output_guardrail(_boom_guard)
    return compile_agents(ss.Agent("a", output_guardrails=[guard])), [[assistant_message("x")]]


def _instructions() -> tuple[ss.StateMachine, list[list[OutputItem]]]:
    ledger = Ledger()
    b = ss.Agent("b", instructions=_boom)
    a = ss.Agent("a", tools=[lookup_tool(ledger)], handoffs=[b])
    return compile_agents(a, b), [
        [function_call("lookup_order", {"order_id": 1})], [function_call("transfer_to_b")]]


def _on_handoff() -> tuple[ss.StateMachine, list[list[OutputItem]]]:
    b = ss.Agent("b")
    a = ss.Agent("a", handoffs=[ss.handoff(b, on_handoff=_boom)])
    return compile_agents(a, b), [[function_call("transfer_to_b")]]


def _input_filter() -> tuple[ss.StateMachine, list[list[OutputItem]]]:
    b = ss.Agent("b")
    a = ss.Agent("a", handoffs=[ss.handoff(b, input_filter=_boom)])
    return compile_agents(a, b), [[function_call("transfer_to_b")]]


def _failure_function() -> tuple[ss.StateMachine, list[list[OutputItem]]]:
    @ss.function_tool(failure_error_function=_boom)
    def flaky(n: int) -> str:
        """Fails."""
        raise ValueError("tool failed")

    return compile_agents(ss.Agent("a", tools=[flaky])), [[function_call("flaky", {"n": 1})]]


def _tool_use_behavior() -> tuple[ss.StateMachine, list[list[OutputItem]]]:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)], tool_use_behavior=_boom)
    return compile_agents(a), [[function_call("lookup_order", {"order_id": 1})]]


def _approval_function() -> tuple[ss.StateMachine, list[list[OutputItem]]]:
    ledger = Ledger()
    a = ss.Agent("a", tools=[refund_tool(ledger, needs_approval=_boom)])
    return compile_agents(a), [[function_call("process_refund", {"order_id": 1})]]


HOOKS: dict[str, Callable[[], tuple[ss.StateMachine, list[list[OutputItem]]]]] = {
    "input guardrail": _guardrail_input,
    "output guardrail": _guardrail_output,
    "instructions function": _instructions,
    "on_handoff": _on_handoff,
    "input filter": _input_filter,
    "failure_error_function": _failure_function,
    "tool_use_behavior function": _tool_use_behavior,
    "per-call approval function": _approval_function,
}


@pytest.mark.parametrize("hook", list(HOOKS))
def test_a_raising_hook_ends_the_run_with_its_data(hook: str) -> None:
    machine, script = HOOKS[hook]()
    out = run_all(machine, "go", script)
    assert isinstance(out.error, Boom), out.error
    data = out.error.run_data  # type: ignore[attr-defined]
    assert data.last_agent in machine.agents
    made = [c for s in script for c in s]
    assert len(data.new_items) >= len(made)  # the response items that came before it
    state = ss.RunState.from_json(data.to_state().to_json())
    assert state.items == data.new_items


def test_a_hook_failing_after_an_approved_call_never_repeats_it() -> None:
    # the scenario: resume with the refund approved; a hook fails after it ran;
    # the run so far is saved; trying again must not refund twice
    ledger = Ledger()
    b = ss.Agent("b")
    a = ss.Agent("a", tools=[refund_tool(ledger, needs_approval=True)],
                 handoffs=[ss.handoff(b, on_handoff=_boom)])
    machine = compile_agents(a, b)
    first = machine.run_sync("refund", model=ScriptedModel([
        [function_call("process_refund", {"order_id": 1}), function_call("transfer_to_b")]]))
    state = first.to_state()
    state.approve(first.interruptions[0])
    with pytest.raises(Boom) as caught:
        machine.run_sync(state, model=ScriptedModel([]))
    assert ledger.ran == [("process_refund", 1)]
    saved = caught.value.run_data.to_state().to_json()  # type: ignore[attr-defined]
    for _ in range(2):
        with contextlib.suppress(ss.StateError, Boom):
            machine.run_sync(ss.RunState.from_json(saved),
                             model=ScriptedModel([[assistant_message("done")]]))
    assert ledger.ran == [("process_refund", 1)]


def test_ctrl_c_in_a_tool_keeps_the_run() -> None:
    ledger = Ledger()

    @ss.function_tool
    def slow(n: int) -> str:
        """Interrupted."""
        raise KeyboardInterrupt

    machine = compile_agents(ss.Agent("a", tools=[lookup_tool(ledger), slow]))
    script = [[function_call("lookup_order", {"order_id": 1})],
              [function_call("slow", {"n": 1})]]
    for surface in ("run_sync", "run"):
        model = ScriptedModel(list(script))
        with pytest.raises(KeyboardInterrupt) as caught:
            if surface == "run_sync":
                machine.run_sync("go", model=model)
            else:
                asyncio.run(machine.run("go", model=model))
        data = caught.value.run_data  # type: ignore[attr-defined]
        assert [i.type for i in data.new_items][:2] == ["tool_call_item", "tool_call_output_item"]
        data.to_state()


def test_a_cancelled_run_keeps_the_run() -> None:
    started = asyncio.Event()

    class Hanging:
        """Answers once, then hangs until cancelled."""

        def __init__(self) -> None:
            self.first = ScriptedModel([[function_call("transfer_to_b")]])
            self.calls = 0

        async def get_response(self, request: Any) -> Any:
            self.calls += 1
            if self.calls == 1:
                return await self.first.get_response(request)
            started.set()
            await asyncio.sleep(3600)

    b = ss.Agent("b")
    machine = compile_agents(ss.Agent("a", handoffs=[b]), b)

    async def main() -> BaseException:
        task = asyncio.ensure_future(machine.run("go", model=Hanging()))
        await started.wait()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError as exc:
            return exc
        raise AssertionError("not cancelled")

    exc = asyncio.run(main())
    data = exc.run_data  # type: ignore[attr-defined]
    assert data.last_agent == "b"
    assert [i.type for i in data.new_items] == ["handoff_call_item", "handoff_output_item"]
    # the cancelled turn's model call is made again on resume: nothing was lost
    resumed = machine.run_sync(data.to_state(), model=ScriptedModel([[assistant_message("b")]]))
    assert resumed.final_output == "b"


def test_a_cancelled_flow_keeps_the_flow_run() -> None:
    class Outline(BaseModel):
        text: str

    outline = ss.Agent("outline", "Outline a story.", output_type=Outline)
    story = ss.Agent("story", "Write the story.")
    machine = ss.Workflow("story", outline, flow=[
        ss.then(outline, story), ss.then(story, ss.END)]).compile()
    model = ScriptedModel([[assistant_message('{"text": "good"}')], KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt) as caught:
        machine.run_sync("a story", model=model)
    data = caught.value.run_data  # type: ignore[attr-defined]
    # the flow's run, not only the node's: the outline the first node made is in it
    assert [(i.type, i.agent) for i in data.new_items] == [("message_output_item", "outline")]
