"""Run-loop cases found by comparing against the Agents SDK 0.24 side by side."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

import stepswitch as ss
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests.conformance.harness import run_all
from tests.conformance.kit import Ledger, compile_agents, lookup_tool, refund_tool


def test_stop_on_first_tool_with_invalid_arguments_stops_with_the_error_text() -> None:
    ledger = Ledger()
    machine = compile_agents(
        ss.Agent("a", tools=[lookup_tool(ledger), refund_tool(ledger)],
                 tool_use_behavior="stop_on_first_tool")
    )
    out = run_all(machine, "hi", [[function_call("lookup_order", "{bad"),
                                   function_call("process_refund", {"order_id": 1})]],
                  ledger=ledger)
    first = out.result.new_items[2]
    assert first.type == "tool_call_output_item" and first.is_error
    assert out.result.final_output == first.output  # the SDK: the error string, not None
    assert len(out.model.calls) == 1


def test_stop_on_first_tool_with_a_raising_tool_stops_with_the_error_text() -> None:
    @ss.function_tool
    def boom() -> str:
        """Fail."""
        raise RuntimeError("kaput")

    machine = compile_agents(ss.Agent("a", tools=[boom], tool_use_behavior="stop_on_first_tool"))
    out = run_all(machine, "hi", [[function_call("boom", {})]])
    assert out.result.final_output == out.result.new_items[-1].output
    assert "kaput" in out.result.final_output


def test_stop_on_first_tool_with_a_rejected_first_call_stops_with_the_rejection() -> None:
    ledger = Ledger()
    machine = compile_agents(
        ss.Agent("a", tools=[lookup_tool(ledger), refund_tool(ledger, needs_approval=True)],
                 tool_use_behavior="stop_on_first_tool")
    )
    paused = machine.run_sync("hi", model=ScriptedModel([[
        function_call("process_refund", {"order_id": 1}),
        function_call("lookup_order", {"order_id": 2}),
    ]]))
    state = paused.to_state()
    state.reject(paused.interruptions[0])
    out = run_all(machine, state, [[assistant_message("unused")]], ledger=ledger)
    assert out.result.final_output == "Tool execution was not approved."
    assert ledger.count("process_refund") == 0 and len(out.model.calls) == 0


def test_stop_on_first_tool_with_a_none_result_is_none() -> None:
    @ss.function_tool
    def nothing() -> None:
        """Do nothing."""

    machine = compile_agents(
        ss.Agent("a", tools=[nothing], tool_use_behavior="stop_on_first_tool")
    )
    out = run_all(machine, "hi", [[function_call("nothing", {})]])
    # the tool's value, not its str() (the SDK would say "None"; docs/migrating.md)
    assert out.result.final_output is None and out.result.new_items[-1].output == "null"


def test_agent_tool_with_output_guardrails_never_returns_an_unvetted_earlier_item() -> None:
    seen: list[object] = []

    @ss.output_guardrail
    def vet(ctx: ss.RunContext[None], agent: object, output: object) -> ss.GuardrailFunctionOutput:
        seen.append(output)
        return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

    ledger = Ledger()
    inner = ss.Agent("inner", tools=[lookup_tool(ledger)], output_guardrails=[vet])
    outer = ss.Agent("outer", tools=[inner.as_tool()])
    machine = compile_agents(outer, inner)
    out = run_all(machine, "hi", [
        [function_call("inner", {"input": "check 1"})],
        [function_call("lookup_order", {"order_id": 1})],
        [assistant_message("")],
        [assistant_message("outer done")],
    ], ledger=ledger)
    agent_output = [i for i in out.result.new_items
                    if i.type == "tool_call_output_item" and i.agent == "outer"]
    # the SDK returns the vetted final output (""), not the tool output the guardrail never saw
    assert [i.output for i in agent_output] == [""]
    assert "" in seen and out.result.final_output == "outer done"


def _guarded(ledger: Ledger, *, parallel: bool) -> ss.StateMachine:
    @ss.input_guardrail(run_in_parallel=parallel)
    def block(ctx: ss.RunContext[None], agent: object, data: object) -> ss.GuardrailFunctionOutput:
        return ss.GuardrailFunctionOutput(output_info=None,
                                          tripwire_triggered="forbidden" in str(data))

    return compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)], input_guardrails=[block]))


def test_a_state_saved_from_an_input_guardrail_tripwire_does_not_bypass_it() -> None:
    for parallel in (False, True):
        ledger = Ledger()
        machine = _guarded(ledger, parallel=parallel)
        tripped = run_all(machine, "forbidden request",
                          [[function_call("lookup_order", {"order_id": 1})]], ledger=ledger)
        assert isinstance(tripped.error, ss.InputGuardrailTripwireTriggered)
        state = ss.RunState.from_json(tripped.error.run_data.to_state().to_json())
        again = run_all(machine, state, [[function_call("lookup_order", {"order_id": 1})],
                                         [assistant_message("leaked")]], ledger=ledger)
        assert isinstance(again.error, ss.InputGuardrailTripwireTriggered)
        assert ledger.ran == []
        assert len(again.model.calls) == (1 if parallel else 0)


def test_resuming_after_the_first_turn_does_not_rerun_input_guardrails() -> None:
    ledger = Ledger()
    machine = _guarded(ledger, parallel=False)
    # the guardrail passes the first run; a resumed state must not be judged again
    stopped = run_all(machine, "fine", [[function_call("lookup_order", {"order_id": 1})]],
                      ledger=ledger, max_turns=1)
    assert isinstance(stopped.error, ss.MaxTurnsExceeded)
    state = stopped.error.run_data.to_state()
    out = run_all(machine, state, [[assistant_message("done")]], max_turns=2)
    assert out.result.final_output == "done" and out.result.input_guardrail_results == []


def test_a_reused_call_id_never_inherits_an_earlier_approval() -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[refund_tool(ledger, needs_approval=True)]))
    paused = machine.run_sync("hi", model=ScriptedModel([
        [function_call("process_refund", {"order_id": 1}, call_id="c0")],
    ]))
    state = paused.to_state()
    state.approve(paused.interruptions[0])
    out = run_all(machine, ss.RunState.from_json(state.to_json()), [
        [function_call("process_refund", {"order_id": 999}, call_id="c0")],
        [assistant_message("done")],
    ], ledger=ledger)
    # the SDK: "Model reused a completed tool call ID for a different invocation"
    assert isinstance(out.error, ss.ModelBehaviorError) and "'c0'" in str(out.error)
    assert ledger.ran == [("process_refund", 1)]  # 999 never ran unapproved


def test_a_call_id_reused_in_a_later_turn_is_a_model_behavior_error() -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)]))
    out = run_all(machine, "hi", [
        [function_call("lookup_order", {"order_id": 1}, call_id="same")],
        [function_call("lookup_order", {"order_id": 2}, call_id="same")],
    ], ledger=ledger)
    assert isinstance(out.error, ss.ModelBehaviorError)
    assert ledger.ran == [("lookup_order", 1)]
    assert len(out.error.run_data.new_items) == 2  # the first turn's call and output


def test_a_state_from_a_run_that_failed_mid_turn_is_refused_not_resumed_with_dangling_calls(
) -> None:
    @ss.function_tool(failure_error_function=None)
    def boom() -> str:
        """Fail loudly."""
        raise RuntimeError("x")

    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[boom, lookup_tool(ledger)]))
    failed = run_all(machine, "hi", [[function_call("boom"),
                                      function_call("lookup_order", {"order_id": 1})]],
                     ledger=ledger)
    assert isinstance(failed.error, ss.UserError)
    run_data: Any = getattr(failed.error, "run_data", None)  # set on the way out of the loop
    state = run_data.to_state()
    out = run_all(machine, state, [[assistant_message("never sent")]])
    # resuming would send the model two calls without outputs (a provider rejects that)
    assert isinstance(out.error, ss.StateError) and "'boom'" in str(out.error)
    assert len(out.model.calls) == 0


class Ticket(BaseModel):
    order_id: int


def test_non_object_arguments_name_the_tool_or_handoff_once_and_the_json_kind() -> None:
    async def took(ctx: ss.RunContext[None], ticket: Ticket) -> None:
        return None

    done = ss.Agent("done")
    inner = ss.Agent("inner")
    agent = ss.Agent(
        "a",
        tools=[inner.as_tool(parameters=Ticket)],
        handoffs=[ss.handoff(done, input_type=Ticket, on_handoff=took)],
    )
    machine = compile_agents(agent, done, inner)
    out = run_all(machine, "hi", [
        [function_call("inner", "[1]"), function_call("transfer_to_done", "null")],
        [assistant_message("fine")],
    ])
    outputs = [i.output for i in out.result.new_items if i.type == "tool_call_output_item"]
    assert outputs == [
        "Invalid JSON input for tool inner: expected a JSON object, got an array [1].",
        "Invalid JSON input for handoff transfer_to_done: expected a JSON object, got null.",
    ]
    assert out.result.last_agent == "a"


class Order(BaseModel):
    order_id: int
    status: str


def _order_tools() -> list[ss.FunctionTool]:
    @ss.function_tool
    def as_dict(order_id: int) -> dict[str, object]:
        """An order as a dict."""
        return {"order_id": order_id, "status": "shipped"}

    @ss.function_tool
    def as_model(order_id: int) -> Order:
        """An order as a model."""
        return Order(order_id=order_id, status="open")

    return [as_dict, as_model]


def test_stop_on_first_tool_final_output_is_the_tools_value_not_its_text() -> None:
    machine = compile_agents(
        ss.Agent("a", tools=_order_tools(), tool_use_behavior="stop_on_first_tool")
    )
    out = run_all(machine, "hi", [[function_call("as_dict", {"order_id": 7})]])
    assert out.result.final_output == {"order_id": 7, "status": "shipped"}
    assert out.result.new_items[-1].output == '{"order_id": 7, "status": "shipped"}'


def test_stop_at_tools_final_output_is_the_tools_value() -> None:
    machine = compile_agents(
        ss.Agent("a", tools=_order_tools(), tool_use_behavior=ss.StopAtTools(["as_model"]))
    )
    out = run_all(machine, "hi", [[function_call("as_dict", {"order_id": 1}),
                                   function_call("as_model", {"order_id": 2})]])
    assert out.result.final_output == Order(order_id=2, status="open")
    assert out.result.final_output_as(Order) == Order(order_id=2, status="open")


def test_tool_use_function_final_output_is_kept_as_returned() -> None:
    def first_value(
        ctx: ss.RunContext[None], results: list[ss.runtime.ToolResult]
    ) -> ss.ToolsToFinalOutputResult:
        return ss.ToolsToFinalOutputResult(is_final_output=True, final_output=[r.value
                                                                            for r in results])

    machine = compile_agents(ss.Agent("a", tools=_order_tools(), tool_use_behavior=first_value))
    out = run_all(machine, "hi", [[function_call("as_dict", {"order_id": 3})]])
    assert out.result.final_output == [{"order_id": 3, "status": "shipped"}]
