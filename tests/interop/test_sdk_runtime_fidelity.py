"""Differential over real HTTP: an SDK app with tool guardrails, ``is_enabled`` gates and
hooks (``sdk_apps/guarded.py``), run by the SDK's own ``Runner`` against the loopback
OpenAI-wire server, and read with ``ss.from_sdk`` and run by stepswitch against the same
script: the same items, final output, last agent, tools offered per request, side
effects and hook events."""

from __future__ import annotations

import asyncio
from typing import Any

import agents
import pytest
from agents import OpenAIResponsesModel, RunConfig, Runner

import stepswitch as ss
from stepswitch.models import OpenAIServer
from stepswitch.models.script import call, message
from tests.interop.sdk_apps import guarded
from tests.interop.test_sdk_differential import our_trace, sdk_trace

Script = list[list[Any]]


def _offered(server: OpenAIServer) -> list[list[str]]:
    """The tool names each model request offered, sorted (the SDK lists handoffs after
    tools, as stepswitch does; sorting keeps the comparison about which, not where)."""
    return [sorted(t["name"] for t in r.body.get("tools", []))
            for r in server.model_requests()]


def _sdk_run(script: Script, context: guarded.Account, hooks: Any) -> tuple[Any, Any]:
    guarded.SENT.clear()
    with OpenAIServer(script) as server:
        model = OpenAIResponsesModel("gpt-4o", openai_client=server.client())
        config = RunConfig(model=model, tracing_disabled=True)
        result: Any
        try:
            result = asyncio.run(Runner.run(guarded.desk, "help", context=context,
                                            hooks=hooks, run_config=config))
        except Exception as exc:  # the tripwire case: compare what each kept
            result = exc
        return result, _offered(server)


def _our_run(script: Script, context: guarded.Account, hooks: Any, surface: str
             ) -> tuple[Any, Any]:
    guarded.SENT.clear()
    machine = ss.from_sdk(guarded.desk).compile()
    with OpenAIServer(script) as server:
        model = ss.models.OpenAIResponsesModel("gpt-4o", server.client())
        try:
            result = _drive(machine, surface, model, context, hooks)
        except Exception as exc:
            result = exc
        return result, _offered(server)


def _drive(machine: ss.StateMachine, surface: str, model: Any, context: Any, hooks: Any
           ) -> Any:
    if surface == "run_sync":
        return machine.run_sync("help", model=model, context=context, hooks=hooks)
    if surface == "run":
        return asyncio.run(machine.run("help", model=model, context=context, hooks=hooks))

    async def streamed() -> Any:
        s = machine.run_streamed("help", model=model, context=context, hooks=hooks)
        async for _ in s.stream_events():
            pass
        return s.result()

    return asyncio.run(streamed())


CASES: dict[str, tuple[guarded.Account, Script]] = {
    "input_guardrail_rejects_outside_mail": (guarded.Account(), [
        [call("send_email", {"to": "eve@evil.test", "body": "hi"}, "c1")],
        [call("send_email", {"to": "ann@example.com", "body": "hi"}, "c2")],
        [message("Sent to Ann.")],
    ]),
    "output_guardrail_rejects_a_phone_number": (guarded.Account(), [
        [call("lookup_customer", {"customer_id": 8}, "c1")],
        [message("Bob, number withheld.")],
    ]),
    "gates_offer_only_the_languages_the_account_speaks": (
        guarded.Account(languages=["french"]), [
            [call("to_french", {"text": "hello"}, "c1")],
            [message("bonjour")],
        ]),
    "a_vip_is_handed_off_and_the_agent_hooks_hear_it": (guarded.Account(vip=True), [
        [call("lookup_customer", {"customer_id": 3}, "c1")],
        [call("transfer_to_vip", {}, "c2")],
        [message("Welcome back.")],
    ]),
}


def _results(kept: Any) -> tuple[list[Any], Any, str]:
    if isinstance(kept, BaseException):
        data = kept.run_data  # type: ignore[attr-defined]
        return data.new_items, type(kept).__name__, data.last_agent
    return kept.new_items, kept.final_output, kept.last_agent


