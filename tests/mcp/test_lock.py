"""Reading ``stepswitch.mcp.lock``: a lock whose entries have the wrong shape, or whose
fields do not hash to their stored ``sha256``, is one line naming the file and the entry,
and ``check``, ``mcp lock --check`` and a run all refuse it (fail closed)."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stepswitch.cli.main import main
from stepswitch.mcp.lock import LOCK_NAME, locked_tool, write_lock

_n = itertools.count()
_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
_APP = ("import stepswitch as ss\n"
        "files = ss.MCPServerStdio('files', '/nonexistent/mcp-server')\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[files])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n")


def _servers() -> dict[str, Any]:
    tools = {
        "read_file": locked_tool("read_file", "Read.", _SCHEMA, None, {"readOnlyHint": True}),
        "delete_file": locked_tool("delete_file", "Delete.", _SCHEMA, None,
                                   {"destructiveHint": True}),
    }
    return {"files": {"transport": "stdio", "tools": tools}}


def _set(*path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(servers: dict[str, Any]) -> None:
        node = servers
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def _project(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    servers = _servers()
    edit(servers)
    write_lock(tmp_path / LOCK_NAME, servers)
    app = tmp_path / f"mcp_lock_app_{os.getpid()}_{next(_n)}.py"
    app.write_text(_APP, encoding="utf-8")
    return app


_READ_ONLY_DELETE = _set("files", "tools", "delete_file", "annotations",
                         value={"readOnlyHint": True})
BAD = [
    pytest.param(_READ_ONLY_DELETE,
                 "MCP server 'files': tool 'delete_file': sha256.annotations does not match "
                 "its annotations (the lock was edited after `stepswitch mcp lock` wrote it), "
                 "so it cannot be trusted", id="tampered-annotations"),
    pytest.param(_set("files", "tools", "read_file", "description", value="Read, and mail."),
                 "tool 'read_file': sha256.description does not match its description",
                 id="tampered-description"),
    pytest.param(_set("files", "tools", "read_file", "sha256", "tool", value="0" * 64),
                 "tool 'read_file': sha256.tool does not match the entry", id="tampered-sum"),
    pytest.param(_set("files", "tools", "read_file", value=5),
                 "MCP server 'files': tool 'read_file': expected an object, got 5",
                 id="tool-not-an-object"),
    pytest.param(_set("files", "tools", "read_file", "input_schema", value="x"),
                 "tool 'read_file': input_schema: expected an object, got \"x\"",
                 id="schema-not-an-object"),
    pytest.param(_set("files", "tools", "read_file", "sha256", value="x"),
                 "tool 'read_file': sha256: expected an object, got \"x\"",
                 id="sha256-not-an-object"),
    pytest.param(_set("files", "tools", "read_file", "name", value="other"),
                 "tool 'read_file': name: 'other' is not the name it is kept under",
                 id="renamed"),
    pytest.param(_set("files", "transport", value="carrier-pigeon"),
                 "MCP server 'files': transport: expected one of stdio, streamable_http, sse, "
                 "got \"carrier-pigeon\"", id="unknown-transport"),
    pytest.param(_set("files", value=[]),
                 "MCP server 'files': expected an object with \"transport\" and \"tools\", "
                 "got []", id="server-not-an-object"),
]


@pytest.mark.parametrize(("edit", "message"), BAD)
def test_check_refuses_a_lock_it_cannot_trust_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], None], message: str,
) -> None:
    app = _project(tmp_path, edit)
    assert main(["check", str(app)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{tmp_path / LOCK_NAME}: " in err and message in err, err
    assert err.rstrip().endswith("run `stepswitch mcp lock` again"), err


@pytest.mark.parametrize(("edit", "message"), BAD[:1] + BAD[5:6])
def test_mcp_lock_check_refuses_it_before_starting_a_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], None], message: str,
) -> None:
    app = _project(tmp_path, edit)  # the server cannot start: the lock is read first
    assert main(["mcp", "lock", "--check", str(app)]) == 2
    err = capsys.readouterr().err
    assert message in err and "could not start" not in err and "Traceback" not in err, err


def test_a_run_refuses_a_tampered_lock_before_calling_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = _project(tmp_path, _READ_ONLY_DELETE)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([[{"type": "function_call", "name": "delete_file",
                                    "arguments": {"path": "/x"}}]]))
    code = main(["run", f"{app}:workflow", "--input", "go", "--model", f"scripted:{script}"])
    err = capsys.readouterr().err
    assert code == 2 and "sha256.annotations does not match" in err, err
    assert "Traceback" not in err


def test_an_untouched_lock_reads_and_a_transport_mismatch_is_reported_by_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = _project(tmp_path, lambda servers: None)
    assert main(["check", str(app), "--select", "SW901,SW903"]) == 0
    assert "SW903" in capsys.readouterr().out  # delete_file is read from the lock
    app = _project(tmp_path, _set("files", value={"tools": {}, "transport": "sse"}))
    assert main(["check", str(app), "--select", "SW901"]) == 0  # a warning, as no entry
    out = capsys.readouterr().out
    assert ("SW901 [warning] MCP server 'files' of agent 'helper' has no lock entry of its "
            "own: the lock's entry 'files' was written for transport 'sse', this server's is "
            "'stdio': its tools are unchecked; run `stepswitch mcp lock`") in out, out
