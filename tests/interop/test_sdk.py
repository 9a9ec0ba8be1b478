"""ss.from_sdk: an OpenAI Agents SDK app read into a workflow, faithfully and located."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import agents
import pytest
from openai.types.shared import Reasoning
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.interop import _sdk_private
from stepswitch.interop.sdk import sdk_roots
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests.interop.sdk_apps import broken, hosted, support

APPS = Path(__file__).parent / "sdk_apps"


def _line(path: Path, text: str) -> int:
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(text)


def _spec(wf: ss.Workflow, name: str) -> ss.graph.spec.AgentSpec:
    found = wf.to_spec().agent(name)
    assert found is not None
    return found


def test_agents_tools_and_edges_are_read() -> None:
    wf = ss.from_sdk(support.triage_agent)
    assert wf.name == "Triage" and wf.max_turns == 10
    assert {a.name for a in wf.agents} == {"Triage", "Refund Agent", "Order Expert"}
    triage = _spec(wf, "Triage")
    assert [t.name for t in triage.tools] == ["lookup_order", "faq"]
    assert triage.tools[0].parameters == support.lookup_order.params_json_schema
    assert triage.tools[0].description == "Look up an order by id."
    assert triage.tools[1].description == "Answer a common question."
    (edge,) = triage.handoffs
    assert (edge.target, edge.tool_name) == ("Refund Agent", "transfer_to_refund_agent")
    assert edge.description.startswith("Handoff to the Refund Agent agent")
    assert edge.input_type is not None and edge.input_type.display == "Reason"
    assert edge.on_handoff is not None and edge.on_handoff.path.endswith(":log_reason")
    (tool,) = triage.agent_tools
    assert (tool.target, tool.tool_name, tool.description, tool.max_turns) == (
        "Order Expert", "ask_expert", "Ask the order expert.", 4)
    assert [g.name for g in triage.input_guardrails] == ["polite"]
    assert triage.input_guardrails[0].run_in_parallel is True  # the SDK's default, kept


def test_behaviour_settings_and_output_types_are_read() -> None:
    wf = ss.from_sdk(support.refund_agent)
    refund = _spec(wf, "Refund Agent")
    assert refund.tool_use_behavior.kind == "stop_at_tools"
    assert refund.tool_use_behavior.tool_names == ("process_refund",)
    assert refund.tools[0].needs_approval == "always"
    assert refund.tools[0].context_type is not None
    assert refund.tools[0].context_type.display == "Account"
    assert [g.name for g in refund.output_guardrails] == ["short"]
    assert refund.handoff_description == "Handles refunds."
    judge = _spec(ss.from_sdk(support.judge), "Judge")
    assert judge.output_type is not None and judge.output_type.ref.display == "Verdict"


def test_model_settings_and_output_schema_wrappers() -> None:
    class Out(BaseModel):
        n: int

    agent = agents.Agent(
        name="tuned", model="gpt-4.1",
        model_settings=agents.ModelSettings(temperature=0.3, tool_choice="required",
                                            reasoning=Reasoning(effort="low")),
        output_type=agents.AgentOutputSchema(Out, strict_json_schema=True),
        tool_use_behavior="stop_on_first_tool",
    )
    spec = _spec(ss.from_sdk(agent), "tuned")
    assert spec.model == "gpt-4.1"
    assert spec.model_settings == {"temperature": 0.3, "tool_choice": "required",
                                   "reasoning_effort": "low"}
    assert spec.output_type is not None and spec.output_type.ref.display == "Out"
    assert spec.tool_use_behavior.kind == "stop_on_first_tool"


def test_declaration_sites_point_at_the_sdk_code() -> None:
    wf = ss.from_sdk(support.triage_agent)
    src = APPS / "support.py"
    sites = {a.name: (Path(a.site.file).name, a.site.line) for a in wf.agents}
    assert sites == {
        "Triage": ("support.py", _line(src, "triage_agent = Agent")),
        "Refund Agent": ("support.py", _line(src, "refund_agent = Agent")),
        "Order Expert": ("support.py", _line(src, "expert = Agent(")),
    }
    tool = _spec(wf, "Triage").tools[0]
    assert (tool.location.file.endswith("support.py"),
            tool.location.line) == (True, _line(src, "def lookup_order"))


def test_diagnostics_are_located_in_the_sdk_file() -> None:
    report = ss.from_sdk(hosted.researcher).check()
    (mcp,) = [d for d in report.diagnostics if d.code == "SW601"]
    assert mcp.message.startswith("agent 'Researcher' offers 'mcp_files' ")
    assert mcp.severity == "warning" and mcp.location.file.endswith("hosted.py")
    # the hosted tool is carried: an effect the analyzer cannot see inside, not opaque
    (search,) = [d for d in report.diagnostics if d.code == "SW611"]
    assert "'web_search'" in search.message and search.location.file.endswith("hosted.py")
    # and the setting that keeps the server opaque is named where it is set
    (why,) = [d for d in report.diagnostics if d.code == "SW610"]
    assert "MCPServer.use_structured_content" in why.message
    # SW601 says it once: no SW711 about stepswitch's own stand-in function
    assert not [d for d in report.diagnostics if d.code == "SW711"]


def test_policies_reach_an_sdk_apps_hosted_tool() -> None:
    # an SDK TARGET has no Workflow(policies=...): [tool.stepswitch] policies and
    # check(policies=...) prove theirs over it; the hosted tool is named by its name
    wf = ss.from_sdk(hosted.researcher)
    report = wf.check(select=["SW8"], policies=[ss.forbid("web_search"),
                                                ss.require_approval("summarize")])
    forbid, approval = sorted(report.diagnostics, key=lambda d: d.code, reverse=True)
    assert forbid.code == "SW803"
    assert [s.message for s in forbid.trace] == [
        "agent 'Researcher'", "calls web_search (hosted: WebSearchTool 'web_search')"]
    assert approval.code == "SW801" and "summarize runs without a human's approval" in (
        approval.message)


def test_compile_says_why_an_opaque_tool_cannot_go_in_a_runner() -> None:
    from stepswitch.compiler.codegen import codegen

    with pytest.raises(ss.UserError) as caught:
        codegen(ss.from_sdk(hosted.researcher).compile())
    text = str(caught.value)
    assert ("it stands for MCP server 'files' with use_structured_content set (stepswitch "
            "does not carry it), which stepswitch cannot run (SW601)") in text
    assert "move it to module level" not in text


def test_opaque_tools_are_offered_and_a_call_is_an_error_output() -> None:
    machine = ss.from_sdk(hosted.researcher).compile()
    model = ScriptedModel([[function_call("mcp_files", {})], [assistant_message("done")]])
    result = machine.run_sync("hi", model=model)
    assert set(model.calls[0].tools) == {"web_search", "summarize", "mcp_files"}
    out = result.new_items[1]
    assert out.type == "tool_call_output_item" and out.is_error
    assert result.final_output == "done"


def test_input_guardrail_on_a_handoff_target_warns() -> None:
    wf = ss.from_sdk(agents.Agent(name="front", handoffs=[agents.Agent(
        name="back", input_guardrails=support.triage_agent.input_guardrails)]))
    (warning,) = [d for d in wf.check().diagnostics if d.code == "SW602"]
    assert "'back'" in warning.message and "'polite'" in warning.message


def test_the_converted_app_runs_the_users_functions() -> None:
    support.HANDED_OFF.clear()
    machine = ss.from_sdk(support.triage_agent, context_type=support.Account).compile()
    model = ScriptedModel([
        [function_call("lookup_order", {"order_id": 7})],
        [function_call("transfer_to_refund_agent", {"reason": "broken"})],
        [function_call("process_refund", {"order_id": 7})],
    ])
    paused = machine.run_sync("refund 7", model=model, context=support.Account("ada"))
    assert [i.output for i in paused.new_items if i.type == "tool_call_output_item"] == [
        "order 7 ok"]
    assert support.HANDED_OFF == ["broken"] and paused.interruptions
    state = paused.to_state()
    state.approve(paused.interruptions[0])
    done = machine.run_sync(state, model=ScriptedModel([]), context=support.Account("ada"))
    assert done.final_output == "refunded 7 for ada"  # StopAtTools, the tool's value
    assert [g.output_info for g in done.output_guardrail_results] == [18]


def test_not_an_sdk_agent_is_one_line_naming_the_call() -> None:
    with pytest.raises(ss.UserError) as caught:
        ss.from_sdk(ss.Agent("ours"))
    message = str(caught.value)
    assert "\n" not in message and "test_sdk.py:" in message
    assert "expected an OpenAI Agents SDK agent (agents.Agent), got Agent" in message


def test_unsupported_sdk_version_names_the_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sdk_private, "installed_version", lambda: "0.30.1")
    monkeypatch.setattr(_sdk_private, "_checked", None)
    with pytest.raises(ss.UserError, match=r"openai-agents 0.30.1 is installed; stepswitch "
                                           r"reads openai-agents>=0.24,<0.26"):
        ss.from_sdk(support.triage_agent)


def test_cyclic_as_tool_is_one_line_with_the_cycle_and_line() -> None:
    with pytest.raises(ss.UserError) as caught:
        ss.from_sdk(broken.ping)
    message = str(caught.value)
    line = _line(APPS / "broken.py", "ping = Agent")
    assert message.startswith(f"agent 'Ping' at tests/interop/sdk_apps/broken.py:{line}:")
    assert "(Ping -> Pong -> Ping)" in message and "\n" not in message


def test_a_tool_that_raises_when_read_is_one_line() -> None:
    with pytest.raises(ss.UserError) as caught:
        ss.from_sdk(broken.fragile)
    line = _line(APPS / "broken.py", "fragile = Agent")
    assert str(caught.value) == (
        f"agent 'Fragile' at tests/interop/sdk_apps/broken.py:{line}: tool 'exploding' "
        "cannot be read: RuntimeError: inspection failed")


def test_a_hand_built_function_tool_says_what_to_write() -> None:
    with pytest.raises(ss.UserError, match=r"tool 'hand_made' has no Python function .*"
                                           r"declare it with @function_tool"):
        ss.from_sdk(broken.handmade)


def test_roots_are_the_agents_no_other_agent_reaches() -> None:
    roots = [name for name, _ in sdk_roots(vars(support))]
    assert roots == ["triage_agent", "judge"]


def test_import_stepswitch_loads_neither_the_reader_nor_the_sdk() -> None:
    code = ("import sys, stepswitch; "
            "print(any(m == 'agents' or m.startswith(('agents.', 'stepswitch.interop')) "
            "for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_a_handoff_cycle_needs_a_budget_and_handoff_max_uses_gives_one() -> None:
    triage = agents.Agent(name="triage")
    seats = agents.Agent(name="seats", handoffs=[triage])
    triage.handoffs.append(agents.handoff(seats))
    assert "SW201" in ss.from_sdk(triage).check().codes()
    budgeted = ss.from_sdk(triage, handoff_max_uses=2)
    report = budgeted.check()
    assert "SW201" not in report.codes() and report.ok
    spec = budgeted.to_spec()
    assert {h.max_uses for a in spec.agents for h in a.handoffs} == {2}
    with pytest.raises(ss.UserError, match="handoff_max_uses: expected a positive int"):
        ss.from_sdk(triage, handoff_max_uses=0)


def test_tool_guardrails_and_a_callable_is_enabled_are_carried_without_warnings() -> None:
    import warnings

    from stepswitch.interop.sdk import SDKNotCarriedWarning
    from tests.interop.sdk_apps import not_carried

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wf = ss.from_sdk(not_carried.clerk)
    assert not [w for w in caught if w.category is SDKNotCarriedWarning]
    tools = {t.name: t for t in wf.to_spec().agents[0].tools}
    assert [g.name for g in tools["lookup"].input_guardrails] == ["no_secrets"]
    assert [g.name for g in tools["lookup"].output_guardrails] == ["no_leaks"]
    gate = tools["refund"].is_enabled
    assert not isinstance(gate, bool) and gate.path.endswith(":only_on_weekdays")
    assert tools["plain"].is_enabled is True


def test_check_says_a_setting_not_carried_once_as_sw610_not_also_as_a_warning(
    tmp_path: Path,
) -> None:
    """A module that calls from_sdk at import warns of each setting it cannot carry (for
    callers who never run check); `stepswitch check` reports each as SW610, so the raw
    warning on stderr only said it twice."""
    from tests.cli.conftest import run_process

    (tmp_path / "app.py").write_text(
        "import stepswitch as ss\n"
        "from tests.interop.sdk_apps import hosted\n"
        "wf = ss.from_sdk(hosted.researcher)\n")
    done = run_process("check", "--no-cache", "app.py:wf", cwd=tmp_path)
    assert "SW610" in done.stdout, done.stdout + done.stderr
    assert "is not carried out by stepswitch" not in done.stderr, done.stderr