@pytest.mark.parametrize("surface", ["run_sync", "run", "run_streamed"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_sdk_and_stepswitch_agree(case: str, surface: str) -> None:
    context, script = CASES[case]
    sdk_hooks, ours_hooks = guarded.Recorder(), guarded.Recorder()
    guarded.DESK_HOOKS.events.clear()
    theirs, their_offers = _sdk_run(script, context, sdk_hooks)
    their_sent, their_desk = list(guarded.SENT), list(guarded.DESK_HOOKS.events)
    guarded.DESK_HOOKS.events.clear()
    ours, our_offers = _our_run(script, context, ours_hooks, surface)
    assert not isinstance(theirs, BaseException), theirs
    assert our_trace(ours.new_items) == sdk_trace(theirs.new_items)
    assert ours.final_output == theirs.final_output
    assert ours.last_agent == theirs.last_agent.name
    assert our_offers == their_offers
    assert their_sent == guarded.SENT
    assert ours_hooks.events == sdk_hooks.events
    assert guarded.DESK_HOOKS.events == their_desk
    assert [r.guardrail for r in ours.tool_input_guardrail_results] == [
        r.guardrail.get_name() for r in theirs.tool_input_guardrail_results]
    assert [r.guardrail for r in ours.tool_output_guardrail_results] == [
        r.guardrail.get_name() for r in theirs.tool_output_guardrail_results]


def test_an_output_tripwire_ends_both_runs_before_the_ssn_reaches_the_model() -> None:
    script: Script = [[call("lookup_customer", {"customer_id": 7}, "c1")], [message("x")]]
    theirs, their_offers = _sdk_run(script, guarded.Account(), None)
    ours, our_offers = _our_run(script, guarded.Account(), None, "run_sync")
    assert isinstance(theirs, agents.ToolOutputGuardrailTripwireTriggered)
    assert isinstance(ours, ss.ToolOutputGuardrailTripwireTriggered)
    assert len(their_offers) == len(our_offers) == 1  # the model never saw the output
    assert ours.guardrail == "no_ssn" and ours.output.output_info == "ssn in output"
    items = ours.run_data.new_items
    assert [i.type for i in items] == ["tool_call_item"]  # kept, and no output recorded


def test_a_closed_gate_is_an_unknown_tool_on_both() -> None:
    script: Script = [[call("to_spanish", {"text": "hi"}, "c1")]]
    theirs, _ = _sdk_run(script, guarded.Account(languages=["french"]), None)
    ours, _ = _our_run(script, guarded.Account(languages=["french"]), None, "run_sync")
    assert isinstance(theirs, agents.ModelBehaviorError)
    assert isinstance(ours, ss.ModelBehaviorError)
    assert str(ours) == str(theirs) == "Tool to_spanish not found in agent Desk"



def test_a_generated_runner_of_the_sdk_app_runs_its_guardrails_gates_and_hooks() -> None:
    """The runner imports the SDK's guardrails, gates and agent hooks by path
    (``stepswitch.interop.sdk_objects`` for what from_sdk converted) and agrees with the
    SDK's own run."""
    from stepswitch.compiler.codegen import codegen, load_source

    runner = load_source(codegen(ss.from_sdk(guarded.desk).compile()), "guarded_runner")
    for case in sorted(CASES):
        context, script = CASES[case]
        sdk_hooks, ours_hooks = guarded.Recorder(), guarded.Recorder()
        theirs, their_offers = _sdk_run(script, context, sdk_hooks)
        their_sent = list(guarded.SENT)
        guarded.SENT.clear()
        with OpenAIServer(script) as server:
            model = ss.models.OpenAIResponsesModel("gpt-4o", server.client())
            ours = runner.run_sync("help", model=model, context=context, hooks=ours_hooks)
            our_offers = _offered(server)
        assert our_trace(ours.new_items) == sdk_trace(theirs.new_items), case
        assert (our_offers, guarded.SENT, ours_hooks.events) == (
            their_offers, their_sent, sdk_hooks.events), case
