"""Hosted tools, namespaces and deferred tools on the wire: the real ``openai`` client over
loopback HTTP (``OpenAIServer``). What stepswitch sends is what the Agents SDK's own
``OpenAIResponsesModel`` sends for the same app, tool for tool."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import agents
import pytest

import stepswitch as ss
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.script import call, message
from stepswitch.runtime.model import OutputResponsesItem

MCP = {"type": "mcp", "server_label": "docs", "server_url": "https://docs.example/mcp",
       "require_approval": "never", "allowed_tools": ["read_page"]}
CODE = {"type": "code_interpreter", "container": {"type": "auto"}}
IMAGE = {"type": "image_generation", "quality": "low"}


def _sdk_app() -> agents.Agent:
    @agents.function_tool
    def lookup(order_id: int) -> str:
        """Look up an order."""
        return f"order {order_id}"

    @agents.function_tool(defer_loading=True)
    def export_report(month: str) -> str:
        """Export a report."""
        return month

    crm = agents.tool_namespace(name="crm", description="Customer records.", tools=[lookup])
    billing = agents.Agent(name="billing")
    return agents.Agent(
        name="researcher", instructions="Research.", model_settings=agents.ModelSettings(
            temperature=0.0),
        tools=[*crm, export_report, agents.ToolSearchTool(),
               agents.WebSearchTool(search_context_size="low", search_content_types=["text",
                                                                                       "image"]),
               agents.FileSearchTool(vector_store_ids=["vs_1"], max_num_results=3,
                                     include_search_results=True),
               agents.CodeInterpreterTool(tool_config=CODE),  # type: ignore[arg-type]
               agents.ImageGenerationTool(tool_config=IMAGE),  # type: ignore[arg-type]
               agents.HostedMCPTool(tool_config=MCP)],  # type: ignore[arg-type]
        handoffs=[billing],
    )


def _key(tool: dict[str, Any]) -> str:
    return json.dumps(tool, sort_keys=True)


def _sdk_request(app: agents.Agent) -> dict[str, Any]:
    with OpenAIServer([[message("hi")]]) as server:
        model = agents.OpenAIResponsesModel(model="gpt-4.1", openai_client=server.client())
        config = agents.RunConfig(model=model, tracing_disabled=True)
        asyncio.run(agents.Runner.run(app, "hello", run_config=config))
        body: dict[str, Any] = server.model_requests()[0].body
        return body


def _our_request(wf: ss.Workflow) -> dict[str, Any]:
    with OpenAIServer([[message("hi")]]) as server:
        wf.compile().run_sync("hello", model=OpenAIResponsesModel("gpt-4.1", server.client()))
        body: dict[str, Any] = server.model_requests()[0].body
        return body


def test_the_tools_sent_are_the_sdks_tool_for_tool() -> None:
    app = _sdk_app()
    theirs = _sdk_request(app)
    ours = _our_request(ss.from_sdk(app))
    assert sorted(map(_key, ours["tools"])) == sorted(map(_key, theirs["tools"]))
    assert sorted(ours["include"]) == sorted(theirs["include"]) == [
        "file_search_call.results", "web_search_call.results"]
    namespace = next(t for t in ours["tools"] if t["type"] == "namespace")
    assert [t["name"] for t in namespace["tools"]] == ["lookup"]


def test_the_dsl_declares_the_same_hosted_tools() -> None:
    @ss.function_tool
    def lookup(order_id: int) -> str:
        """Look up an order."""
        return f"order {order_id}"

    agent = ss.Agent("researcher", tools=[
        ss.WebSearchTool(search_context_size="low"), ss.HostedMCPTool(tool_config=MCP),
        ss.CodeInterpreterTool(tool_config=CODE), ss.ImageGenerationTool(tool_config=IMAGE),
        ss.FileSearchTool(vector_store_ids=["vs_1"]), lookup])
    body = _our_request(ss.Workflow("w", entry=agent))
    kinds = [t["type"] for t in body["tools"]]
    assert kinds == ["function", "web_search", "mcp", "code_interpreter", "image_generation",
                     "file_search"]
    assert body["tools"][2] == MCP and "include" not in body


def test_a_namespaced_call_and_a_hosted_item_round_trip_over_http() -> None:
    seen: list[int] = []

    @ss.function_tool
    def lookup(order_id: int) -> str:
        """Look up an order."""
        seen.append(order_id)
        return f"order {order_id}"

    tools = ss.tool_namespace(name="crm", description="Customer records.", tools=[lookup])
    agent = ss.Agent("clerk", tools=[*tools, ss.ToolSearchTool(), ss.WebSearchTool()])
    search = OutputResponsesItem({"type": "web_search_call", "id": "ws_1",
                                  "status": "completed",
                                  "action": {"type": "search", "query": "order 7"}})
    script = [[search, call("crm.lookup", {"order_id": 7}, call_id="c1")], [message("Shipped.")]]
    for surface in ("run_sync", "run_streamed"):
        with OpenAIServer(script) as server:
            machine = ss.Workflow("w", entry=agent).compile()
            model = OpenAIResponsesModel("gpt-4.1", server.client())
            if surface == "run_sync":
                result: Any = machine.run_sync("where is 7?", model=model)
            else:
                result = machine.run_streamed("where is 7?", model=model)

                async def drain(streamed: Any = result) -> None:
                    async for _ in streamed.stream_events():
                        pass

                asyncio.run(drain())
            second = server.model_requests()[1].body["input"]
        assert result.final_output == "Shipped."
        assert [i.name for i in result.new_items if i.type == "tool_call_item"] == ["crm.lookup"]
        sent = [i for i in second if i.get("type") in ("function_call", "web_search_call")]
        assert [i["type"] for i in sent] == ["web_search_call", "function_call"]
        assert (sent[1]["name"], sent[1]["namespace"]) == ("lookup", "crm")
    assert seen == [7, 7]


def test_a_hosted_mcp_approval_request_stops_the_run_with_one_clear_line() -> None:
    agent = ss.Agent("clerk", tools=[ss.HostedMCPTool(tool_config={**MCP,
                                                                  "require_approval": "always"})])
    ask = OutputResponsesItem({"type": "mcp_approval_request", "id": "mcpr_1",
                               "server_label": "docs", "name": "read_page", "arguments": "{}"})
    with OpenAIServer([[ask]]) as server, pytest.raises(ss.ModelBehaviorError) as caught:
        ss.Workflow("w", entry=agent).compile().run_sync(
            "hi", model=OpenAIResponsesModel("gpt-4.1", server.client()))
    text = str(caught.value)
    assert "hosted MCP server 'docs' asks for approval to call 'read_page'" in text
    assert "\n" not in text and caught.value.run_data is not None


def test_chat_completions_refuses_hosted_and_deferred_tools() -> None:
    @ss.function_tool(defer_loading=True)
    def export_report(month: str) -> str:
        """Export a report."""
        return month

    cases: list[tuple[list[Any], str]] = [
        ([ss.WebSearchTool()], "the hosted tool 'web_search'"),
        ([export_report, ss.ToolSearchTool()], "the deferred tool 'export_report'"),
    ]
    for tools, what in cases:  # each refused before anything is sent
        with OpenAIServer([[message("hi")]]) as server, pytest.raises(ss.UserError) as caught:
            ss.Workflow("w", entry=ss.Agent("a", tools=tools)).compile().run_sync(
                "hi", model=OpenAIChatCompletionsModel("gpt-4.1", server.client()))
        assert f"agent 'a': {what}" in str(caught.value)
        assert "needs the Responses API" in str(caught.value)
        assert server.model_requests() == []  # refused before anything was sent
