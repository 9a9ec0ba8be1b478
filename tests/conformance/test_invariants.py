"""DESIGN §4: one test per invariant of the loop, each under all three surfaces."""

from __future__ import annotations

import itertools

import stepswitch as ss
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests._items import output_of
from tests.conformance.harness import run_all, trace
from tests.conformance.kit import Ledger, compile_agents, lookup_tool, refund_tool


def test_1_the_item_list_is_the_only_state() -> None:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)])
    machine = compile_agents(a)
    out = run_all(
        machine,
        "hi",
        [[function_call("lookup_order", {"order_id": 1})],
         [function_call("lookup_order", {"order_id": 2})],
         [assistant_message("done")]],
        ledger=ledger,
    )
    result = out.result
    # every model call was sent the input plus all items so far: each a prefix of the next
    inputs = [list(c.input) for c in out.model.calls]
    for before, after in itertools.pairwise(inputs):
        assert after[: len(before)] == before
    assert inputs[-1][1:] == result.new_items[:-1]
    assert result.to_input_list() == [*result.input, *result.new_items]
    assert result.final_output == result.new_items[-1].content
    assert result.last_agent == result.new_items[-1].agent


def test_2_termination_is_bounded_across_handoffs() -> None:
    a = ss.Agent("a", handoffs=["b"])
    b = ss.Agent("b", handoffs=[a])
    # the analyzer refuses this unbudgeted cycle (SW201); opting out shows max_turns holds
    machine = compile_agents(a, b, max_turns=3, ignore=["SW201"])
    out = run_all(
        machine,
        "go",
        [[function_call("transfer_to_b")], [function_call("transfer_to_a")],
         [function_call("transfer_to_b")], [assistant_message("never")]],
    )
    assert isinstance(out.error, ss.MaxTurnsExceeded)
    assert len(out.model.calls) == 3  # one shared budget, not one per agent
    data = out.error.run_data
    assert [i.type for i in data.new_items].count("handoff_output_item") == 3
    assert data.last_agent == "b"
    # the run so far resumes with a larger budget and ends
    resumed = run_all(machine, data.to_state(), [[assistant_message("finally")]], max_turns=5)
    assert resumed.result.final_output == "finally"
    assert resumed.result.last_agent == "b"
    assert len(resumed.result.new_items) == 7


def test_3_validation_precedes_execution() -> None:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)])
    machine = compile_agents(a)
    out = run_all(
        machine,
        "hi",
        [[function_call("lookup_order", "{not json"),
          function_call("lookup_order", {"order_id": "seven"})],
         [assistant_message("gave up")]],
        ledger=ledger,
    )
    outputs = [i for i in out.result.new_items if i.type == "tool_call_output_item"]
    assert ledger.ran == []  # the function never ran
    assert all(o.is_error for o in outputs)
    assert "Invalid JSON input for tool lookup_order" in outputs[0].output
    assert "order_id" in outputs[1].output and "'seven'" in outputs[1].output
    assert out.result.final_output == "gave up"


def test_3_an_undeclared_tool_name_is_a_structural_error() -> None:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)])
    machine = compile_agents(a)
    out = run_all(
        machine,
        "hi",
        [[function_call("lookup_order", {"order_id": 1}), function_call("drop_tables", {})]],
        ledger=ledger,
    )
    assert isinstance(out.error, ss.ModelBehaviorError)
    assert str(out.error) == "Tool drop_tables not found in agent a"
    assert ledger.ran == []  # nothing of that response ran
    assert out.error.run_data.new_items == []


def test_4_a_tool_phase_feeds_back() -> None:
    ledger = Ledger()
    a = ss.Agent("a", tools=[lookup_tool(ledger)])
    machine = compile_agents(a)
    out = run_all(
        machine,
        "hi",
        [[assistant_message("let me check"), function_call("lookup_order", {"order_id": 7})],
         [assistant_message("order 7 is fine")]],
        ledger=ledger,
    )
    assert len(out.model.calls) == 2
    assert out.result.final_output == "order 7 is fine"
    assert trace(out.result.new_items)[0] == ("message_output_item", "a", "let me check")


def test_5_current_is_the_only_handoff_state() -> None:
    b = ss.Agent("b", instructions="I am b")
    a = ss.Agent("a", handoffs=[b])
    machine = compile_agents(a, b)
    out = run_all(machine, "hi", [[function_call("transfer_to_b")], [assistant_message("b here")]])
    result = out.result
    assert [c.agent for c in out.model.calls] == ["a", "b"]
    assert out.model.calls[1].instructions == "I am b"
    assert result.last_agent == "b"
    handoff = result.new_items[1]
    assert handoff.type == "handoff_output_item"
    assert (handoff.source_agent, handoff.target_agent) == ("a", "b")


