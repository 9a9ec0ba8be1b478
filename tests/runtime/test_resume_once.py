"""Issue 23, item 6: one ``RunState`` object resumes once.

A second resume of the same object would run its approved calls again; it is refused
with a ``StateError``, on every driver, as ``stepswitch run`` refuses a consumed file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.errors import StateError
from stepswitch.runtime.state import RunState
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests.conformance.kit import Ledger, compile_agents, refund_tool


def _paused(ledger: Ledger) -> tuple[ss.StateMachine, RunState]:
    machine = compile_agents(ss.Agent("desk", tools=[refund_tool(ledger, needs_approval=True)]))
    result = machine.run_sync("refund 7", model=ScriptedModel(
        [[function_call("process_refund", {"order_id": 7})]]))
    state = result.to_state()
    state.approve(state.interruptions[0])
    return machine, state


def _model() -> ScriptedModel:
    return ScriptedModel([[assistant_message("refunded")]])


def _sync(machine: ss.StateMachine, state: RunState) -> Any:
    return machine.run_sync(state, model=_model()).final_output


def _async(machine: ss.StateMachine, state: RunState) -> Any:
    return asyncio.run(machine.run(state, model=_model())).final_output


def _streamed(machine: ss.StateMachine, state: RunState) -> Any:
    streamed = machine.run_streamed(state, model=_model())

    async def drain() -> None:
        async for _ in streamed.stream_events():
            pass

    asyncio.run(drain())
    return streamed.final_output


DRIVERS: dict[str, Callable[[ss.StateMachine, RunState], Any]] = {
    "run_sync": _sync, "run": _async, "run_streamed": _streamed}


@pytest.mark.parametrize("first", sorted(DRIVERS))
@pytest.mark.parametrize("second", sorted(DRIVERS))
def test_a_second_resume_of_one_state_object_is_refused(first: str, second: str) -> None:
    ledger = Ledger()
    machine, state = _paused(ledger)
    assert DRIVERS[first](machine, state) == "refunded"
    assert ledger.ran == [("process_refund", 7)]
    with pytest.raises(StateError, match="resumed already") as caught:
        DRIVERS[second](machine, state)
    assert "result.to_state()" in str(caught.value)
    assert ledger.ran == [("process_refund", 7)]


def test_the_mark_survives_json_and_copies() -> None:
    ledger = Ledger()
    machine, state = _paused(ledger)
    before = state.copy()  # taken before the resume: a run of its own (docs/runtime.md)
    _sync(machine, state)
    for again in (state.copy(), RunState.from_json(state.to_json())):
        with pytest.raises(StateError, match="resumed already"):
            _sync(machine, again)
    assert ledger.ran == [("process_refund", 7)]
    assert not before.resumed and "resumed" not in before.to_json()


def test_the_state_a_resume_leaves_resumes_on() -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("desk", tools=[refund_tool(ledger, needs_approval=True)]))
    model = ScriptedModel([[function_call("process_refund", {"order_id": 1})],
                           [function_call("process_refund", {"order_id": 2})],
                           [assistant_message("both")]])
    state = machine.run_sync("refunds", model=model).to_state()
    state.approve(state.interruptions[0])
    again = machine.run_sync(state, model=model).to_state()  # paused on the second
    again.approve(again.interruptions[0])
    assert machine.run_sync(again, model=model).final_output == "both"
    assert ledger.ran == [("process_refund", 1), ("process_refund", 2)]


def test_a_resume_refused_before_it_starts_does_not_take_the_state() -> None:
    ledger = Ledger()
    machine, state = _paused(ledger)
    with pytest.raises(ss.UserError, match="run_config"):
        machine.run_sync(state, model=_model(), run_config="fast")  # type: ignore[arg-type]
    assert not state.resumed
    assert _sync(machine, state) == "refunded"
    assert ledger.ran == [("process_refund", 7)]
