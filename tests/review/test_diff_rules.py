"""``diff_specs`` rule by rule, on workflows declared here."""

from __future__ import annotations

from typing import Any

import stepswitch as ss
from stepswitch.graph.spec import AgentSpec, WorkflowSpec
from stepswitch.review import diff_specs


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look an order up."""
    return str(order_id)


@ss.function_tool(name="find_order")
def lookup_renamed(order_id: int) -> str:
    """Look an order up."""
    return str(order_id)


def _verdict(ctx: ss.RunContext[None], agent: object, output: object) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)


strict_check = ss.output_guardrail(_verdict)
parallel_check = ss.input_guardrail(run_in_parallel=True)(_verdict)
blocking_check = ss.input_guardrail(_verdict)


def _spec(**agent: Any) -> WorkflowSpec:
    helper = ss.Agent("helper", "Help.")
    workflow = agent.pop("workflow", {})
    ask = agent.pop("ask", "Ask the helper")
    top = ss.Agent("top", agent.pop("instructions", "Top."),
                   tools=agent.pop("tools", [lookup, helper.as_tool("ask", ask)]),
                   handoffs=agent.pop("handoffs", []), **agent)
    return ss.Workflow(name="w", entry=top, agents=[top, helper], **workflow).to_spec()


def _found(base: WorkflowSpec, head: WorkflowSpec) -> set[tuple[str, str, str]]:
    return {(c.category, c.kind, c.path) for c in diff_specs(base, head).changes}


def test_another_function_under_a_new_name_is_a_removal_and_an_addition() -> None:
    kinds = {(c.category, c.kind)
             for c in diff_specs(_spec(tools=[lookup]), _spec(tools=[lookup_renamed])).changes}
    assert kinds == {("state", "removed"), ("structure", "added")}


def test_same_function_under_a_new_name_is_a_rename() -> None:
    base = _spec(tools=[ss.function_tool(name="old_name")(lookup.fn)])
    head = _spec(tools=[ss.function_tool(name="new_name")(lookup.fn)])
    changes = diff_specs(base, head).changes
    assert [(c.category, c.kind, c.path) for c in changes] == [
        ("state", "renamed", "agents.top.tools.new_name")
    ]
    assert changes[0].base is not None and changes[0].head is not None


def test_approval_weakened_per_call_and_strengthened() -> None:
    always = ss.function_tool(needs_approval=True)(lookup.fn)
    per_call = ss.function_tool(needs_approval=lambda ctx, args: True)(lookup.fn)
    assert _found(_spec(tools=[always]), _spec(tools=[per_call])) == {
        ("safety", "changed", "agents.top.tools.lookup.needs_approval")
    }
    assert _found(_spec(tools=[lookup]), _spec(tools=[always])) == {
        ("structure", "changed", "agents.top.tools.lookup.needs_approval")
    }


def test_guardrails_removed_parallel_or_added() -> None:
    base = _spec(input_guardrails=[blocking_check], output_guardrails=[strict_check])
    assert _found(base, _spec(input_guardrails=[blocking_check])) == {
        ("safety", "removed", "agents.top.output_guardrails._verdict")
    }
    assert _found(base, _spec(input_guardrails=[parallel_check],
                              output_guardrails=[strict_check])) == {
        ("safety", "changed", "agents.top.input_guardrails._verdict.run_in_parallel")
    }
    assert _found(_spec(), base) == {
        ("structure", "added", "agents.top.input_guardrails._verdict"),
        ("structure", "added", "agents.top.output_guardrails._verdict"),
    }


def test_agent_tool_limits_and_budgets() -> None:
    helper = ss.Agent("helper", "Help.")
    base = _spec(tools=[helper.as_tool("ask", "Ask", max_turns=3)],
                 handoffs=[ss.handoff("helper", max_uses=1)])
    head = _spec(tools=[helper.as_tool("ask", "Ask")], handoffs=["helper"])
    found = _found(base, head)
    assert ("safety", "changed", "agents.top.agent_tools.ask.max_turns") in found
    assert ("safety", "changed", "agents.top.handoffs.transfer_to_helper.max_uses") in found
    assert ("safety", "changed", "workflow.model_call_bound") in found


def test_model_facing_fields() -> None:
    base = _spec(model_settings=ss.ModelSettings(temperature=0.1))
    head = _spec(instructions="Top!", model="gpt-x",
                 model_settings=ss.ModelSettings(temperature=0.9), ask="Ask it")
    assert _found(base, head) == {
        ("model", "changed", "agents.top.instructions"),
        ("model", "changed", "agents.top.model"),
        ("model", "changed", "agents.top.model_settings"),
        ("model", "changed", "agents.top.agent_tools.ask.description"),
    }


def test_workflow_renamed_and_entry_moved() -> None:
    a, b = ss.Agent("a", "A.", handoffs=["b"]), ss.Agent("b", "B.")
    base = ss.Workflow(name="w", entry=a, agents=[a, b]).to_spec()
    head = ss.Workflow(name="w2", entry=b, agents=[a, b], max_turns=5).to_spec()
    assert _found(base, head) == {
        ("state", "renamed", "workflow.name"),
        ("structure", "changed", "workflow.entry"),
        ("structure", "changed", "workflow.max_turns"),
        ("structure", "changed", "workflow.model_call_bound"),
    }


def test_fields_of_a_newer_spec_are_compared_as_structure() -> None:
    class NewerAgentSpec(AgentSpec):
        flow_budget: int = 0

    base = _spec()
    agents = list(base.agents)
    newer = NewerAgentSpec(**agents[0].model_dump(by_alias=True), flow_budget=3)
    head = base.model_copy(update={"agents": (newer, *agents[1:])})
    assert _found(base, head) == {("structure", "changed", "agents.top.flow_budget")}


def test_moved_declarations_are_not_changes() -> None:
    base = _spec()
    moved = base.model_copy(update={
        "agents": tuple(a.model_copy(update={"location": a.location.model_copy(
            update={"line": a.location.line + 40})}) for a in base.agents),
    })
    assert diff_specs(base, moved).changes == ()


@ss.function_tool(needs_approval=True)
def refund(order_id: int) -> str:
    """Refund an order."""
    return str(order_id)


def _gated(*, with_refunder: bool, top_tools: tuple[Any, ...] = ()) -> WorkflowSpec:
    refunder = ss.Agent("refunder", "Refund.", tools=[refund])
    top = ss.Agent("top", "Top.", tools=list(top_tools),
                   handoffs=[refunder] if with_refunder else [])
    agents = [top, refunder] if with_refunder else [top]
    return ss.Workflow(name="w", entry=top, agents=agents).to_spec()


def test_removing_an_approval_gated_tool_or_its_agent_is_a_safety_change() -> None:
    base = _gated(with_refunder=True)
    gate = ("safety", "removed", "agents.refunder.tools.refund.needs_approval")
    # the agent goes, and with it the only gate on refund: the same function now runs
    # ungated on another agent
    ungated = ss.function_tool(name="refund")(refund.fn)
    found = _found(base, _gated(with_refunder=False, top_tools=(ungated,)))
    assert gate in found and ("state", "removed", "agents.refunder") in found
    # the gated tool alone removed from its agent
    spec = _spec(tools=[refund])
    found = _found(spec, _spec(tools=[]))
    assert ("safety", "removed", "agents.top.tools.refund.needs_approval") in found
    # a gated agent tool removed
    helper = ss.Agent("helper", "Help.")
    gated_ask = helper.as_tool("ask", "Ask", needs_approval=True)
    found = _found(_spec(tools=[gated_ask]), _spec(tools=[]))
    assert ("safety", "removed", "agents.top.agent_tools.ask.needs_approval") in found
    # the gate moved along with the tool: nothing weakened
    found = _found(base, _gated(with_refunder=False, top_tools=(refund,)))
    assert not {c for c in found if c[0] == "safety"}, found


def test_tool_guardrails_and_gates_are_safety_changes_and_hooks_structure() -> None:
    from tests.conformance import test_guards_gates_hooks as g

    def spec(*, guarded: bool, gated: bool, hooked: bool) -> Any:
        guards = [g.only_small_orders] if guarded else []

        def lookup(order_id: int) -> str:
            """Look an order up."""
            return str(order_id)

        tool = ss.function_tool(tool_input_guardrails=guards,
                                is_enabled=g.speaks_french if gated else True)(lookup)
        b = ss.Agent("b", "B.")
        a = ss.Agent("a", "A.", tools=[tool], hooks=g.MANAGER_HOOKS if hooked else None,
                     handoffs=[ss.handoff(b, is_enabled=g.is_admin if gated else True)])
        return ss.Workflow("w", entry=a, agents=[a, b]).to_spec()

    plain = spec(guarded=False, gated=False, hooked=False)
    changed = diff_specs(plain, spec(guarded=True, gated=True, hooked=True))
    by_path = {c.path: c.category for c in changed.changes}
    assert by_path["agents.a.tools.lookup.input_guardrails"] == "safety"
    assert by_path["agents.a.tools.lookup.is_enabled"] == "safety"
    assert by_path["agents.a.handoffs.transfer_to_b.is_enabled"] == "safety"
    assert by_path["agents.a.hooks"] == "structure"
    assert not diff_specs(plain, spec(guarded=False, gated=False, hooked=False)).changes


def test_a_change_that_makes_check_fail_is_a_safety_change() -> None:
    """A handoff back to triage closes a cycle without max_uses (SW201): the diff called
    it structure, "nothing weakened", while check failed on the head."""
    def versions(back: bool) -> WorkflowSpec:
        refunds = ss.Agent("refunds", "R.", handoffs=[ss.handoff("triage")] if back else [])
        triage = ss.Agent("triage", "T.", handoffs=[refunds])
        return ss.Workflow(name="w", entry=triage, agents=[triage, refunds]).to_spec()

    changes = diff_specs(versions(False), versions(True)).changes
    failing = [c for c in changes if c.message.startswith("check now fails")]
    assert [(c.category, c.message.split(" ")[3]) for c in failing] == [("safety", "SW201")]
    assert failing[0].head is not None and failing[0].head.line > 0
    assert not [c for c in diff_specs(versions(True), versions(True)).changes]


def test_a_gated_tool_renamed_with_its_function_names_the_gated_newcomer() -> None:
    """The function and its tool renamed together (def refund_order): the diff cannot
    prove it is the same action, so the removal stands, but it says the new tool is
    gated as strictly, rather than that no gate remains."""
    def version(fn: Any) -> WorkflowSpec:
        desk = ss.Agent("desk", "D.", tools=[ss.function_tool(needs_approval=True)(fn)])
        return ss.Workflow(name="w", entry=desk, agents=[desk]).to_spec()

    def issue_refund(order_id: int) -> str:
        """Refund an order."""
        return "ok"

    def refund_order(order_id: int) -> str:
        """Refund an order."""
        return "ok"

    changes = diff_specs(version(issue_refund), version(refund_order)).changes
    [gone] = [c for c in changes if c.path.endswith("needs_approval")]
    assert gone.category == "safety"
    assert gone.message.endswith("no gate of the same function remains; tool 'refund_order', "
                                 "new on agent 'desk', is gated as strictly: if it is this "
                                 "one renamed, its gate is kept)"), gone.message