def test_6_interruption_runs_the_others_and_resumes_exactly_once() -> None:
    ledger = Ledger()
    a = ss.Agent(
        "a", tools=[refund_tool(ledger, needs_approval=True), lookup_tool(ledger)]
    )
    machine = compile_agents(a)
    script: list[ScriptStep] = [
        [function_call("process_refund", {"order_id": 1}),
         function_call("lookup_order", {"order_id": 1})],
        [assistant_message("refunded")],
    ]
    out = run_all(machine, "refund 1", script[:1], ledger=ledger)
    assert ledger.ran == [("lookup_order", 1)]
    first = out.result
    state = first.to_state()
    state.approve(first.interruptions[0])
    saved = state.to_json()

    ledger.ran.clear()
    model = ScriptedModel(script[1:])
    done = machine.run_sync(ss.RunState.from_json(saved), model=model)
    assert done.final_output == "refunded"
    assert ledger.ran == [("process_refund", 1)]
    # the resumed result's state holds the output: resuming it again never re-runs the call
    again = machine.run_sync(done.to_state(), model=ScriptedModel([[assistant_message("x")]]))
    assert again.final_output == "x"
    assert ledger.count("process_refund") == 1


def test_6_rejection_is_an_output_the_model_sees() -> None:
    ledger = Ledger()
    a = ss.Agent("a", tools=[refund_tool(ledger, needs_approval=True)])
    machine = compile_agents(a)
    first = machine.run_sync(
        "refund", model=ScriptedModel([[function_call("process_refund", {"order_id": 3})]])
    )
    state = first.to_state()
    state.reject(first.interruptions[0].call_id, message="A manager said no.")
    out = run_all(machine, state, [[assistant_message("sorry")]], ledger=ledger)
    assert ledger.ran == []
    rejection = out.result.new_items[-2]
    assert rejection.type == "tool_call_output_item" and rejection.output == "A manager said no."
    assert rejection in out.model.calls[0].input


def test_7_a_spent_handoff_is_not_offered_and_a_call_to_it_is_an_error_output() -> None:
    b = ss.Agent("b", handoffs=["a"])
    a = ss.Agent("a", handoffs=[ss.handoff(b, max_uses=1)])
    machine = compile_agents(a, b)
    out = run_all(
        machine,
        "hi",
        [[function_call("transfer_to_b")], [function_call("transfer_to_a")],
         [function_call("transfer_to_b")], [assistant_message("still a")]],
    )
    calls = out.model.calls
    assert calls[0].tools == ("transfer_to_b",)
    assert calls[2].tools == ()  # spent: no longer offered
    spent = out.result.new_items[-2]
    assert spent.type == "tool_call_output_item" and spent.is_error
    assert "no longer available" in spent.output
    assert out.result.new_items[-3].type == "handoff_call_item"
    assert out.result.last_agent == "a"  # the agent stays


def test_7_a_tools_run_budget_counts_what_ran_once_per_run() -> None:
    # two calls in one response: the first runs, the second gets an error output; the
    # spent tool is no longer offered, and a call of it anyway never runs either. A
    # call with invalid arguments runs nothing and spends nothing.
    ledger = Ledger()
    a = ss.Agent("a", tools=[refund_tool(ledger, max_uses=1), lookup_tool(ledger)])
    machine = compile_agents(a)
    out = run_all(
        machine,
        "refund",
        [[function_call("process_refund", {"order_id": "x"})],
         [function_call("process_refund", {"order_id": 1}),
          function_call("process_refund", {"order_id": 2})],
         [function_call("process_refund", {"order_id": 3})],
         [assistant_message("done")]],
        ledger=ledger,
    )
    assert ledger.ran == [("process_refund", 1)]
    calls = out.model.calls
    assert calls[0].tools == calls[1].tools == ("process_refund", "lookup_order")
    assert calls[2].tools == calls[3].tools == ("lookup_order",)
    outputs = [i for i in out.result.new_items if i.type == "tool_call_output_item"]
    assert [o.is_error for o in outputs] == [True, False, True, True]
    assert "no longer available" in outputs[2].output and "max_uses" in outputs[3].output
    assert out.result.to_state().tool_uses == {"process_refund": 1}


