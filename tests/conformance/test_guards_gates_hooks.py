"""Tool guardrails, ``is_enabled`` gates and run/agent hooks, on every surface.

Each scenario goes through ``run_all`` (``run``, ``run_sync`` and ``run_streamed`` must
agree), and ``tests/differential`` replays it on the generated runner: every object
here is module-level, so the runner imports them by path. Tools and hooks write to
``LEDGER``, which ``run_all`` compares across surfaces.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

import stepswitch as ss
from stepswitch.testing import assistant_message, function_call
from tests.conformance.harness import run_all


class _Ledger:
    def __init__(self) -> None:
        self.ran: list[Any] = []


LEDGER = _Ledger()


@dataclass
class Account:
    languages: list[str] = field(default_factory=list)
    admin: bool = False
    broken: bool = False


# -- tool guardrails ----------------------------------------------------------------------


@ss.tool_input_guardrail
def only_small_orders(data: ss.ToolInputGuardrailData) -> ss.ToolGuardrailFunctionOutput:
    order = json.loads(data.context.tool_arguments)["order_id"]
    if order > 100:
        return ss.ToolGuardrailFunctionOutput.reject_content(
            f"order {order} is too large to look up", output_info={"order": order})
    if order == 13:
        return ss.ToolGuardrailFunctionOutput.raise_exception(output_info="unlucky")
    return ss.ToolGuardrailFunctionOutput.allow()


@ss.tool_output_guardrail
async def no_card_numbers(data: ss.ToolOutputGuardrailData) -> ss.ToolGuardrailFunctionOutput:
    text = str(data.output)
    if "4111" in text:
        return ss.ToolGuardrailFunctionOutput.reject_content("[card number removed]")
    if "SSN" in text:
        return ss.ToolGuardrailFunctionOutput.raise_exception(output_info="ssn")
    return ss.ToolGuardrailFunctionOutput.allow(output_info=data.context.tool_name)


@ss.tool_input_guardrail
def returns_a_dict(data: ss.ToolInputGuardrailData) -> Any:
    return {"allow": True}


@ss.function_tool(tool_input_guardrails=[only_small_orders],
                  tool_output_guardrails=[no_card_numbers])
def lookup_order(order_id: int) -> str:
    """Look an order up."""
    LEDGER.ran.append(("lookup_order", order_id))
    if order_id == 7:
        return "paid with 4111 1111 1111 1111"
    if order_id == 8:
        return "holder SSN 123-45-6789"
    return f"order {order_id} shipped"


@ss.function_tool(tool_input_guardrails=[returns_a_dict])
def careless(order_id: int) -> str:
    """A tool whose guardrail returns the wrong type."""
    LEDGER.ran.append(("careless", order_id))
    return "ran"


clerk = ss.Agent("clerk", "Help.", tools=[lookup_order, careless])
CLERK = ss.Workflow("guarded", entry=clerk, agents=[clerk]).compile()


def test_input_guardrails_reject_before_the_tool_runs_and_output_ones_replace_what_the_model_sees(
) -> None:
    out = run_all(CLERK, "orders", [
        [function_call("lookup_order", {"order_id": 500}, call_id="a"),
         function_call("lookup_order", {"order_id": 7}, call_id="b"),
         function_call("lookup_order", {"order_id": 1}, call_id="c")],
        [assistant_message("done")],
    ], ledger=LEDGER)
    result = out.result
    outputs = [i.output for i in result.new_items if i.type == "tool_call_output_item"]
    assert outputs == ["order 500 is too large to look up", "[card number removed]",
                       "order 1 shipped"]
    assert LEDGER.ran == [("lookup_order", 7), ("lookup_order", 1)]  # 500 never ran
    assert [(r.call_id, r.output.behavior["type"]) for r in
            result.tool_input_guardrail_results] == [
        ("a", "reject_content"), ("b", "allow"), ("c", "allow")]
    assert [(r.call_id, r.output.output_info) for r in result.tool_output_guardrail_results
            if r.output.behavior["type"] == "allow"] == [("c", "lookup_order")]
    # the model's next request carries the guarded outputs, not the card number
    second = out.model.calls[1].input
    assert "4111" not in json.dumps([getattr(i, "output", "") for i in second])


def test_an_input_tripwire_ends_the_run_with_nothing_run_and_the_run_kept() -> None:
    out = run_all(CLERK, "orders", [
        [function_call("lookup_order", {"order_id": 1}, call_id="a"),
         function_call("lookup_order", {"order_id": 13}, call_id="b")],
    ], ledger=LEDGER)
    error = cast(Any, out.error)
    assert isinstance(error, ss.ToolInputGuardrailTripwireTriggered)
    assert error.guardrail == "only_small_orders" and error.output.output_info == "unlucky"
    assert LEDGER.ran == []  # the turn stopped before any of its calls ran
    assert [i.type for i in error.run_data.new_items] == ["tool_call_item"] * 2
    with pytest.raises(ss.StateError, match="has no output"):
        CLERK.run_sync(error.run_data.to_state(), model=out.model)


def test_an_output_tripwire_stops_the_run_and_a_resume_never_runs_the_tool_again() -> None:
    out = run_all(CLERK, "order 8", [
        [function_call("lookup_order", {"order_id": 8}, call_id="a")],
    ], ledger=LEDGER)
    error = cast(Any, out.error)
    assert isinstance(error, ss.ToolOutputGuardrailTripwireTriggered)
    assert LEDGER.ran == [("lookup_order", 8)]
    assert "SSN" not in json.dumps([i.output for i in error.run_data.new_items
                                    if i.type == "tool_call_output_item"])
    saved = ss.RunState.from_json(error.run_data.to_state().to_json())
    with pytest.raises(ss.StateError, match="has no output"):
        CLERK.run_sync(saved, model=out.model)
    assert LEDGER.ran == [("lookup_order", 8)]


def test_a_guardrail_that_returns_the_wrong_type_is_a_located_error() -> None:
    out = run_all(CLERK, "x", [[function_call("careless", {"order_id": 1}, call_id="a")]],
                  ledger=LEDGER)
    error = cast(Any, out.error)
    assert isinstance(out.error, ss.UserError)
    line = returns_a_dict.site.line
    assert str(error) == (
        f"tool input guardrail 'returns_a_dict' at tests/conformance/"
        f"test_guards_gates_hooks.py:{line} of tool 'careless' (agent 'clerk') returned "
        "dict; a tool guardrail must return ToolGuardrailFunctionOutput.allow(), "
        ".reject_content(message) or .raise_exception()")
    assert "\n" not in str(error) and LEDGER.ran == []
    assert [i.type for i in error.run_data.new_items] == ["tool_call_item"]


# -- is_enabled -----------------------------------------------------------------------------


def speaks_french(ctx: ss.RunContext[Account], agent: Any) -> bool:
    LEDGER.ran.append(("gate", agent.name))
    return "french" in ctx.context.languages


async def is_admin(ctx: ss.RunContext[Account], agent: Any) -> bool:
    if ctx.context.broken:
        raise RuntimeError("the directory is down")
    return ctx.context.admin


@ss.function_tool(is_enabled=speaks_french)
def to_french(text: str) -> str:
    """Translate to French."""
    LEDGER.ran.append(("to_french", text))
    return f"fr: {text}"


@ss.function_tool(is_enabled=False)
def retired(text: str) -> str:
    """Never offered."""
    return text


@ss.function_tool(needs_approval=True)
def wipe(target: str) -> str:
    """Wipe something (needs a human's yes)."""
    LEDGER.ran.append(("wipe", target))
    return "wiped"


admin_desk = ss.Agent("admin", "Administer.")
auditor = ss.Agent("auditor", "Audit.")
desk = ss.Agent(
    "desk", "Help.",
    tools=[to_french, retired, wipe, auditor.as_tool("audit", "Audit it", is_enabled=is_admin)],
    handoffs=[ss.handoff(admin_desk, is_enabled=is_admin)],
)
DESK = ss.Workflow("gated", entry=desk, agents=[desk, admin_desk, auditor],
                   context_type=Account).compile()


def test_the_model_is_offered_only_what_the_gates_let_through() -> None:
    out = run_all(DESK, "hi", [[assistant_message("hello")]], ledger=LEDGER,
                  context=Account(languages=["french"]))
    assert out.model.calls[0].tools == ("to_french", "wipe")
    out = run_all(DESK, "hi", [[assistant_message("hello")]], ledger=LEDGER,
                  context=Account(admin=True))
    assert out.model.calls[0].tools == ("wipe", "audit", "transfer_to_admin")
    assert LEDGER.ran == [("gate", "desk")]  # asked once per turn, with the agent


def test_a_call_of_a_closed_tool_is_a_call_of_an_unknown_tool() -> None:
    out = run_all(DESK, "hi", [[function_call("to_french", {"text": "hi"})]], ledger=LEDGER,
                  context=Account())
    assert isinstance(out.error, ss.ModelBehaviorError)
    assert str(out.error) == "Tool to_french not found in agent desk"
    out = run_all(DESK, "hi", [
        [function_call("retired", {"text": "hi"}, call_id="a"),
         function_call("transfer_to_admin", {}, call_id="b")],
        [assistant_message("ok")],
    ], ledger=LEDGER, context=Account(), run_config=ss.RunConfig(unknown_tool="return_error"))
    outputs = [(i.call_id, i.output) for i in out.result.new_items
               if i.type == "tool_call_output_item"]
    assert outputs == [("a", "Tool 'retired' not found."),
                       ("b", "Tool 'transfer_to_admin' not found.")]
    assert out.result.last_agent == "desk"  # the closed handoff was not taken


def test_a_closed_gate_stays_closed_for_a_paused_turn_after_a_save_and_a_load() -> None:
    script: list[Any] = [
        [function_call("wipe", {"target": "disk"}, call_id="a"),
         function_call("transfer_to_admin", {}, call_id="b")],
        [assistant_message("wiped")],
    ]
    config = ss.RunConfig(unknown_tool="return_error")
    paused = run_all(DESK, "wipe", script[:1], ledger=LEDGER, context=Account(),
                     run_config=config).result
    assert [i.call_id for i in paused.interruptions] == ["a"]
    state = ss.RunState.from_json(paused.to_state().to_json())
    state.approve("a")
    done = run_all(DESK, state, script[1:], ledger=LEDGER, context=Account(admin=True),
                   run_config=config).result
    assert done.last_agent == "desk" and done.final_output == "wiped"
    assert LEDGER.ran == [("wipe", "disk"), ("gate", "desk")]  # the next turn asks again


def test_an_is_enabled_that_raises_ends_the_run_saying_which_with_the_run_kept() -> None:
    out = run_all(DESK, "hi", [[assistant_message("never")]], ledger=LEDGER,
                  context=Account(broken=True))
    error = cast(Any, out.error)
    assert isinstance(out.error, RuntimeError) and str(error) == "the directory is down"
    assert any("is_enabled of 'audit' of agent 'desk'" in note for note in error.__notes__)
    assert error.run_data.new_items == [] and out.model.calls == []
    resumed = DESK.run_sync(error.run_data.to_state(), context=Account(admin=True),
                            model=out.model.__class__([[assistant_message("back")]]))
    assert resumed.final_output == "back"


# -- hooks ------------------------------------------------------------------------------------


class RunRecorder(ss.RunHooks[Any]):
    async def on_agent_start(self, context: Any, agent: Any) -> None:
        LEDGER.ran.append(("agent_start", agent.name))

    def on_agent_end(  # type: ignore[override]  # a plain method works too
        self, context: Any, agent: Any, output: Any
    ) -> None:
        LEDGER.ran.append(("agent_end", agent.name, output))

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        LEDGER.ran.append(("handoff", from_agent.name, to_agent.name))

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        LEDGER.ran.append(("tool_start", agent.name, tool.name, context.tool_call_id))
        if context.tool_arguments == '{"order_id": 66}':
            raise LookupError("start hook failed")

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        LEDGER.ran.append(("tool_end", agent.name, tool.name, result))
        if result == "order 99 shipped":
            raise ValueError("end hook failed")

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any,
                           input_items: Any) -> None:
        # the items themselves differ by model (an Agents API request carries its pin)
        LEDGER.ran.append(("llm_start", agent.name, system_prompt, bool(input_items)))

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        LEDGER.ran.append(("llm_end", agent.name))


