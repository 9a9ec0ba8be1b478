"""Never silent: every attribute of the installed SDK's objects has a row in
``stepswitch.interop.sdk_fields``, and each one set but not carried is SW610 at its site.

The first tests walk the installed SDK's own dataclass fields and signatures: an
attribute a later SDK release adds fails here until it is carried or reported."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import agents
import pytest
from agents.mcp import MCPServerSse, MCPServerStdio, MCPServerStreamableHttp

import stepswitch as ss
from stepswitch.interop import sdk_fields
from stepswitch.interop.sdk import SDKNotCarriedWarning
from stepswitch.interop.sdk_fields import TABLES, lost_settings

_DATACLASS_TABLES = ("Agent", "FunctionTool", "Handoff", "WebSearchTool", "FileSearchTool",
                     "CodeInterpreterTool", "ImageGenerationTool", "HostedMCPTool",
                     "ToolSearchTool", "ModelSettings")


def _params(fn: Any) -> set[str]:
    return {p for p in inspect.signature(fn).parameters if p not in ("self", "cls")}


def _assert_rows(table: str, installed: set[str]) -> None:
    rows = set(TABLES[table][1])
    missing = sorted(installed - rows)
    stale = sorted(rows - installed)
    assert not missing, (f"openai-agents {agents.__version__} has {table} attribute(s) "
                         f"{missing} that stepswitch neither carries nor reports: add a row to "
                         "stepswitch/interop/sdk_fields.py (and docs/migrating.md)")
    assert not stale, f"{table}: rows for attributes the SDK no longer has: {stale}"


@pytest.mark.parametrize("table", _DATACLASS_TABLES)
def test_every_dataclass_field_of_the_installed_sdk_has_a_row(table: str) -> None:
    cls = getattr(agents, table)
    assert dataclasses.is_dataclass(cls)
    _assert_rows(table, {f.name for f in dataclasses.fields(cls)})


@pytest.mark.parametrize("cls", [MCPServerStdio, MCPServerSse, MCPServerStreamableHttp])
def test_every_mcp_server_argument_has_a_row(cls: type) -> None:
    _assert_rows("MCPServer", _params(getattr(cls, "__init__")))  # noqa: B009


def test_every_as_tool_and_runner_argument_has_a_row() -> None:
    _assert_rows("Agent.as_tool", _params(agents.Agent.as_tool))
    for entry in (agents.Runner.run, agents.Runner.run_sync, agents.Runner.run_streamed):
        _assert_rows("Runner.run", _params(entry))


def test_every_row_says_how_and_statuses_are_closed() -> None:
    for table, (_, rows) in TABLES.items():
        for name, rule in rows.items():
            assert rule.status in ("carried", "warned", "internal"), (table, name)
            assert rule.how.strip(), (table, name)
            if rule.status != "carried":
                assert rule.lost is None, (table, name)


def test_an_attribute_of_a_newer_sdk_is_reported_not_dropped() -> None:
    found = list(lost_settings("FunctionTool", {"name": "x", "sandbox_policy": "strict"}))
    assert found == [("FunctionTool.sandbox_policy", "set to 'strict', an attribute of a newer "
                      "SDK that stepswitch does not know")]
    assert list(lost_settings("FunctionTool", {"defer_loading": False})) == []


def _line(path: str, text: str) -> int:
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(text)


def _notes(wf: ss.Workflow) -> dict[str, Any]:
    return {d.message.split(" sets ", 1)[1].split(" (", 1)[0]: d
            for d in wf.check().diagnostics if d.code == "SW610"}


@agents.function_tool
def plain(text: str) -> str:
    """Echo."""
    return text


def _formatter(ctx: Any, error: Exception) -> str:
    return "timed out"


@agents.function_tool(timeout=2.5, timeout_error_function=_formatter, defer_loading=True)
async def slow(text: str) -> str:
    """Slow."""
    return text


def test_a_plain_app_has_no_note_even_with_the_sdks_implicit_model_defaults() -> None:
    wf = ss.from_sdk(agents.Agent(name="a", tools=[plain], handoffs=[agents.Agent(name="b")]))
    assert _notes(wf) == {}


def test_settings_not_carried_are_located_warnings_naming_the_attribute() -> None:
    here = __file__
    spanish = agents.Agent(name="spanish")
    agent = agents.Agent(
        name="a",
        prompt={"id": "pmpt_1"},
        model_settings=agents.ModelSettings(temperature=0.1, truncation="auto"),
        tools=[slow, agents.ToolSearchTool(),
               spanish.as_tool(tool_name="es", tool_description="Spanish.",
                               run_config=agents.RunConfig(workflow_name="x")),
               agents.HostedMCPTool(tool_config={"type": "mcp", "server_label": "docs",
                                                 "server_url": "https://d.example/mcp",
                                                 "require_approval": "never",
                                                 "allowed_tools": ["read"]},
                                    on_approval_request=lambda request: {"approve": True})],
        handoffs=[agents.handoff(agents.Agent(name="b"), nest_handoff_history=True)],
        mcp_servers=[MCPServerStdio(name="files", params={"command": "true"},
                                    max_retry_attempts=2)],
    )
    with pytest.warns(SDKNotCarriedWarning):
        wf = ss.from_sdk(agent)
    notes = _notes(wf)
    assert set(notes) == {
        "Agent.prompt", "ModelSettings.truncation", "FunctionTool.timeout_error_function",
        "Agent.as_tool.run_config", "HostedMCPTool.on_approval_request",
        "Handoff.nest_handoff_history", "MCPServer.max_retry_attempts",
    }
    assert notes["Agent.prompt"].message.startswith("agent 'a' sets Agent.prompt")
    assert notes["FunctionTool.timeout_error_function"].location.line == _line(
        here, "async def slow(text")
    assert notes["FunctionTool.timeout_error_function"].location.path == "agents.a.tools.slow"
    assert all(d.location.file.endswith("test_sdk_fields.py") for d in notes.values())
    assert all(d.severity == "warning" for d in notes.values())
    # what is carried is carried: the timeout, the deferral, the temperature
    spec = wf.to_spec().agent("a")
    assert spec is not None
    tool = next(t for t in spec.tools if t.name == "slow")
    assert (tool.timeout, tool.defer_loading, tool.call_name) == (2.5, True, "slow.slow")
    assert spec.model_settings == {"temperature": 0.1}


def test_a_client_side_tool_search_and_a_custom_reasoning_are_reported() -> None:
    from openai.types.shared import Reasoning

    agent = agents.Agent(
        name="a", tools=[slow, agents.ToolSearchTool(execution="client")],
        model_settings=agents.ModelSettings(reasoning=Reasoning(effort="low", summary="auto")),
    )
    with pytest.warns(SDKNotCarriedWarning):
        notes = _notes(ss.from_sdk(agent))
    assert set(notes) == {"ToolSearchTool.execution", "ModelSettings.reasoning",
                          "FunctionTool.timeout_error_function"}
    assert "(summary: stepswitch sends the reasoning effort only)" in notes[
        "ModelSettings.reasoning"].message


def test_the_table_module_is_not_loaded_by_import_stepswitch() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import sys, stepswitch; "
                           "print('stepswitch.interop.sdk_fields' in sys.modules)"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    assert sdk_fields.TABLES  # and it loads on its own


def test_docs_migrating_holds_the_table_as_it_is() -> None:
    from tests._paths import ROOT

    page = (ROOT / "docs" / "migrating.md").read_text(encoding="utf-8")
    assert sdk_fields.markdown() in page, (
        "docs/migrating.md is stale: paste stepswitch.interop.sdk_fields.markdown() between "
        "its sdk_fields markers")
    # one table, between one pair of markers (a paste inside them once doubled them)
    assert page.count("<!-- sdk_fields: begin") == 1 and page.count("<!-- sdk_fields: end") == 1


def test_a_callable_mcp_tool_filter_is_named_where_the_server_stays_opaque() -> None:
    """migrating.md: SW601 warns and SW610 names the setting; for a callable tool_filter
    only SW601 came, so the user could not tell which setting made the server opaque."""
    from agents.mcp import create_static_tool_filter

    def dynamic(ctx: Any, tool: Any) -> bool:
        return True

    shell = MCPServerStdio(name="shell", params={"command": "sh-mcp"}, tool_filter=dynamic)
    docs = MCPServerStdio(name="docs", params={"command": "docs-mcp"},
                          tool_filter=create_static_tool_filter(allowed_tool_names=["search"]))
    with pytest.warns(SDKNotCarriedWarning):
        wf = ss.from_sdk(agents.Agent(name="research", mcp_servers=[shell, docs]))
    notes = _notes(wf)
    assert set(notes) == {"MCPServer.tool_filter"}
    assert notes["MCPServer.tool_filter"].message.startswith(
        "MCP server 'shell' of agent 'research' sets MCPServer.tool_filter (a function: "
        "stepswitch filters a server's tools by name only, so the server stays opaque (SW601))")
    codes = [d.code for d in wf.check().diagnostics]
    assert "SW601" in codes
