"""sdk-semantics.md §1–7: the SDK's observable behaviour, case by case, under all three
surfaces. Where we differ on purpose the test says so (and docs/runtime.md lists it)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests._items import output_of
from tests.conformance.harness import run_all, trace
from tests.conformance.kit import Ledger, compile_agents, lookup_tool, refund_tool

# -- §1.2 turns and max_turns ---------------------------------------------------------------


def _looping_agent(ledger: Ledger) -> ss.StateMachine:
    return compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)]), max_turns=2)


def test_max_turns_n_permits_exactly_n_calls() -> None:
    ledger = Ledger()
    call = [function_call("lookup_order", {"order_id": 1})]
    out = run_all(_looping_agent(ledger), "hi", [call, call, call], ledger=ledger)
    assert isinstance(out.error, ss.MaxTurnsExceeded)
    assert len(out.model.calls) == 2
    assert str(out.error).startswith("Max turns (2) exceeded")
    assert len(out.error.run_data.new_items) == 4
    assert len(out.error.run_data.raw_responses) == 2


def test_max_turns_exact_budget_succeeds() -> None:
    ledger = Ledger()
    call = [function_call("lookup_order", {"order_id": 1})]
    machine = compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)]), max_turns=3)
    out = run_all(machine, "hi", [call, call, [assistant_message("ok")]], ledger=ledger)
    assert out.result.final_output == "ok"


def test_a_handoff_uses_up_its_turn() -> None:
    b = ss.Agent("b")
    machine = compile_agents(ss.Agent("a", handoffs=[b]), b, max_turns=1)
    out = run_all(machine, "hi", [[function_call("transfer_to_b")], [assistant_message("b")]])
    assert isinstance(out.error, ss.MaxTurnsExceeded)
    assert out.error.run_data.last_agent == "b"


def test_max_turns_none_disables_the_limit() -> None:
    ledger = Ledger()
    call = [function_call("lookup_order", {"order_id": 1})]
    machine = compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)]), max_turns=None)
    out = run_all(machine, "hi", [call] * 15 + [[assistant_message("ok")]], ledger=ledger)
    assert len(out.model.calls) == 16 and out.result.final_output == "ok"


def test_on_max_turns_handler_turns_the_stop_into_a_final_output() -> None:
    ledger = Ledger()
    call = [function_call("lookup_order", {"order_id": 1})]
    seen: list[int] = []

    def give_up(run_data: ss.runtime.RunErrorDetails) -> str:
        seen.append(len(run_data.new_items))
        return "gave up politely"

    out = run_all(
        _looping_agent(ledger), "hi", [call, call], ledger=ledger,
        run_config=ss.RunConfig(on_max_turns=give_up),
    )
    assert out.result.final_output == "gave up politely"
    assert out.result.new_items[-1] == ss.runtime.MessageOutputItem("a", "gave up politely")
    assert len(out.model.calls) == 2 and seen[-1] == 4


def test_resume_uses_the_states_budget_unless_one_is_given() -> None:
    ledger = Ledger()
    call = [function_call("lookup_order", {"order_id": 1})]
    machine = _looping_agent(ledger)
    with pytest.raises(ss.MaxTurnsExceeded) as info:
        machine.run_sync("hi", model=ScriptedModel([call, call, call]))
    state = info.value.run_data.to_state()
    out = run_all(machine, state, [[assistant_message("more budget")]], max_turns=3)
    assert out.result.final_output == "more budget"
    same = run_all(machine, state, [])
    assert isinstance(same.error, ss.MaxTurnsExceeded)


# -- §1.4 choosing the next step -------------------------------------------------------------


class Refund(BaseModel):
    order_id: int
    approved: bool


def test_structured_output_is_parsed_from_the_last_message() -> None:
    machine = compile_agents(ss.Agent("a", output_type=Refund))
    out = run_all(machine, "hi", [[assistant_message('{"order_id": 4, "approved": true}')]])
    assert out.result.final_output == Refund(order_id=4, approved=True)
    schema = out.model.calls[0].output_schema
    assert schema is not None and schema.schema["required"] == ["order_id", "approved"]


def test_structured_output_with_no_message_runs_again() -> None:
    machine = compile_agents(ss.Agent("a", output_type=Refund))
    out = run_all(machine, "hi", [[], [assistant_message('{"order_id": 1, "approved": false}')]])
    assert len(out.model.calls) == 2
    assert out.result.final_output.approved is False


def test_invalid_structured_output_is_a_model_behavior_error() -> None:
    machine = compile_agents(ss.Agent("a", output_type=Refund))
    out = run_all(machine, "hi", [[assistant_message('{"order_id": "4"}')]])
    assert isinstance(out.error, ss.ModelBehaviorError)
    assert "Invalid JSON when parsing model output" in str(out.error)
    assert len(out.error.run_data.new_items) == 1
    # one line per field, not pydantic's many lines and its documentation URL
    message = str(out.error)
    assert "\n" not in message and "errors.pydantic.dev" not in message
    assert "order_id: Input should be a valid integer (got '4')" in message
    assert "approved: Field required" in message


def test_on_invalid_output_recovers() -> None:
    machine = compile_agents(ss.Agent("a", output_type=Refund))

    def recover(error: ss.ModelBehaviorError, text: str) -> Refund:
        return Refund(order_id=0, approved=False)

    out = run_all(
        machine, "hi", [[assistant_message("nope")]],
        run_config=ss.RunConfig(on_invalid_output=recover),
    )
    assert out.result.final_output == Refund(order_id=0, approved=False)


@dataclass
class Point:
    x: int
    y: int


@pytest.mark.parametrize(
    ("output_type", "text", "expected"),
    [
        (list[int], '{"response": [1, 2]}', [1, 2]),
        (int, '{"response": 7}', 7),
        (Point, '{"response": {"x": 1, "y": 2}}', Point(1, 2)),
    ],
)
def test_non_object_outputs_travel_wrapped(
    output_type: object, text: str, expected: object
) -> None:
    machine = compile_agents(ss.Agent("a", output_type=output_type))
    out = run_all(machine, "hi", [[assistant_message(text)]])
    assert out.result.final_output == expected


def test_strict_validation_refuses_lax_coercion_of_outputs() -> None:
    machine = compile_agents(ss.Agent("a", output_type=list[int]))
    out = run_all(machine, "hi", [[assistant_message('{"response": ["1"]}')]])
    assert isinstance(out.error, ss.ModelBehaviorError)


def test_an_empty_plain_response_is_an_empty_final_output() -> None:
    out = run_all(compile_agents(ss.Agent("a")), "hi", [[]])
    assert out.result.final_output == "" and len(out.model.calls) == 1


# -- §2 items and results ---------------------------------------------------------------------


def test_several_tools_and_a_message_keep_call_order() -> None:
    order: list[str] = []

    @ss.function_tool
    async def slow_a() -> str:
        """Slow."""
        order.append("a:start")
        await asyncio.sleep(0.05)
        order.append("a:end")
        return "A"

    @ss.function_tool
    async def slow_b() -> str:
        """Slower to start, quicker to end."""
        order.append("b:start")
        await asyncio.sleep(0.001)
        order.append("b:end")
        return "B"

    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[slow_a, slow_b, lookup_tool(ledger)]))
    out = run_all(
        machine,
        "hi",
        [[assistant_message("working"), function_call("slow_a"), function_call("slow_b"),
          function_call("lookup_order", {"order_id": 7})],
         [assistant_message("done")]],
    )
    assert trace(out.result.new_items) == [
        ("message_output_item", "a", "working"),
        ("tool_call_item", "a", "slow_a"),
        ("tool_call_item", "a", "slow_b"),
        ("tool_call_item", "a", "lookup_order"),
        ("tool_call_output_item", "a", "A"),
        ("tool_call_output_item", "a", "B"),
        ("tool_call_output_item", "a", "order 7 ok"),
        ("message_output_item", "a", "done"),
    ]
    # concurrent: b started before a ended and ended first
    assert order[-4:] == ["a:start", "b:start", "b:end", "a:end"]


def test_concurrency_limit_serialises_calls() -> None:
    order: list[str] = []

    def make(name: str, delay: float) -> ss.FunctionTool:
        async def tool() -> str:
            order.append(f"{name}:start")
            await asyncio.sleep(delay)
            order.append(f"{name}:end")
            return name

        tool.__name__ = tool.__qualname__ = name
        return ss.function_tool(tool)

    machine = compile_agents(ss.Agent("a", tools=[make("x", 0.02), make("y", 0.001)]))
    run_all(
        machine, "hi",
        [[function_call("x"), function_call("y")], [assistant_message("ok")]],
        run_config=ss.RunConfig(max_tool_concurrency=1),
    )
    assert order[-4:] == ["x:start", "x:end", "y:start", "y:end"]


def test_sync_tools_run_in_threads_when_several() -> None:
    import threading

    threads: list[str] = []

    @ss.function_tool
    def where(n: int) -> str:
        """Record the thread."""
        threads.append(threading.current_thread().name)
        return str(n)

    machine = compile_agents(ss.Agent("a", tools=[where]))
    out = run_all(
        machine, "hi",
        [[function_call("where", {"n": 1}), function_call("where", {"n": 2})],
         [assistant_message("ok")]],
    )
    assert [i.output for i in out.result.new_items if i.type == "tool_call_output_item"] == [
        "1", "2"
    ]
    assert all(t != "MainThread" for t in threads[-2:])


def test_handoff_plus_tool_order() -> None:
    ledger = Ledger()
    b = ss.Agent("b")
    machine = compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)], handoffs=[b]), b)
    out = run_all(
        machine,
        "hi",
        [[function_call("transfer_to_b"), function_call("lookup_order", {"order_id": 1})],
         [assistant_message("b done")]],
        ledger=ledger,
    )
    assert trace(out.result.new_items) == [
        ("handoff_call_item", "a", "transfer_to_b"),
        ("tool_call_item", "a", "lookup_order"),
        ("tool_call_output_item", "a", "order 1 ok"),
        ("handoff_output_item", "a", '{"assistant": "b"}'),
        ("message_output_item", "b", "b done"),
    ]
    assert ledger.ran == [("lookup_order", 1)]
    assert output_of(out.model.calls[1].input[-2]) == "order 1 ok"


def test_support_flow_result_fields() -> None:
    ledger = Ledger()
    refund_agent = ss.Agent("Refund Agent", tools=[refund_tool(ledger)])
    triage = ss.Agent("triage", tools=[lookup_tool(ledger)], handoffs=[refund_agent])
    machine = compile_agents(triage, refund_agent)
    out = run_all(
        machine,
        "refund 42",
        [[function_call("lookup_order", {"order_id": 42})],
         [function_call("transfer_to_refund_agent")],
         [function_call("process_refund", {"order_id": 42})],
         [assistant_message("done")]],
        ledger=ledger,
    )
    result = out.result
    assert [i.agent for i in result.new_items] == ["triage"] * 4 + ["Refund Agent"] * 3
    assert result.new_items[3].output == '{"assistant": "Refund Agent"}'
    assert len(result.raw_responses) == 4
    assert len(result.to_input_list()) == 8
    assert result.usage.requests == 4


# -- §3 tool calls ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "ran", "fragment"),
    [
        ("", False, "order_id: Field required"),
        ("{oops", False, "Invalid JSON input for tool lookup_order"),
        ("[1]", False, "expected a JSON object"),
        ('{"order_id": "x"}', False, "order_id: Input should be a valid integer"),
        ('{"order_id": "5"}', True, "order 5 ok"),
        ('{"order_id": 1, "zzz": 2}', True, "order 1 ok"),
    ],
)
def test_argument_parsing(arguments: str, ran: bool, fragment: str) -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)]))
    out = run_all(
        machine, "hi",
        [[function_call("lookup_order", arguments)], [assistant_message("ok")]],
        ledger=ledger,
    )
    output = out.result.new_items[1]
    assert fragment in output.output
    assert bool(ledger.ran) is ran
    assert output.is_error is not ran


def test_empty_arguments_mean_no_arguments() -> None:
    @ss.function_tool
    def ping() -> str:
        """Ping."""
        return "pong"

    out = run_all(
        compile_agents(ss.Agent("a", tools=[ping])), "hi",
        [[function_call("ping", "")], [assistant_message("ok")]],
    )
    assert out.result.new_items[1].output == "pong"


def test_a_raising_tool_becomes_an_error_output() -> None:
    @ss.function_tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("disk full")

    out = run_all(
        compile_agents(ss.Agent("a", tools=[broken])), "hi",
        [[function_call("broken")], [assistant_message("sorry")]],
    )
    output = out.result.new_items[1]
    assert output.is_error
    assert output.output == (
        "An error occurred while running the tool. Please try again. Error: disk full"
    )


def test_custom_failure_error_function() -> None:
    def explain(ctx: ss.RunContext[None], error: BaseException) -> str:
        return f"custom: {type(error).__name__}"

    @ss.function_tool(failure_error_function=explain)
    def broken() -> str:
        """Always fails."""
        raise KeyError("k")

    out = run_all(
        compile_agents(ss.Agent("a", tools=[broken])), "hi",
        [[function_call("broken")], [assistant_message("sorry")]],
    )
    assert out.result.new_items[1].output == "custom: KeyError"


def test_failure_error_function_none_propagates() -> None:
    @ss.function_tool(failure_error_function=None)
    def broken(n: int) -> str:
        """Always fails."""
        raise ValueError("bad")

    machine = compile_agents(ss.Agent("a", tools=[broken]))
    out = run_all(machine, "hi", [[function_call("broken", {"n": 1})]])
    assert isinstance(out.error, ss.UserError)
    assert str(out.error) == "Error running tool broken: bad"
    assert isinstance(out.error.__cause__, ValueError)
    bad_args = run_all(machine, "hi", [[function_call("broken", {"n": "x"})]])
    assert isinstance(bad_args.error, ss.ModelBehaviorError)


def test_unknown_tool_can_return_an_error_to_the_model() -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)]))
    out = run_all(
        machine, "hi",
        [[function_call("no_such_tool"), function_call("lookup_order", {"order_id": 1})],
         [assistant_message("ok")]],
        ledger=ledger,
        run_config=ss.RunConfig(unknown_tool="return_error"),
    )
    assert trace(out.result.new_items)[:4] == [
        ("tool_call_item", "a", "no_such_tool"),
        ("tool_call_item", "a", "lookup_order"),
        ("tool_call_output_item", "a", "order 1 ok"),
        ("tool_call_output_item", "a", "Tool 'no_such_tool' not found."),
    ]


def test_context_reaches_tools() -> None:
    @ss.function_tool
    def whoami(ctx: ss.RunContext[dict[str, str]]) -> str:
        """Who is asking."""
        return ctx.context["user"]

    out = run_all(
        compile_agents(ss.Agent("a", tools=[whoami])), "hi",
        [[function_call("whoami")], [assistant_message("ok")]],
        context={"user": "ada"},
    )
    assert out.result.new_items[1].output == "ada"


def _two_tools(behavior: Any, ledger: Ledger) -> ss.StateMachine:
    agent = ss.Agent(
        "a", tools=[lookup_tool(ledger), refund_tool(ledger)], tool_use_behavior=behavior
    )
    return compile_agents(agent)


BOTH = [function_call("lookup_order", {"order_id": 1}), function_call("process_refund",
                                                                      {"order_id": 1})]


def test_tool_use_run_llm_again() -> None:
    ledger = Ledger()
    out = run_all(_two_tools("run_llm_again", ledger), "hi", [BOTH, [assistant_message("m")]],
                  ledger=ledger)
    assert out.result.final_output == "m" and len(out.model.calls) == 2


def test_tool_use_stop_on_first_tool() -> None:
    ledger = Ledger()
    out = run_all(_two_tools("stop_on_first_tool", ledger), "hi", [BOTH], ledger=ledger)
    assert out.result.final_output == "order 1 ok"
    assert len(ledger.ran) == 2  # both tools still ran
    assert all(i.type != "message_output_item" for i in out.result.new_items)


def test_tool_use_stop_at_tools() -> None:
    ledger = Ledger()
    out = run_all(_two_tools(ss.StopAtTools(["process_refund"]), ledger), "hi", [BOTH],
                  ledger=ledger)
    assert out.result.final_output == "refunded 1"
    ledger2 = Ledger()
    again = run_all(
        _two_tools(ss.StopAtTools(["process_refund"]), ledger2), "hi",
        [[function_call("lookup_order", {"order_id": 2})], [assistant_message("m")]],
        ledger=ledger2,
    )
    assert again.result.final_output == "m"


def test_tool_use_function() -> None:
    def decide(
        ctx: ss.RunContext[None], results: list[ss.runtime.ToolResult]
    ) -> ss.ToolsToFinalOutputResult:
        names = [r.name for r in results]
        return ss.ToolsToFinalOutputResult(is_final_output=True, final_output="+".join(names))

    ledger = Ledger()
    out = run_all(_two_tools(decide, ledger), "hi", [BOTH], ledger=ledger)
    assert out.result.final_output == "lookup_order+process_refund"


def test_handoff_beats_stop_on_first_tool() -> None:
    ledger = Ledger()
    b = ss.Agent("b")
    a = ss.Agent("a", tools=[lookup_tool(ledger)], handoffs=[b],
                 tool_use_behavior="stop_on_first_tool")
    out = run_all(
        compile_agents(a, b), "hi",
        [[function_call("lookup_order", {"order_id": 1}), function_call("transfer_to_b")],
         [assistant_message("b")]],
        ledger=ledger,
    )
    assert out.result.last_agent == "b" and out.result.final_output == "b"


def test_reset_tool_choice_after_tools_were_used() -> None:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)],
                 model_settings=ss.ModelSettings(tool_choice="required"))
    script: list[ScriptStep] = [
        [function_call("lookup_order", {"order_id": 1})], [assistant_message("ok")]]
    out = run_all(compile_agents(a), "hi", script, ledger=ledger)
    assert [c.settings.tool_choice for c in out.model.calls] == ["required", None]
    kept = run_all(compile_agents(a), "hi", script, ledger=ledger,
                   run_config=ss.RunConfig(reset_tool_choice=False))
    assert [c.settings.tool_choice for c in kept.model.calls] == ["required", "required"]


# -- §4 handoffs -----------------------------------------------------------------------------


def test_default_handoff_name_and_description() -> None:
    target = ss.Agent("Refund Agent", handoff_description="Refunds.")
    a = ss.Agent("a", handoffs=[target])
    out = run_all(compile_agents(a, target), "hi", [[assistant_message("x")]])
    tool = out.model.calls[0].request.tools[0]
    assert tool.name == "transfer_to_refund_agent" and tool.kind == "handoff"
    assert tool.description == "Handoff to the Refund Agent agent to handle the request. Refunds."


class Reason(BaseModel):
    reason: str


def test_handoff_input_type_reaches_on_handoff() -> None:
    got: list[str] = []

    def on_handoff(ctx: ss.RunContext[None], data: Reason) -> None:
        got.append(data.reason)

    b = ss.Agent("b")
    a = ss.Agent("a", handoffs=[ss.handoff(b, input_type=Reason, on_handoff=on_handoff)])
    out = run_all(
        compile_agents(a, b), "hi",
        [[function_call("transfer_to_b", {"reason": "billing"})], [assistant_message("b")]],
    )
    assert got == ["billing"] * 3
    assert out.result.last_agent == "b"


def test_invalid_handoff_input_is_an_error_output_not_a_crash() -> None:
    # deliberate difference: the SDK aborts the run with ModelBehaviorError
    b = ss.Agent("b")
    a = ss.Agent("a", handoffs=[ss.handoff(b, input_type=Reason, on_handoff=lambda c, d: None)])
    out = run_all(
        compile_agents(a, b), "hi",
        [[function_call("transfer_to_b", {"why": 1})], [assistant_message("a stays")]],
    )
    assert out.result.last_agent == "a"
    error = out.result.new_items[1]
    assert error.is_error and "reason: Field required" in error.output


def test_on_handoff_without_input() -> None:
    calls: list[object] = []
    b = ss.Agent("b")
    a = ss.Agent("a", handoffs=[ss.handoff(b, on_handoff=lambda ctx: calls.append(ctx.context))])
    run_all(compile_agents(a, b), "hi", [[function_call("transfer_to_b")],
                                         [assistant_message("b")]], context="C")
    assert calls == ["C"] * 3


def test_input_filter_changes_what_the_next_agent_sees_not_the_items() -> None:
    def only_input(data: ss.HandoffInputData) -> ss.HandoffInputData:
        return ss.HandoffInputData(data.input_history, (), ())

    ledger = Ledger()
    b = ss.Agent("b")
    a = ss.Agent("a", tools=[lookup_tool(ledger)],
                 handoffs=[ss.handoff(b, input_filter=only_input)])
    out = run_all(
        compile_agents(a, b), "hi",
        [[function_call("lookup_order", {"order_id": 1})], [function_call("transfer_to_b")],
         [assistant_message("b sees little")]],
        ledger=ledger,
    )
    assert [i.type for i in out.model.calls[2].input] == ["user_input_item"]
    assert len(out.result.new_items) == 5


def test_input_filter_sees_the_handoff_output_and_a_raising_one_leaves_no_handoff() -> None:
    seen: list[list[str]] = []

    def record(data: ss.HandoffInputData) -> ss.HandoffInputData:
        seen.append([i.type for i in data.new_items])
        return data

    b = ss.Agent("b")
    a = ss.Agent("a", handoffs=[ss.handoff(b, input_filter=record)])
    out = run_all(compile_agents(a, b), "hi",
                  [[function_call("transfer_to_b")], [assistant_message("b here")]])
    # as in the SDK, the filter's new items end with the handoff's own output
    assert seen == [["handoff_call_item", "handoff_output_item"]] * len(seen)
    assert out.result.last_agent == "b"

    def boom(data: ss.HandoffInputData) -> ss.HandoffInputData:
        raise RuntimeError("filter broke")

    a = ss.Agent("a", handoffs=[ss.handoff(b, input_filter=boom)])
    failed = run_all(compile_agents(a, b), "hi", [[function_call("transfer_to_b")]])
    assert isinstance(failed.error, RuntimeError)
    data = failed.error.run_data  # type: ignore[attr-defined]
    # the handoff did not take effect: no output claims the run moved, and it did not
    assert data.last_agent == "a"
    assert [i.type for i in data.new_items] == ["handoff_call_item"]
    assert data.to_state().current_agent == "a"


def test_input_filter_history_survives_a_pause() -> None:
    def only_input(data: ss.HandoffInputData) -> ss.HandoffInputData:
        return ss.HandoffInputData(data.input_history, (), ())

    ledger = Ledger()
    b = ss.Agent("b", tools=[refund_tool(ledger, needs_approval=True)])
    a = ss.Agent("a", handoffs=[ss.handoff(b, input_filter=only_input)])
    machine = compile_agents(a, b)
    first = machine.run_sync("hi", model=ScriptedModel(
        [[function_call("transfer_to_b")], [function_call("process_refund", {"order_id": 9})]]))
    state = ss.RunState.from_json(first.to_state().to_json())
    state.approve(first.interruptions[0])
    out = run_all(machine, state, [[assistant_message("ok")]], ledger=ledger)
    assert [i.type for i in out.model.calls[0].input] == [
        "user_input_item", "tool_call_item", "tool_call_output_item"
    ]


# -- §5 agent as tool ------------------------------------------------------------------------


class Findings(BaseModel):
    summary: str


def test_agent_tool_gets_only_the_generated_input_and_returns_its_output() -> None:
    researcher = ss.Agent("researcher", output_type=Findings)
    a = ss.Agent("a", tools=[researcher.as_tool("research", "Research")])
    out = run_all(
        compile_agents(a, researcher), "hi",
        [[function_call("research", {"input": "check 9"})],
         [assistant_message('{"summary": "fine"}')], [assistant_message("all good")]],
    )
    nested = out.model.calls[1]
    assert nested.agent == "researcher"
    assert list(nested.input) == [ss.runtime.UserInputItem("check 9")]
    output = out.result.new_items[1]
    assert output.output == '{"summary":"fine"}'
    assert out.result.final_output == "all good"


def test_agent_tool_output_extractor() -> None:
    inner = ss.Agent("inner")

    def extract(result: ss.RunResult) -> str:
        return f"extracted {len(result.new_items)}"

    a = ss.Agent("a", tools=[inner.as_tool("ask", "Ask", output_extractor=extract)])
    out = run_all(
        compile_agents(a, inner), "hi",
        [[function_call("ask", {"input": "q"})], [assistant_message("x")],
         [assistant_message("y")]],
    )
    assert out.result.new_items[1].output == "extracted 1"


def test_nested_approval_surfaces_and_resumes_the_nested_run_once() -> None:
    ledger = Ledger()
    inner = ss.Agent("inner", tools=[refund_tool(ledger, needs_approval=True)])
    outer = ss.Agent("outer", tools=[inner.as_tool("ask", "Ask")])
    machine = compile_agents(outer, inner)
    script: list[ScriptStep] = [
        [function_call("ask", {"input": "refund 5"})],
        [function_call("process_refund", {"order_id": 5})],
        [assistant_message("inner after approval")],
        [assistant_message("outer done")],
    ]
    paused = run_all(machine, "hi", script[:2], ledger=ledger)
    result = paused.result
    assert [(i.agent, i.name) for i in result.interruptions] == [("inner", "process_refund")]
    assert [i.type for i in result.new_items] == ["tool_call_item", "tool_approval_item"]
    state = ss.RunState.from_json(result.to_state().to_json())
    state.approve(result.interruptions[0])
    done = run_all(machine, state, script[2:], ledger=ledger)
    assert ledger.ran == [("process_refund", 5)]
    assert done.result.final_output == "outer done"
    assert done.result.new_items[2].output == "inner after approval"
    # resuming without a decision returns the same interruption
    again = run_all(machine, result.to_state(), [])
    assert again.result.interruptions == result.interruptions


# -- §6 guardrails ---------------------------------------------------------------------------

Verdict = ss.GuardrailFunctionOutput


def test_blocking_input_guardrail_trips_before_any_model_call() -> None:
    @ss.input_guardrail
    def no_secrets(ctx: ss.RunContext[None], agent: object, input: object) -> Verdict:
        return ss.GuardrailFunctionOutput(output_info="secret!", tripwire_triggered=True)

    out = run_all(compile_agents(ss.Agent("a", input_guardrails=[no_secrets])), "secret", [])
    assert isinstance(out.error, ss.InputGuardrailTripwireTriggered)
    assert out.model.calls == []
    assert out.error.guardrail_result.output_info == "secret!"


def test_parallel_input_guardrail_lets_the_model_run_but_no_tool() -> None:
    @ss.input_guardrail(run_in_parallel=True)
    async def slow_check(ctx: ss.RunContext[None], agent: object, input: object) -> Verdict:
        await asyncio.sleep(0.01)
        return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=True)

    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)], input_guardrails=[slow_check])
    out = run_all(compile_agents(a), "hi", [[function_call("lookup_order", {"order_id": 1})]],
                  ledger=ledger)
    assert isinstance(out.error, ss.InputGuardrailTripwireTriggered)
    assert len(out.model.calls) == 1
    assert ledger.ran == []  # deliberate difference: the SDK runs the tool first


def test_input_guardrails_run_only_on_the_entry_agent_of_a_fresh_run() -> None:
    ran: list[str] = []

    @ss.input_guardrail
    def note(ctx: ss.RunContext[None], agent: object, input: object) -> Verdict:
        ran.append("x")
        return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

    ledger = Ledger()
    b = ss.Agent("b", input_guardrails=[note])
    a = ss.Agent("a", tools=[refund_tool(ledger, needs_approval=True)], handoffs=[b],
                 input_guardrails=[note])
    machine = compile_agents(a, b)
    first = machine.run_sync("hi", model=ScriptedModel(
        [[function_call("process_refund", {"order_id": 1})]]))
    assert ran == ["x"] and len(first.input_guardrail_results) == 1
    state = first.to_state()
    state.approve(first.interruptions[0])
    run_all(machine, state, [[function_call("transfer_to_b")], [assistant_message("b")]])
    assert ran == ["x"]


def test_output_guardrail_trips_on_the_final_output() -> None:
    @ss.output_guardrail
    def no_refunds(ctx: ss.RunContext[None], agent: object, output: str) -> Verdict:
        return ss.GuardrailFunctionOutput(output_info=len(output),
                                          tripwire_triggered="refund" in output)

    machine = compile_agents(ss.Agent("a", output_guardrails=[no_refunds]))
    out = run_all(machine, "hi", [[assistant_message("here is a refund")]])
    assert isinstance(out.error, ss.OutputGuardrailTripwireTriggered)
    assert out.error.guardrail_result.output_info == 16
    assert len(out.error.run_data.new_items) == 1
    fine = run_all(machine, "hi", [[assistant_message("no")]])
    assert fine.result.output_guardrail_results[0].tripwire_triggered is False


# -- §7 human in the loop --------------------------------------------------------------------


def test_interrupted_turn_order_and_resume_order() -> None:
    ledger = Ledger()
    wire = refund_tool(ledger, needs_approval=True)
    machine = compile_agents(ss.Agent("a", tools=[wire, lookup_tool(ledger)]))
    first = run_all(
        machine, "hi",
        [[function_call("process_refund", {"order_id": 10}),
          function_call("lookup_order", {"order_id": 1})]],
        ledger=ledger,
    ).result
    assert trace(first.new_items) == [
        ("tool_call_item", "a", "process_refund"),
        ("tool_call_item", "a", "lookup_order"),
        ("tool_approval_item", "a", "process_refund"),
        ("tool_call_output_item", "a", "order 1 ok"),
    ]
    state = first.to_state()
    state.approve(first.interruptions[0])
    done = run_all(machine, state, [[assistant_message("wired")]], ledger=ledger)
    assert trace(done.result.new_items)[3:] == [
        ("tool_call_output_item", "a", "order 1 ok"),
        ("tool_call_output_item", "a", "refunded 10"),
        ("message_output_item", "a", "wired"),
    ]
    assert len(done.model.calls) == 1


def test_per_call_approval() -> None:
    ledger = Ledger()

    def big(ctx: ss.RunContext[None], params: dict[str, int], call_id: str) -> bool:
        return params["order_id"] > 100

    machine = compile_agents(ss.Agent("a", tools=[refund_tool(ledger, needs_approval=big)]))
    out = run_all(
        machine, "hi",
        [[function_call("process_refund", {"order_id": 5}),
          function_call("process_refund", {"order_id": 500})]],
        ledger=ledger,
    )
    assert ledger.ran == [("process_refund", 5)]
    assert [json.loads(i.arguments) for i in out.result.interruptions] == [{"order_id": 500}]


def test_resuming_without_a_decision_returns_the_same_interruption() -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[refund_tool(ledger, needs_approval=True)]))
    first = machine.run_sync("hi", model=ScriptedModel(
        [[function_call("process_refund", {"order_id": 1})]]))
    out = run_all(machine, first.to_state(), [], ledger=ledger)
    assert out.result.interruptions == first.interruptions
    assert out.model.calls == [] and ledger.ran == []
    assert out.result.new_items == first.new_items


def test_always_approve_covers_later_calls_of_the_tool() -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[refund_tool(ledger, needs_approval=True)]))
    first = machine.run_sync("hi", model=ScriptedModel(
        [[function_call("process_refund", {"order_id": 1})]]))
    state = first.to_state()
    state.approve(first.interruptions[0], always=True)
    out = run_all(
        machine, state,
        [[function_call("process_refund", {"order_id": 2})], [assistant_message("both")]],
        ledger=ledger,
    )
    assert ledger.ran == [("process_refund", 1), ("process_refund", 2)]
    assert out.result.final_output == "both"


def test_default_rejection_message() -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[refund_tool(ledger, needs_approval=True)]))
    first = machine.run_sync("hi", model=ScriptedModel(
        [[function_call("process_refund", {"order_id": 1})]]))
    state = first.to_state()
    state.reject(first.interruptions[0])
    out = run_all(machine, state, [[assistant_message("ok")]], ledger=ledger)
    assert out.result.new_items[-2].output == "Tool execution was not approved."