class ManagerHooks(ss.AgentHooks[Any]):
    async def on_start(self, context: Any, agent: Any) -> None:
        LEDGER.ran.append(("manager.start", agent.name))

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        LEDGER.ran.append(("manager.end", agent.name))

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        LEDGER.ran.append(("manager.handoff", source.name, agent.name))


RUN_HOOKS = RunRecorder()
MANAGER_HOOKS = ManagerHooks()

researcher = ss.Agent("researcher", "Research.", tools=[lookup_order])
closer = ss.Agent("closer", "Close.")
manager = ss.Agent("manager", "Manage.", tools=[researcher.as_tool("research", "Research")],
                   handoffs=[closer], hooks=MANAGER_HOOKS)
MANAGER = ss.Workflow("hooked", entry=manager, agents=[manager, researcher, closer]).compile()


def test_hooks_fire_at_the_sdk_points_in_nested_runs_too() -> None:
    out = run_all(MANAGER, "go", [
        [function_call("research", {"input": "order 1"}, call_id="r")],
        [function_call("lookup_order", {"order_id": 1}, call_id="l")],
        [assistant_message("found")],
        [function_call("transfer_to_closer", {}, call_id="h")],
        [assistant_message("closed")],
    ], ledger=LEDGER, hooks=RUN_HOOKS)
    assert out.result.final_output == "closed"
    assert LEDGER.ran == [
        ("agent_start", "manager"), ("manager.start", "manager"),
        ("llm_start", "manager", "Manage.", True), ("llm_end", "manager"),
        ("tool_start", "manager", "research", "r"),
        ("agent_start", "researcher"), ("llm_start", "researcher", "Research.", True),
        ("llm_end", "researcher"),
        ("tool_start", "researcher", "lookup_order", "l"), ("lookup_order", 1),
        ("tool_end", "researcher", "lookup_order", "order 1 shipped"),
        ("llm_start", "researcher", "Research.", True), ("llm_end", "researcher"),
        ("agent_end", "researcher", "found"),
        ("tool_end", "manager", "research", "found"),
        ("llm_start", "manager", "Manage.", True), ("llm_end", "manager"),
        ("handoff", "manager", "closer"), ("manager.handoff", "manager", "closer"),
        ("agent_start", "closer"), ("llm_start", "closer", "Close.", True), ("llm_end", "closer"),
        ("agent_end", "closer", "closed"),
    ]


