"""Declaring hosted tools, tool namespaces and deferred tools: located errors, the spec
they build, the diagram, and a generated runner that carries them."""

from __future__ import annotations

import pytest

import stepswitch as ss
from stepswitch.compiler.codegen import codegen, load_source, plan_module, render


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look up an order."""
    return f"order {order_id}"


@pytest.mark.parametrize(("make", "phrase"), [
    (lambda: ss.CodeInterpreterTool(tool_config={"type": "web_search"}),
     "tool_config: its type must be 'code_interpreter', got 'web_search'"),
    (lambda: ss.ImageGenerationTool(tool_config="big"),  # type: ignore[arg-type]
     "tool_config: expected a dict with type='image_generation', got str"),
    (lambda: ss.HostedMCPTool(tool_config={"type": "mcp"}),
     "tool_config: server_label: expected a non-empty string, got None"),
    (lambda: ss.FileSearchTool(vector_store_ids="vs_1"),  # type: ignore[arg-type]
     "vector_store_ids: expected a list of vector store ids"),
    (lambda: ss.WebSearchTool(search_context_size="huge"),  # type: ignore[arg-type]
     "search_context_size: expected 'low', 'medium' or 'high'"),
    (lambda: ss.ToolSearchTool(execution="client"), "execution='client' means your code"),
    (lambda: ss.tool_namespace(name="", description="d", tools=[lookup]),
     "name: expected a non-empty string"),
    (lambda: ss.tool_namespace(name="lookup", description="d", tools=[lookup]),
     "has the namespace's own name"),
    (lambda: ss.function_tool(defer_loading="yes")(lambda: None),  # type: ignore[call-overload]
     "defer_loading: expected True or False"),
])
def test_a_bad_declaration_is_one_located_line(make: object, phrase: str) -> None:
    with pytest.raises(ss.UserError) as caught:
        make()  # type: ignore[operator]
    text = str(caught.value)
    assert phrase in text and "test_hosted_dsl.py:" in text and "\n" not in text


def test_a_namespaced_tool_and_a_top_level_one_of_the_same_name_do_not_collide() -> None:
    crm = ss.tool_namespace(name="crm", description="Customer records.", tools=[lookup])
    assert lookup.namespace is None and crm[0].namespace == "crm"  # the original is kept
    wf = ss.Workflow("w", entry=ss.Agent("a", tools=[lookup, *crm, ss.ToolSearchTool()]))
    report = wf.check()
    assert report.ok and "SW302" not in report.codes()
    machine = wf.compile()
    assert [t.name for t in machine.ir.states[0].tools] == ["lookup", "crm.lookup"]


def test_the_tools_view_draws_hosted_tools_as_hosted() -> None:
    mcp = ss.HostedMCPTool(tool_config={"type": "mcp", "server_label": "docs",
                                        "server_url": "https://d.example/mcp",
                                        "require_approval": "never", "allowed_tools": ["a"]})
    wf = ss.Workflow("w", entry=ss.Agent("a", tools=[lookup, ss.WebSearchTool(), mcp]))
    assert "tool: web_search [hosted]" in wf.to_mermaid()
    tools_view = wf.to_mermaid(tools=True)
    assert "docs [hosted MCP]" in tools_view and "runs on OpenAI's side" in tools_view
    assert "web_search [hosted]" in wf.to_dot(tools=True)


def test_a_generated_runner_carries_hosted_and_deferred_tools() -> None:
    @ss.function_tool(defer_loading=True)
    def export_report(month: str) -> str:
        """Export."""
        return month

    wf = ss.Workflow("w", entry=ss.Agent("a", tools=[export_report, ss.ToolSearchTool(),
                                                    ss.WebSearchTool()]))
    machine = wf.compile()
    # export_report is local to this test, so no runner could import it: plan the module
    source = render(plan_module(machine.ir))
    assert "HostedToolIR(" in source and "defer_loading=True" in source
    compile(source, "runner.py", "exec")
    module_wf = ss.Workflow("w", entry=ss.Agent("a", tools=[lookup, ss.WebSearchTool()]))
    twin = load_source(codegen(module_wf.compile()), "hosted_twin").MACHINE
    assert twin.ir == module_wf.compile().ir


def test_a_policy_on_a_hosted_tool_is_undecided_not_a_missing_name() -> None:
    wf = ss.Workflow("w", entry=ss.Agent("a", tools=[lookup, ss.WebSearchTool()]),
                     policies=[ss.max_calls("web_search", 1)])
    codes = {d.code: d for d in wf.check().diagnostics}
    assert "SW807" not in codes
    assert "'web_search' is a hosted tool of agent 'a'" in codes["SW806"].message
    assert "SW611" in codes


def test_forbid_is_proved_over_a_hosted_tool_the_entry_offers() -> None:
    wf = ss.Workflow("w", entry=ss.Agent("a", tools=[lookup, ss.WebSearchTool()]),
                     policies=[ss.forbid("web_search")])
    found = [d for d in wf.check().diagnostics if d.code.startswith("SW8")]
    assert [d.code for d in found] == ["SW803"]
    assert found[0].trace[-1].message == "calls web_search (hosted: WebSearchTool 'web_search')"
