"""A workflow that declares ``context_type`` refuses a run without ``context=``, before
anything runs: the user's own step would otherwise fail on ``ctx.context`` being None."""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from typing import Any

import pytest

import stepswitch as ss
from graphs import judge
from stepswitch.testing import ScriptedModel, assistant_message

MESSAGE = "workflow 'judge' declares context_type=JudgeState; pass context=JudgeState(...)"


def _machines() -> list[ss.StateMachine]:
    runner = importlib.import_module("codegen.judge")
    return [judge.judge.compile(), runner.MACHINE]


@pytest.mark.parametrize("which", ["interpreted", "generated"])
def test_every_entry_point_refuses_a_missing_context(which: str) -> None:
    machine = _machines()[which == "generated"]
    model = ScriptedModel([[assistant_message("never asked")]])
    with pytest.raises(ss.UserError) as sync_err:
        machine.run_sync("a heist", model=model)
    assert str(sync_err.value) == MESSAGE
    with pytest.raises(ss.UserError, match="pass context=JudgeState"):
        asyncio.run(machine.run("a heist", model=model))
    with pytest.raises(ss.UserError, match="pass context=JudgeState"):
        machine.run_streamed("a heist", model=model)
    assert model.calls == []  # nothing ran: no model call, no step


@pytest.mark.parametrize("which", ["interpreted", "generated"])
def test_a_context_of_another_type_is_refused_before_anything_runs(which: str) -> None:
    """A dict given for the declared dataclass would fail as an AttributeError in the
    user's own step; it is named, with what to pass, before any step or model call."""
    machine = _machines()[which == "generated"]
    model = ScriptedModel([[assistant_message("never asked")]])
    with pytest.raises(ss.UserError) as err:
        machine.run_sync("a heist", model=model, context={"rounds": 1})
    assert str(err.value) == ("context: workflow 'judge' declares context_type=JudgeState, "
                              "got dict; pass context=JudgeState(...)")
    assert model.calls == []


def test_a_resumed_state_needs_the_context_too() -> None:
    machine = judge.judge.compile()
    model = ScriptedModel([ss.ModelProviderError("the server is down")])
    with pytest.raises(ss.ModelProviderError) as info:
        machine.run_sync("a heist", model=model, context=judge.JudgeState())
    state = info.value.run_data.to_state()
    with pytest.raises(ss.UserError, match="pass context=JudgeState"):
        machine.run_sync(state, model=model)


@dataclass
class Account:
    owner: str = ""


@ss.function_tool
def whoami(ctx: ss.RunContext[Account]) -> str:
    """Who is asking."""
    return ctx.context.owner


def test_a_handoff_workflow_is_refused_as_well_and_runs_with_a_context() -> None:
    agent = ss.Agent(name="helper", instructions="Help.", tools=[whoami])
    machine = ss.Workflow("helpdesk", agent, context_type=Account).compile()
    script: list[Any] = [[ss.testing.function_call("whoami", {})],
                         [assistant_message("done")]]
    with pytest.raises(ss.UserError, match=r"context_type=Account; pass context=Account\(\.\.\.\)"):
        machine.run_sync("hi", model=ScriptedModel(script))
    result = machine.run_sync("hi", model=ScriptedModel(script), context=Account("ann"))
    assert result.final_output == "done"


@pytest.mark.parametrize("declared", [None, Any, object])
def test_no_context_is_fine_when_none_is_required(declared: Any) -> None:
    agent = ss.Agent(name="helper", instructions="Help.")
    machine = ss.Workflow("plain", agent, context_type=declared).compile()
    result = machine.run_sync("hi", model=ScriptedModel([[assistant_message("ok")]]))
    assert result.final_output == "ok"



def test_a_saved_state_given_as_parsed_json_is_a_state_error() -> None:
    """``RunState.from_json`` takes the text; the dict ``json.load`` gave is named."""
    import json

    text = ss.RunState(workflow="w", input=(), items=[], current_agent="a", current_turn=0,
                       max_turns=None, status="stopped").to_json()
    with pytest.raises(ss.StateError, match=r"got dict \(json.dumps it"):
        ss.RunState.from_json(json.loads(text))
    assert ss.RunState.from_json(text).workflow == "w"