def test_7_a_tools_run_budget_is_shared_with_nested_runs() -> None:
    ledger = Ledger()
    refund = refund_tool(ledger, max_uses=1)
    inner = ss.Agent("inner", tools=[refund])
    outer = ss.Agent("outer", tools=[refund, inner.as_tool("ask", "Ask inner")])
    machine = compile_agents(outer, inner)
    out = run_all(
        machine,
        "hi",
        [[function_call("ask", {"input": "refund 1"})],
         [function_call("process_refund", {"order_id": 1})],  # inner: runs
         [assistant_message("inner done")],
         [function_call("process_refund", {"order_id": 2})],  # outer: spent
         [assistant_message("done")]],
        ledger=ledger,
    )
    assert ledger.ran == [("process_refund", 1)]
    assert out.model.calls[3].tools == ("ask",)
    assert out.result.new_items[-2].is_error


def test_7_a_tools_run_budget_survives_a_pause_and_approves_no_second_run() -> None:
    # two gated calls in one response, both approved: the budget lets one run; the count
    # is saved in the state's JSON, so a resumed run keeps it
    ledger = Ledger()
    a = ss.Agent("a", tools=[refund_tool(ledger, needs_approval=True, max_uses=1)])
    machine = compile_agents(a)
    first = machine.run_sync("refund", model=ScriptedModel([
        [function_call("process_refund", {"order_id": 1}),
         function_call("process_refund", {"order_id": 2})]]))
    state = first.to_state()
    assert state.tool_uses == {}
    for item in first.interruptions:
        state.approve(item)
    out = run_all(machine, ss.RunState.from_json(state.to_json()),
                  [[function_call("process_refund", {"order_id": 3})],
                   [assistant_message("done")]], ledger=ledger)
    assert ledger.ran == [("process_refund", 1)]
    assert out.model.calls[0].tools == ()
    saved = out.result.to_state()
    assert ss.RunState.from_json(saved.to_json()).tool_uses == {"process_refund": 1}


def test_7_first_handoff_with_budget_wins() -> None:
    b = ss.Agent("b")
    c = ss.Agent("c")
    a = ss.Agent("a", handoffs=[b, c])
    machine = compile_agents(a, b, c)
    out = run_all(
        machine,
        "hi",
        [[function_call("transfer_to_b"), function_call("transfer_to_c")],
         [assistant_message("b")]],
    )
    assert trace(out.result.new_items) == [
        ("handoff_call_item", "a", "transfer_to_b"),
        ("handoff_call_item", "a", "transfer_to_c"),
        ("tool_call_output_item", "a", "Multiple handoffs detected, ignoring this one."),
        ("handoff_output_item", "a", '{"assistant": "b"}'),
        ("message_output_item", "b", "b"),
    ]


def test_7_agent_tool_budget_defaults_to_the_workflows_and_failure_is_an_output() -> None:
    inner = ss.Agent("inner", handoffs=["inner2"])
    inner2 = ss.Agent("inner2", handoffs=[inner])
    outer = ss.Agent("outer", tools=[inner.as_tool("ask", "Ask inner")])
    machine = compile_agents(outer, inner, inner2, max_turns=4, ignore=["SW201"])
    bounce = [function_call("transfer_to_inner2")], [function_call("transfer_to_inner")]
    out = run_all(
        machine,
        "hi",
        [[function_call("ask", {"input": "q"})], *bounce, *bounce,
         [assistant_message("inner failed")]],
    )
    # the nested run has its own budget, the workflow's 4 (not the SDK's fixed 10)
    nested_calls = [c for c in out.model.calls if c.agent != "outer"]
    assert len(nested_calls) == 4
    failure = out.result.new_items[1]
    assert failure.type == "tool_call_output_item" and failure.is_error
    assert "Max turns (4) exceeded" in failure.output
    # the calling model sees what happened, not advice meant for the developer
    assert "to_state()" not in failure.output and "RunConfig" not in failure.output
    assert out.result.final_output == "inner failed"


def test_7_nesting_depth_is_bounded() -> None:
    a = ss.Agent("a", tools=[ss.agent_tool("a", "recurse", "Call myself", max_depth=2)])
    machine = compile_agents(a)
    call = [function_call("recurse", {"input": "again"})]
    out = run_all(
        machine,
        "hi",
        [call, call, call, [assistant_message("bottom")], [assistant_message("mid")],
         [assistant_message("top")]],
    )
    assert out.result.final_output == "top"
    depth_error = [
        i for c in out.model.calls for i in c.input
        if getattr(i, "is_error", False) and "depth limit 2" in output_of(i)
    ]
    assert depth_error, "the third level was refused"