def test_a_hook_that_raises_in_a_nested_run_is_that_agent_tools_failure() -> None:
    out = run_all(MANAGER, "go", [
        [function_call("research", {"input": "order 99"}, call_id="r")],
        [function_call("lookup_order", {"order_id": 99}, call_id="l")],
        [assistant_message("sorry")],
    ], ledger=LEDGER, hooks=RUN_HOOKS)
    result = out.result
    assert result.final_output == "sorry"
    failed = [i for i in result.new_items if i.type == "tool_call_output_item"]
    assert [(i.call_id, i.is_error) for i in failed] == [("r", True)]
    assert "end hook failed" in failed[0].output
    assert LEDGER.ran.count(("lookup_order", 99)) == 1


def test_a_raising_hook_at_the_top_keeps_the_run_and_refuses_a_second_run_of_the_call(
) -> None:
    solo = ss.Workflow("solo", entry=researcher, agents=[researcher]).compile()
    out = run_all(solo, "go", [[function_call("lookup_order", {"order_id": 99}, call_id="l")]],
                  ledger=LEDGER, hooks=RUN_HOOKS)
    error = cast(Any, out.error)
    assert isinstance(out.error, ValueError) and str(error) == "end hook failed"
    assert LEDGER.ran.count(("lookup_order", 99)) == 1
    state = ss.RunState.from_json(error.run_data.to_state().to_json())
    with pytest.raises(ss.StateError, match="has no output"):
        solo.run_sync(state, model=out.model, hooks=RUN_HOOKS)
    assert LEDGER.ran.count(("lookup_order", 99)) == 1


def test_a_start_hook_that_raises_stops_the_call_before_it_runs() -> None:
    solo = ss.Workflow("solo", entry=researcher, agents=[researcher]).compile()
    out = run_all(solo, "go", [[function_call("lookup_order", {"order_id": 66}, call_id="l")]],
                  ledger=LEDGER, hooks=RUN_HOOKS)
    assert isinstance(out.error, LookupError)
    assert ("lookup_order", 66) not in LEDGER.ran


def test_hooks_are_checked_where_they_are_given() -> None:
    class Misspelt(ss.RunHooks[Any]):
        async def on_tool_started(self, context: Any, agent: Any, tool: Any) -> None: ...

    with pytest.raises(ss.UserError, match=r"run\(hooks=\.\.\.\): hooks: Misspelt"
                                           r"\.on_tool_started is no hook method"):
        MANAGER.run_sync("x", hooks=Misspelt())
    with pytest.raises(ss.UserError, match=r"expected ss\.RunHooks, got a ss\.AgentHooks"):
        MANAGER.run_sync("x", hooks=MANAGER_HOOKS)
    with pytest.raises(ss.UserError, match=r"Agent\('a'\) at .*: hooks: expected an instance"):
        ss.Agent("a", hooks=object())
