"""Hosted tools, tool namespaces and deferred loading, as the Agents SDK runs them, under
all three surfaces (and, through the differential plugin, on the generated runner):

- a hosted tool's call comes back done, is kept and sent back, and a turn in which a
  hosted tool ran and nothing was said runs again (the SDK's rule);
- a namespaced tool is called as ``namespace.tool``; a deferred tool only once a tool
  search loaded it (``namespace == name`` on the wire): a bare call of it is a call of
  an unknown tool, which the SDK refuses too."""

from __future__ import annotations

import pytest

import stepswitch as ss
from stepswitch.runtime.model import OutputResponsesItem
from stepswitch.testing import ScriptStep, assistant_message, function_call
from tests.conformance.harness import run_all
from tests.conformance.kit import compile_agents

SEARCH_CALL = OutputResponsesItem({"type": "web_search_call", "id": "ws_1",
                                   "status": "completed",
                                   "action": {"type": "search", "query": "oslo weather"}})
LOADED = [
    OutputResponsesItem({"type": "tool_search_call", "id": "ts_1", "call_id": "ts_1",
                         "status": "completed", "arguments": {"query": "report"},
                         "execution": "server"}),
    OutputResponsesItem({"type": "tool_search_output", "id": "tso_1", "call_id": "ts_1",
                         "status": "completed", "execution": "server", "tools": []}),
]


@ss.function_tool(defer_loading=True)
def export_report(month: str) -> str:
    """Export a monthly report."""
    return f"report for {month}"


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look up an order."""
    return f"order {order_id} shipped"


CRM = ss.tool_namespace(name="crm", description="Customer records.", tools=[lookup])


def _machine() -> ss.StateMachine:
    agent = ss.Agent("analyst", tools=[export_report, *CRM, ss.ToolSearchTool(),
                                       ss.WebSearchTool()])
    return compile_agents(agent)


def test_a_hosted_call_with_a_message_ends_the_turn_and_is_kept() -> None:
    out = run_all(_machine(), "weather?", [[SEARCH_CALL, assistant_message("Sunny.")]])
    assert out.result.final_output == "Sunny."
    kinds = [i.type for i in out.result.new_items]
    assert kinds == ["responses_item", "message_output_item"]
    assert out.result.new_items[0].item["type"] == "web_search_call"
    offered = out.model.calls[0].tools
    assert offered == ("export_report.export_report", "crm.lookup", "tool_search", "web_search")


def test_a_hosted_call_without_a_message_runs_again_and_is_sent_back() -> None:
    out = run_all(_machine(), "weather?", [[SEARCH_CALL], [assistant_message("Sunny.")]])
    assert len(out.model.calls) == 2
    sent = out.model.calls[1].input
    assert any(getattr(i, "item", {}).get("type") == "web_search_call" for i in sent)
    assert out.result.final_output == "Sunny."


def test_a_loaded_deferred_tool_and_a_namespaced_tool_run() -> None:
    script: list[ScriptStep] = [
        [*LOADED, function_call("export_report", {"month": "may"}, "c1",
                                namespace="export_report"),
         function_call("lookup", {"order_id": 7}, "c2", namespace="crm")],
        [assistant_message("Done.")],
    ]
    out = run_all(_machine(), "report", script)
    outputs = [i.output for i in out.result.new_items if i.type == "tool_call_output_item"]
    assert outputs == ["report for may", "order 7 shipped"]
    names = [i.name for i in out.result.new_items if i.type == "tool_call_item"]
    assert names == ["export_report.export_report", "crm.lookup"]


@pytest.mark.parametrize("name", ["export_report", "lookup"])
def test_a_deferred_tool_never_loaded_or_a_bare_namespaced_name_is_unknown(name: str) -> None:
    out = run_all(_machine(), "report", [[function_call(name, {}, "c1")]])
    assert isinstance(out.error, ss.ModelBehaviorError)
    assert str(out.error) == f"Tool {name} not found in agent analyst"
