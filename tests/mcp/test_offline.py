"""What ``check`` and ``diff`` make of a lock, with no server at all: the lock is written
here (``locked_tool``), the servers' commands do not exist."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.cli.main import main
from stepswitch.mcp.lock import LOCK_NAME, locked_tool, write_lock
from stepswitch.review.diff import diff_specs
from stepswitch.targets.load import load_targets

_n = itertools.count()


def _tool(name: str, annotations: dict[str, Any] | None, param: str = "path") -> Any:
    schema = {"type": "object", "properties": {param: {"type": "string"}}, "required": [param]}
    return locked_tool(name, f"{name} it.", schema, None, annotations)


def _lock(folder: Path, **servers: list[Any]) -> None:
    write_lock(folder / LOCK_NAME, {
        name: {"transport": "stdio", "tools": {t["name"]: t for t in tools}}
        for name, tools in servers.items()
    })


def _check(folder: Path, body: str) -> ss.Report:
    return _workflow(folder, body).check()


def _workflow(folder: Path, body: str) -> ss.Workflow:
    path = folder / f"mcp_offline_{os.getpid()}_{next(_n)}.py"
    path.write_text("import stepswitch as ss\n" + body, encoding="utf-8")
    return load_targets([str(path)])[0].workflow


def _messages(report: ss.Report, code: str) -> list[str]:
    return sorted(d.message for d in report.diagnostics if d.code == code)


def test_names_equal_once_normalised_across_servers_function_tools_and_handoffs(
    tmp_path: Path,
) -> None:
    _lock(tmp_path, one=[_tool("search-a", {"readOnlyHint": True})],
          two=[_tool("search_a", {"readOnlyHint": True}),
               _tool("transfer-to-billing", {"readOnlyHint": True}),
               _tool("look_up", {"readOnlyHint": True})])
    report = _check(tmp_path, (
        "@ss.function_tool(name='look-up')\n"
        "def look(q: str) -> str:\n    '''Look.'''\n    return q\n"
        "billing = ss.Agent('billing', 'Bill.')\n"
        "one = ss.MCPServerStdio('one', '/nonexistent')\n"
        "two = ss.MCPServerStdio('two', '/nonexistent')\n"
        "helper = ss.Agent('helper', 'Help.', tools=[look], mcp_servers=[one, two],\n"
        "                  handoffs=[billing])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n"))
    found = _messages(report, "SW904")
    assert len(found) == 3, found
    assert any("'search-a' and 'search_a'" in m for m in found)  # two servers
    assert any("'look-up' and 'look_up'" in m for m in found)  # a function tool
    assert any("'transfer-to-billing' and 'transfer_to_billing'" in m
               or "'transfer_to_billing' and 'transfer-to-billing'" in m
               for m in found)  # a handoff
    assert not report.ok


def test_one_name_on_two_servers_is_a_collision(tmp_path: Path) -> None:
    _lock(tmp_path, one=[_tool("read_file", {"readOnlyHint": True})],
          two=[_tool("read_file", {"readOnlyHint": True})])
    report = _check(tmp_path, (
        "one = ss.MCPServerStdio('one', '/nonexistent')\n"
        "two = ss.MCPServerStdio('two', '/nonexistent')\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[one, two])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n"))
    (clash,) = _messages(report, "SW302")
    assert clash == (
        "agent 'helper' offers two tools named 'read_file': tool 'read_file' of MCP server "
        "'one' (agents.helper.tools[0]) and tool 'read_file' of MCP server 'two'; the model "
        "cannot tell them apart")


def test_a_schema_strict_mode_rejects_names_the_server_and_suggests_its_filter(
    tmp_path: Path,
) -> None:
    """SW402 said "use a pydantic model", which a user cannot do to someone else's server."""
    schema = {"type": "object", "properties": {
        "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}
    _lock(tmp_path, tags=[locked_tool("tag", "Tag it.", schema, None, {"readOnlyHint": True})])
    report = _check(tmp_path, (
        "tags = ss.MCPServerStdio('tags', '/nonexistent')\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[tags])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n"))
    found = [d for d in report.diagnostics if d.code == "SW402"]
    assert found, report.codes()
    assert found[0].message.startswith("parameters of tool 'tag' of MCP server 'tags': ")
    assert found[0].help is not None and "pydantic" not in found[0].help
    assert "tool_filter ({'blocked_tool_names': ['tag']})" in found[0].help


def test_a_tool_that_may_change_things_needs_an_approval(tmp_path: Path) -> None:
    _lock(tmp_path, files=[
        _tool("wipe", {"destructiveHint": True}),
        _tool("touch", {"destructiveHint": False}),  # changes things, not destructively
        _tool("poke", None),  # nothing said: MCP assumes destructive
        _tool("peek", {"readOnlyHint": True}),
        _tool("gated", {"destructiveHint": True}),
        _tool("hidden", {"destructiveHint": True}),
    ])
    report = _check(tmp_path, (
        "files = ss.MCPServerStdio('files', '/nonexistent', require_approval={'gated': True},\n"
        "                          tool_filter={'blocked_tool_names': ['hidden']})\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[files])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n"))
    what = "MCP server 'files' of agent 'helper': tool"
    assert _messages(report, "SW903") == [
        f"{what} 'poke' is not annotated read-only (MCP then assumes it may be destructive) "
        "and runs with no approval",
        f"{what} 'touch' is not annotated read-only and runs with no approval",
        f"{what} 'wipe' is annotated destructive and runs with no approval",
    ]
    (sw903,) = {d.location.line for d in report.diagnostics if d.code == "SW903"}
    assert sw903 == 2  # the server's declaration


def test_diff_reads_schema_as_model_and_approval_and_annotations_as_safety(
    tmp_path: Path,
) -> None:
    body = ("files = ss.MCPServerStdio('files', '/nonexistent', require_approval={})\n"
            "helper = ss.Agent('helper', 'Help.', mcp_servers=[files])\n"
            "workflow = ss.Workflow(name='w', entry=helper)\n")
    _lock(tmp_path, files=[_tool("wipe", {"destructiveHint": True}),
                           _tool("peek", {"readOnlyHint": True})])
    gated = _workflow(tmp_path, body.replace("{}", "{'wipe': True}")).graph().spec
    _lock(tmp_path, files=[_tool("wipe", {"readOnlyHint": True}),
                           _tool("peek", {"readOnlyHint": True}, param="name")])
    open_ = _workflow(tmp_path, body).graph().spec
    found = {(c.category, c.path) for c in diff_specs(gated, open_).changes}
    assert ("model", "agents.helper.tools.peek.parameters") in found
    assert ("safety", "agents.helper.tools.wipe.needs_approval") in found
    assert ("safety", "agents.helper.mcp_servers.files.tools.wipe.annotations") in found
    assert not any(path.endswith("mcp_server") for _, path in found)


def test_diff_names_a_tool_that_moves_to_another_server(tmp_path: Path) -> None:
    body = ("files = ss.MCPServerStdio('NAME', '/nonexistent')\n"
            "helper = ss.Agent('helper', 'Help.', mcp_servers=[files])\n"
            "workflow = ss.Workflow(name='w', entry=helper)\n")
    _lock(tmp_path, a=[_tool("peek", {"readOnlyHint": True})],
          b=[_tool("peek", {"readOnlyHint": True})])
    before = _workflow(tmp_path, body.replace("NAME", "a")).graph().spec
    after = _workflow(tmp_path, body.replace("NAME", "b")).graph().spec
    found = {c.path: (c.category, c.message) for c in diff_specs(before, after).changes}
    assert found["agents.helper.tools.peek.mcp_server"] == (
        "structure", "tool 'peek' of agent 'helper' is a tool of MCP server 'a' → a tool of "
        "MCP server 'b'")


def test_policies_and_pause_points_count_mcp_tools(tmp_path: Path) -> None:
    _lock(tmp_path, files=[_tool("wipe", {"destructiveHint": True})])
    body = ("files = ss.MCPServerStdio('files', '/nonexistent'{approval})\n"
            "helper = ss.Agent('helper', 'Help.', mcp_servers=[files])\n"
            "workflow = ss.Workflow(name='w', entry=helper,\n"
            "                       policies=[ss.require_approval('wipe')])\n")
    failing = _check(tmp_path, body.format(approval=""))
    (sw801,) = _messages(failing, "SW801")
    assert "require_approval('wipe') fails" in sw801 and "calls wipe" in sw801
    held = _check(tmp_path, body.format(approval=", require_approval='always'"))
    assert "SW801" not in held.codes()
    (pauses,) = _messages(held, "SW501")
    assert "wipe" in pauses


def test_a_run_refuses_a_server_with_no_lock_entry_before_calling_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no lock a run offered the model none of the server's tools, said nothing, and
    a call of one failed "Tool read_file not found" in a run that exited 0."""
    wf = _workflow(tmp_path, (
        "files = ss.MCPServerStdio('files', '/nonexistent')\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[files])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n"))
    assert "SW901" in wf.check().codes()  # check warns; a run refuses
    with pytest.raises(ss.UserError) as caught:
        wf.compile()
    file = wf.graph().agent("helper").mcp_servers[0].location.file
    assert str(caught.value) == (
        f"MCP server 'files' (declared at {file}:2) has no entry in stepswitch.mcp.lock: a "
        "run would offer the model none of its tools; run `stepswitch mcp lock` on this "
        "workflow, review the lock and commit it")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([[{"type": "message", "text": "done"}]]))
    target = f"{tmp_path / Path(file).name}:workflow"
    code = main(["run", target, "--input", "go", "--model", f"scripted:{script}"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "MCP server 'files' (declared at " in err and "`stepswitch mcp lock`" in err


def test_a_run_refuses_a_lock_entry_written_for_another_transport(tmp_path: Path) -> None:
    write_lock(tmp_path / LOCK_NAME, {"files": {"tools": {}, "transport": "sse"}})
    wf = _workflow(tmp_path, (
        "files = ss.MCPServerStdio('files', '/nonexistent')\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[files])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n"))
    with pytest.raises(ss.UserError, match=r"has no lock entry of its own \(the lock's entry "
                       r"'files' was written for transport 'sse'\)"):
        wf.compile()


def test_check_reports_two_servers_with_one_name_as_mcp_lock_refuses_them(
    tmp_path: Path,
) -> None:
    _lock(tmp_path, files=[_tool("read_file", {"readOnlyHint": True})])
    report = _check(tmp_path, (
        "docs = ss.MCPServerStdio('files', '/nonexistent/docs')\n"
        "files = ss.MCPServerStdio('files', '/nonexistent/files')\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[docs])\n"
        "other = ss.Agent('other', 'Help.', mcp_servers=[files, docs])\n"
        "workflow = ss.Workflow(name='w', entry=helper, agents=[helper, other])\n"))
    (found,) = [d for d in report.diagnostics if d.code == "SW905"]
    assert found.severity == "error" and found.location.line == 3
    assert found.message.startswith("MCP server 'files' of agent 'other' is declared twice (")
    assert ":2 and " in found.message and found.message.endswith(
        ":3): the lock keeps one entry per name, so this one would be checked and run "
        "against the other's tools")
    assert not report.ok


def test_one_server_listed_by_two_agents_is_not_a_duplicate(tmp_path: Path) -> None:
    _lock(tmp_path, files=[_tool("read_file", {"readOnlyHint": True})])
    report = _check(tmp_path, (
        "files = ss.MCPServerStdio('files', '/nonexistent/files')\n"
        "other = ss.Agent('other', 'Help.', mcp_servers=[files])\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[files], handoffs=[other])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n"))
    assert "SW905" not in report.codes()


def test_an_sse_server_is_declared_as_ss_mcpserversse(tmp_path: Path) -> None:
    """`ss.MCPServerSse` was not exported, though the class exists and is what from_sdk
    reads an SDK MCPServerSse as."""
    import stepswitch.mcp

    assert ss.MCPServerSse is stepswitch.mcp.MCPServerSse
    write_lock(tmp_path / LOCK_NAME, {"remote": {"transport": "sse", "tools": {
        "peek": _tool("peek", {"readOnlyHint": True})}}})
    wf = _workflow(tmp_path, (
        "remote = ss.MCPServerSse('remote', 'http://127.0.0.1:9/sse')\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[remote])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n"))
    assert "SW901" not in wf.check().codes()
    (server,) = wf.graph().agent("helper").mcp_servers
    assert server.transport == "sse" and [t.name for t in server.tools] == ["peek"]
