"""Policies over MCP tools: by name, and by server and locked annotations through the
selectors ``mcp:SERVER[:KIND]``. The lock is written here (as ``stepswitch mcp lock``
writes it); ``check`` reads it and never starts the server."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.errors import UserError
from stepswitch.mcp.lock import LOCK_NAME, locked_tool, write_lock
from stepswitch.targets.load import load_targets
from tests._paths import ROOT

_n = itertools.count()
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _lock(folder: Path) -> None:
    tools = {
        "read_file": locked_tool("read_file", "Read a file.", SCHEMA, None,
                                 {"readOnlyHint": True}),
        "delete_file": locked_tool("delete_file", "Delete a file.", SCHEMA, None,
                                   {"destructiveHint": True}),
        # no annotations: MCP's defaults say it writes and may destroy
        "write_file": locked_tool("write_file", "Write a file.", SCHEMA, None, None),
        "touch": locked_tool("touch", "Touch a file.", SCHEMA, None,
                             {"readOnlyHint": False, "destructiveHint": False}),
    }
    write_lock(folder / LOCK_NAME, {"files": {"transport": "stdio", "tools": tools}})


def _app(folder: Path, policies: str, *, approval: str = "'never'") -> ss.Workflow:
    """triage hands off to ops, whose MCP server ``files`` is locked beside the file."""
    _lock(folder)
    path = folder / f"mcp_policies_{os.getpid()}_{next(_n)}.py"
    path.write_text(
        "import stepswitch as ss\n"
        f"files = ss.MCPServerStdio('files', '/nonexistent/server', require_approval={approval})\n"
        "ops = ss.Agent('ops', 'Operate.', mcp_servers=[files])\n"
        "triage = ss.Agent('triage', 'Triage.', handoffs=[ops])\n"
        f"workflow = ss.Workflow('w', triage, [triage, ops], policies=[{policies}])\n",
        encoding="utf-8",
    )
    return load_targets([str(path)])[0].workflow


def _found(wf: ss.Workflow) -> dict[str, Any]:
    return {d.code: d for d in wf.check(select=["SW8"])}


def _trace(d: Any) -> list[str]:
    return [s.message for s in d.trace]


def test_a_policy_names_an_mcp_tool_by_name_through_a_handoff(tmp_path: Path) -> None:
    d = _found(_app(tmp_path, "ss.require_approval('delete_file')"))["SW801"]
    assert _trace(d) == ["agent 'triage'", "hands off to 'ops' (transfer_to_ops)",
                         "calls delete_file"]
    assert d.trace[-1].location.path == "agents.ops.tools[0]"
    # the fix is the server's, not function_tool(needs_approval=True) it cannot take
    assert d.help is not None and "MCP server ('files')" in d.help, d.help
    assert "needs_approval" not in d.help
    # approved by the server's require_approval map: the rule holds
    held = _app(tmp_path, "ss.require_approval('delete_file')",
                approval="{'delete_file': True}")
    assert _found(held) == {}


def test_destructive_selects_by_the_locked_annotations(tmp_path: Path) -> None:
    policy = "ss.require_approval('mcp:*:destructive')"
    d = _found(_app(tmp_path, policy))["SW801"]
    assert "delete_file runs without a human's approval" in d.message
    # write_file has no annotations (MCP: destructive); read_file and touch are not
    partial = _app(tmp_path, policy, approval="{'delete_file': True}")
    assert "write_file runs without a human's approval" in _found(partial)["SW801"].message
    both = _app(tmp_path, policy, approval="{'delete_file': True, 'write_file': True}")
    assert _found(both) == {}


def test_forbid_and_max_calls_over_a_servers_tools(tmp_path: Path) -> None:
    report = _app(tmp_path, "ss.forbid('mcp:files:writes', from_agent='triage'), "
                            "ss.forbid('mcp:*:read_only', from_agent='ops')").check(
        select=["SW8"])
    assert [(d.code, _trace(d)[-1]) for d in report] == [
        ("SW803", "calls delete_file"), ("SW803", "calls read_file")]
    assert ("policy forbid('mcp:files:writes', from_agent='triage') fails: delete_file is "
            "called") in report.diagnostics[0].message
    d = _found(_app(tmp_path, "ss.max_calls('mcp:files', 3)"))["SW804"]
    assert "without bound" in d.message and _trace(d)[-1] == "calls delete_file"


def test_a_selector_that_picks_nothing_says_so_and_a_bad_one_is_a_user_error(
    tmp_path: Path,
) -> None:
    d = _found(_app(tmp_path, "ss.forbid('mcp:other')"))["SW807"]
    assert "names no MCP tool" in d.message and "stepswitch mcp lock" in d.message
    with pytest.raises(UserError, match=r"forbid\(\.\.\.\) at .*: tool_or_agent: 'mcp:\*:risky'"
                       r": the kind 'risky' is none of destructive, writes, read_only"):
        ss.forbid("mcp:*:risky")
    with pytest.raises(UserError, match="an MCP selector is mcp:SERVER or mcp:SERVER:KIND"):
        ss.max_calls("mcp:", 1)


def test_an_mcp_selector_in_pyproject(tmp_path: Path) -> None:
    _app(tmp_path, "")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.stepswitch]\npolicies = [{ rule = \"require_approval\", tool = "
        "\"mcp:files:destructive\" }]\n")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "stepswitch", "check", str(tmp_path),
                          "--select", "SW8"], cwd=tmp_path, capture_output=True, text=True,
                         env=env)
    assert out.returncode == 1, out.stderr
    assert "pyproject.toml:2:1: SW801" in out.stdout and "delete_file" in out.stdout
    (tmp_path / "pyproject.toml").write_text(
        "[tool.stepswitch]\npolicies = [{ rule = \"forbid\", tool_or_agent = \"mcp:x:y\" }]\n")
    bad = subprocess.run([sys.executable, "-m", "stepswitch", "check", str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "policies[0]: forbid: tool_or_agent: 'mcp:x:y'" in bad.stderr
    assert "Traceback" not in bad.stderr
