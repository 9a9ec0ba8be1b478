"""MCP servers, locked: against real MCP servers (tests/mcp/mcp_server.py, written with
the ``mcp`` package), over stdio as a subprocess and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import io
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.cli.main import main
from stepswitch.mcp import _client
from stepswitch.mcp.lock import LOCK_NAME, lock_text, read_lock
from stepswitch.targets.load import load_targets
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests._items import output_of

SERVER = Path(__file__).with_name("mcp_server.py")
_n = itertools.count()


def _app(folder: Path, server: str, *, agent_extra: str = "", tools: str = "") -> Path:
    """A workflow file declaring ``server`` (Python source) on its one agent."""
    path = folder / f"mcp_app_{os.getpid()}_{next(_n)}.py"
    path.write_text(
        "import sys\nimport stepswitch as ss\n"
        f"SERVER = {str(SERVER)!r}\n"
        f"{tools}\n"
        f"server = {server}\n"
        f"helper = ss.Agent('helper', 'Help.', mcp_servers=[server]{agent_extra})\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n",
        encoding="utf-8",
    )
    return path


def _stdio(mode: str = "normal", **options: str) -> str:
    options.setdefault("timeout", "20")  # a loaded CI machine starts python slowly
    env = options.pop("env", "{}")
    extra = "".join(f", {k}={v}" for k, v in options.items())
    return (f"ss.MCPServerStdio('tools', sys.executable, [SERVER], "
            f"env={{'SW_MCP_MODE': {mode!r}, **{env}}}{extra})")


def _workflow(path: Path) -> ss.Workflow:
    return load_targets([str(path)])[0].workflow


def _lock(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["mcp", "lock", str(path)]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _call(name: str, args: dict[str, object]) -> ScriptedModel:
    return ScriptedModel([[function_call(name, args)], [assistant_message("done")]])


def _outputs(result: ss.RunResult) -> list[str]:
    return [output_of(i) for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]


# -- lock ---------------------------------------------------------------------------------


def test_lock_lists_every_tool_with_hashes_in_stable_sorted_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = _app(tmp_path, _stdio())
    out = _lock(app, capsys)
    assert "1 server(s), 3 tool(s)" in out
    lock = tmp_path / LOCK_NAME
    text = lock.read_text("utf-8")
    servers = read_lock(lock)
    assert text == lock_text(servers)  # sorted, indented: the same bytes when written again
    tools = servers["tools"]["tools"]
    assert sorted(tools) == ["add", "delete_file", "echo"]
    add = tools["add"]
    assert add["description"] == "Add two integers."
    assert add["input_schema"]["required"] == ["a", "b"]
    assert add["annotations"] == {"readOnlyHint": True}
    assert tools["delete_file"]["annotations"] == {"destructiveHint": True}
    assert set(add["sha256"]) == {"description", "input_schema", "output_schema",
                                  "annotations", "tool"}
    assert all(len(h) == 64 for h in add["sha256"].values())
    # locking again changes nothing
    _lock(app, capsys)
    assert lock.read_text("utf-8") == text


def test_lock_check_passes_then_names_what_drifted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    assert main(["mcp", "lock", "--check", str(_app(tmp_path, _stdio()))]) == 0
    assert "match the lock" in capsys.readouterr().out
    drifted = _app(tmp_path, _stdio("drift"))
    assert main(["mcp", "lock", "--check", str(drifted)]) == 1
    out = capsys.readouterr().out
    assert "MCP server 'tools': tool 'add': description changed" in out
    assert "input schema" not in out  # only what changed is named


def test_lock_check_names_an_entry_locked_with_another_transport(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stepswitch.mcp.lock import write_lock

    app = _app(tmp_path, _stdio())
    _lock(app, capsys)
    lock = tmp_path / LOCK_NAME
    write_lock(lock, {"tools": {"tools": read_lock(lock)["tools"]["tools"], "transport": "sse"}})
    assert main(["mcp", "lock", "--check", str(app)]) == 1
    assert "MCP server 'tools': locked with transport 'sse', declared with 'stdio'" in \
        capsys.readouterr().out


def test_lock_of_a_server_that_cannot_start_is_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = _app(tmp_path, "ss.MCPServerStdio('tools', '/nonexistent/mcp-server')")
    assert main(["mcp", "lock", str(app)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"MCP server 'tools' (declared at {app.name}:5) could not start" in err.replace(
        str(tmp_path) + "/", "")
    assert not (tmp_path / LOCK_NAME).exists()


def test_lock_of_a_server_that_does_not_start_in_time_is_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = _app(tmp_path, _stdio("slowstart", startup_timeout="1"))
    start = time.monotonic()
    assert main(["mcp", "lock", str(app)]) == 2
    assert time.monotonic() - start < 8
    assert "did not start within 1 s (startup_timeout=)" in capsys.readouterr().err


# -- check, offline ---------------------------------------------------------------------


def test_check_reads_the_lock_and_never_starts_a_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    # the same server, now with a command that cannot run: check needs only the lock
    gone = _app(tmp_path, "ss.MCPServerStdio('tools', '/nonexistent/mcp-server')")
    report = _workflow(gone).check()
    codes = [d.code for d in report.diagnostics]
    assert "SW901" not in codes
    sw903 = [d for d in report.diagnostics if d.code == "SW903"]
    assert [d.message for d in sw903] == [
        "MCP server 'tools' of agent 'helper': tool 'delete_file' is annotated destructive "
        "and runs with no approval"]
    assert sw903[0].location.line == 5
    # the locked tools are the agent's tools: offered, named and drawn like function tools
    agent = _workflow(gone).graph().agent("helper")
    assert [t.name for t in agent.tools] == ["add", "delete_file", "echo"]
    assert not [d for d in report.diagnostics if d.code.startswith("SW4")]


def test_check_without_a_lock_entry_warns_that_the_server_is_unchecked(tmp_path: Path) -> None:
    report = _workflow(_app(tmp_path, _stdio())).check()
    (d,) = [d for d in report.diagnostics if d.code == "SW901"]
    assert "unchecked; run `stepswitch mcp lock`" in d.message
    assert d.severity == "warning"


def test_check_filters_approvals_and_collisions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    tools = ("@ss.function_tool(name='delete-file')\n"
             "def delete_other(path: str) -> str:\n    '''Delete.'''\n    return path\n"
             "@ss.function_tool\ndef echo(text: str) -> str:\n    '''Echo.'''\n    return text\n")
    app = _app(
        tmp_path,
        "ss.MCPServerStdio('tools', '/nonexistent', tool_filter=['add', 'delete_file', "
        "'echo', 'ad'], require_approval={'delete_file': True, 'delet': True})",
        agent_extra=", tools=[delete_other, echo]", tools=tools,
    )
    report = _workflow(app).check()
    lines = sorted(f"{d.code} {d.message}" for d in report.diagnostics
                   if d.code in ("SW302", "SW902", "SW903", "SW904"))
    assert any(line.startswith("SW302") and "'echo'" in line for line in lines)
    assert any(line.startswith("SW902") and "tool_filter names 'ad'" in line
               and "did you mean 'add'" in line for line in lines)
    assert any(line.startswith("SW902") and "require_approval names 'delet'" in line
               for line in lines)
    assert any(line.startswith("SW904") and "'delete-file' and 'delete_file'" in line
               for line in lines)
    assert not any(line.startswith("SW903") for line in lines)  # delete_file is approved
    assert not report.ok


# -- run --------------------------------------------------------------------------------


def test_a_run_calls_the_server_over_stdio_with_validation_before_dispatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    machine = _workflow(_app(tmp_path, _stdio())).compile()
    assert _outputs(machine.run_sync("go", model=_call("add", {"a": 2, "b": 3}))) == ["5"]
    # an optional parameter left out (strict mode sends null for it) is not sent
    out = machine.run_sync("go", model=_call("echo", {"text": "hi", "times": None}))
    assert _outputs(out) == ["hi"]
    bad = _outputs(machine.run_sync("go", model=_call("add", {"a": "x", "b": 3})))
    assert bad[0].startswith("Invalid arguments for tool add") and "'x'" in bad[0]


def test_drift_at_run_time_is_an_error_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    machine = _workflow(_app(tmp_path, _stdio("drift"))).compile()
    with pytest.raises(ss.MCPServerError) as caught:
        machine.run_sync("go", model=_call("echo", {"text": "hi", "times": 1}))
    assert "no longer matches its lock (tool 'add': description changed)" in str(caught.value)
    assert caught.value.run_data is not None
    allowed = machine.run_sync("go", model=_call("echo", {"text": "hi", "times": 2}),
                               run_config=ss.RunConfig(mcp_drift="allow"))
    assert _outputs(allowed) == ["hi hi"]


def test_an_approval_pause_runs_the_tool_once_after_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    calls = tmp_path / "calls.txt"
    app = _app(tmp_path, _stdio(require_approval="{'delete_file': True}",
                                env=f"{{'SW_MCP_CALLS': {str(calls)!r}}}"))
    machine = _workflow(app).compile()
    script = ScriptedModel([[function_call("delete_file", {"path": "/tmp/x"})],
                            [assistant_message("done")]])
    first = machine.run_sync("clean up", model=script)
    assert [i.name for i in first.interruptions] == ["delete_file"]
    assert not calls.exists()  # nothing ran before the approval
    state = ss.RunState.from_json(first.to_state().to_json())
    state.approve(state.interruptions[0])
    done = machine.run_sync(state, model=script)
    assert _outputs(done) == ["deleted /tmp/x"]
    assert calls.read_text("utf-8") == "/tmp/x\n"


def test_along_a_chain_of_resumes_each_approved_call_runs_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    calls = tmp_path / "calls.txt"
    app = _app(tmp_path, _stdio(require_approval="{'delete_file': True}",
                                env=f"{{'SW_MCP_CALLS': {str(calls)!r}}}"))
    machine = _workflow(app).compile()
    script: list[ScriptStep] = [
        [function_call("delete_file", {"path": "/a"}, call_id="c1")],
        [function_call("delete_file", {"path": "/b"}, call_id="c2")],
        [assistant_message("done")],
    ]
    state = machine.run_sync("clean up", model=ScriptedModel(script)).to_state()
    for step, path in enumerate(("/a", "/b"), start=1):
        state = ss.RunState.from_json(state.to_json())
        state.approve(state.interruptions[0])
        out = machine.run_sync(state, model=ScriptedModel(script[step:]))
        assert calls.read_text("utf-8").splitlines() == ["/a", "/b"][:step], path
        state = out.to_state()
    assert out.final_output == "done"
    assert _outputs(out)[-2:] == ["deleted /a", "deleted /b"]


def test_a_server_dying_mid_call_is_a_located_error_with_the_run_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    app = _app(tmp_path, _stdio("crash"))
    machine = _workflow(app).compile()
    with pytest.raises(ss.MCPServerError) as caught:
        machine.run_sync("go", model=_call("add", {"a": 1, "b": 2}))
    assert f"{app.name}:5) failed during the call of tool 'add'" in str(caught.value)
    assert caught.value.run_data is not None
    assert [i.name for i in caught.value.run_data.new_items if hasattr(i, "name")][:1] == ["add"]


def test_a_server_that_cannot_start_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    app = _app(tmp_path, "ss.MCPServerStdio('tools', '/nonexistent/mcp-server')")
    with pytest.raises(ss.MCPServerError, match=r"could not start") as caught:
        _workflow(app).compile().run_sync("go", model=_call("add", {"a": 1, "b": 2}))
    assert f"{app.name}:5" in str(caught.value)
    assert caught.value.run_data is not None


def test_a_server_that_hangs_at_start_is_a_located_error_within_its_startup_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    app = _app(tmp_path, _stdio("slowstart", startup_timeout="1"))
    start = time.monotonic()
    with pytest.raises(ss.MCPServerError) as caught:
        _workflow(app).compile().run_sync("go", model=_call("add", {"a": 1, "b": 2}))
    assert time.monotonic() - start < 8
    assert f"{app.name}:5) did not start within 1 s (startup_timeout=)" in str(caught.value)
    assert caught.value.run_data is not None
    assert [i.name for i in caught.value.run_data.new_items if hasattr(i, "name")] == ["add"]


def test_an_approved_mcp_tool_is_a_pause_point_of_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    app = _app(tmp_path, _stdio(require_approval="'always'"))
    report = _workflow(app).check()
    (pauses,) = [d for d in report.diagnostics if d.code == "SW501"]
    assert all(name in pauses.message for name in ("add", "delete_file", "echo"))
    assert "SW903" not in report.codes()


def test_a_hanging_server_times_out_within_its_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _lock(_app(tmp_path, _stdio()), capsys)
    machine = _workflow(_app(tmp_path, _stdio("hang", timeout="1"))).compile()
    start = time.monotonic()
    out = machine.run_sync("go", model=_call("add", {"a": 1, "b": 2}))
    assert time.monotonic() - start < 6
    (output,) = _outputs(out)  # the model sees the timeout, as for a function tool
    assert output.endswith("Tool 'add' timed out after 1 seconds.")


def test_a_slow_start_counts_against_startup_timeout_not_the_calls_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first call of a server that took longer than timeout= to start timed out:
    the tool's timeout wrapped connecting and listing as well as the call."""
    _lock(_app(tmp_path, _stdio()), capsys)
    slow = _stdio(timeout="2", env="{'SW_MCP_START_DELAY': '2.5'}")
    machine = _workflow(_app(tmp_path, slow)).compile()
    assert _outputs(machine.run_sync("go", model=_call("add", {"a": 1, "b": 2}))) == ["3"]


# -- streamable HTTP ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _served(transport: str, path: str) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), transport, str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail(f"the {transport} test server did not start")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        _client.wait(_client.close_all(), 10)  # end our sessions while the server is up
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    yield from _served("http", "/mcp")


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    yield from _served("sse", "/sse")


def test_lock_check_and_run_over_streamable_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], http_url: str
) -> None:
    server = f"ss.MCPServerStreamableHttp('remote', {http_url!r}, headers={{'X-Test': '1'}})"
    app = _app(tmp_path, server)
    _lock(app, capsys)
    servers = json.loads((tmp_path / LOCK_NAME).read_text("utf-8"))["servers"]
    assert servers["remote"]["transport"] == "streamable_http"
    assert sorted(servers["remote"]["tools"]) == ["add", "delete_file", "echo"]
    assert main(["mcp", "lock", "--check", str(app)]) == 0
    machine = _workflow(app).compile()
    assert _outputs(machine.run_sync("go", model=_call("add", {"a": 20, "b": 22}))) == ["42"]


def test_from_sdk_reads_an_sdk_sse_server_locks_and_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sse_url: str
) -> None:
    path = tmp_path / f"mcp_sse_app_{os.getpid()}.py"
    path.write_text(
        "from agents import Agent\nfrom agents.mcp import MCPServerSse\n"
        f"remote = MCPServerSse(name='remote', params={{'url': {sse_url!r}}})\n"
        "helper = Agent(name='helper', instructions='Help.', mcp_servers=[remote])\n",
        encoding="utf-8",
    )
    target = f"{path}:helper"
    assert main(["mcp", "lock", target]) == 0, capsys.readouterr().err
    capsys.readouterr()
    servers = json.loads((tmp_path / LOCK_NAME).read_text("utf-8"))["servers"]
    assert servers["remote"]["transport"] == "sse"
    wf = load_targets([target])[0].workflow
    assert "SW601" not in wf.check().codes()
    out = wf.compile().run_sync("go", model=_call("echo", {"text": "sse", "times": 2}))
    assert _outputs(out) == ["sse sse"]


# -- from_sdk ---------------------------------------------------------------------------


def test_from_sdk_reads_an_sdk_stdio_server_locks_checks_and_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"mcp_sdk_app_{os.getpid()}.py"
    path.write_text(
        "import sys\nfrom agents import Agent\nfrom agents.mcp import MCPServerStdio\n"
        f"files = MCPServerStdio(name='tools', params={{'command': sys.executable, "
        f"'args': [{str(SERVER)!r}]}}, client_session_timeout_seconds=20,\n"
        "    tool_filter={'blocked_tool_names': ['echo']},\n"
        "    require_approval={'always': {'tool_names': ['delete_file']}})\n"
        "helper = Agent(name='helper', instructions='Help.', mcp_servers=[files])\n",
        encoding="utf-8",
    )
    target = f"{path}:helper"
    assert main(["mcp", "lock", target]) == 0, capsys.readouterr().err
    capsys.readouterr()
    wf = load_targets([target])[0].workflow
    report = wf.check()
    assert not {"SW601", "SW901", "SW903"} & set(report.codes())
    (server,) = wf.graph().agent("helper").mcp_servers
    assert (server.transport, server.location.line) == ("stdio", 7)  # the agent listing it
    assert [t.name for t in wf.graph().agent("helper").tools] == ["add", "delete_file"]
    out = wf.compile().run_sync("go", model=_call("delete_file", {"path": "/tmp/y"}))
    assert [i.name for i in out.interruptions] == ["delete_file"]  # the SDK's approval
    done = wf.compile().run_sync("go", model=_call("add", {"a": 4, "b": 5}))
    assert _outputs(done) == ["9"]


def test_an_sdk_server_with_settings_stepswitch_does_not_carry_stays_opaque() -> None:
    from agents import Agent
    from agents.mcp import MCPServerStdio

    files = MCPServerStdio(name="files", params={"command": "true"}, max_retry_attempts=2)
    report = ss.from_sdk(Agent(name="a", mcp_servers=[files])).check()
    assert "SW601" in report.codes()
    assert "SW901" not in report.codes()


# -- declarations ---------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "message"), [
    ("ss.MCPServerStdio('t', 'x', tool_filter='add')", "tool_filter: expected a list"),
    ("ss.MCPServerStdio('t', 'x', require_approval='sometimes')",
     "require_approval: expected 'always', 'never' or a map"),
    ("ss.MCPServerStdio('t', 'x', timeout=0)", "timeout: expected a positive number"),
    ("ss.MCPServerStreamableHttp('t', 'ftp://x')", "url: expected an http:// or https://"),
    ("ss.MCPServerStdio('', 'x')", "name: expected a non-empty string"),
])
def test_a_bad_declaration_is_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, message: str
) -> None:
    app = _app(tmp_path, source)
    assert main(["check", str(app)]) == 2
    err = capsys.readouterr().err
    assert f"{app.name}:5" in err and message in err and "Traceback" not in err


def test_mcp_servers_must_be_server_declarations(tmp_path: Path) -> None:
    with pytest.raises(ss.UserError, match=r"mcp_servers: expected a list of ss.MCPServerStdio"):
        ss.Agent("a", mcp_servers=["files"])
    agent = ss.Agent("a")
    agent.mcp_servers.append("files")
    with pytest.raises(ss.UserError, match=r"changed after its declaration\): mcp_servers"):
        ss.Workflow(name="w", entry=agent).graph()


def test_lock_writes_where_o_says_and_keeps_other_servers_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stepswitch.mcp.lock import write_lock

    out = tmp_path / "elsewhere.lock"
    write_lock(out, {"other": {"transport": "stdio", "tools": {}}})
    assert main(["mcp", "lock", str(_app(tmp_path, _stdio())), "-o", str(out)]) == 0
    assert sorted(read_lock(out)) == ["other", "tools"]
    assert not (tmp_path / LOCK_NAME).exists()
    capsys.readouterr()
    assert main(["mcp", "lock", "--check", str(_app(tmp_path, _stdio())), "-o", str(out)]) == 0


@pytest.mark.parametrize("where", ["missing-folder", "folder"])
def test_a_bad_o_path_is_refused_before_any_server_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """`-o /nonexist/dir/x.lock` and `-o somefolder` were a FileNotFoundError and an
    IsADirectoryError traceback once the servers had been started and listed."""
    app = _app(tmp_path, "ss.MCPServerStdio('tools', '/nonexistent/mcp-server')")
    out = tmp_path / "nonexistent" / "x.lock" if where == "missing-folder" else tmp_path
    assert main(["mcp", "lock", str(app), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "could not start" not in err
    wanted = (f"-o {out}: there is no folder {out.parent}; create it first"
              if where == "missing-folder" else f"-o {out}: is a folder; name the lock file")
    assert wanted in err, err


def test_o_help_says_which_lock_check_and_run_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "lock", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("check, run and compile read only the nearest stepswitch.mcp.lock in the "
            "declaring file's folder or above it") in text


def test_mcp_lock_replaces_a_corrupt_lock_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It refused with "not an MCP lock ...; run `stepswitch mcp lock` again", the very
    command that failed."""
    lock = tmp_path / LOCK_NAME
    lock.write_text("{bad", encoding="utf-8")
    app = _app(tmp_path, _stdio())
    assert main(["mcp", "lock", "--check", str(app)]) == 2  # --check never writes
    assert "not an MCP lock (invalid JSON" in capsys.readouterr().err
    assert main(["mcp", "lock", str(app)]) == 0
    captured = capsys.readouterr()
    assert f"{lock}: not an MCP lock (invalid JSON" in captured.err
    assert "replacing it with a new lock of these targets' servers" in captured.err
    assert sorted(read_lock(lock)["tools"]["tools"]) == ["add", "delete_file", "echo"]


def test_mcp_lock_says_why_an_sdk_server_with_a_callable_filter_is_not_locked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "the targets declare no MCP server" of an agent that lists one."""
    path = tmp_path / f"mcp_sdk_filter_{os.getpid()}.py"
    path.write_text(
        "from agents import Agent\nfrom agents.mcp import MCPServerStdio\n"
        "files = MCPServerStdio(name='files', params={'command': '/nonexistent'},\n"
        "                       tool_filter=lambda ctx, tool: True)\n"
        "helper = Agent(name='helper', instructions='Help.', mcp_servers=[files])\n",
        encoding="utf-8",
    )
    assert main(["mcp", "lock", f"{path}:helper"]) == 2
    err = capsys.readouterr().err
    assert "declare no MCP server" not in err and err.count("\n") == 1, err
    assert err.startswith("stepswitch: error: MCP server 'files' with a callable "
                          "tool_filter no lock can record (listed at "), err
    assert "is not locked: it stays an opaque tool that a run cannot call (SW601" in err


# -- review ---------------------------------------------------------------------------------


def test_diff_reports_a_changed_lock_entry_as_model_and_safety(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stepswitch.mcp.lock import locked_tool, write_lock
    from stepswitch.review.diff import diff_specs

    _lock(_app(tmp_path, _stdio()), capsys)
    base = _workflow(_app(tmp_path, _stdio())).graph().spec
    lock = tmp_path / LOCK_NAME
    servers = read_lock(lock)
    tools = servers["tools"]["tools"]
    add = tools["add"]
    tools["add"] = locked_tool("add", "Add two integers and email them.", add["input_schema"],
                               add["output_schema"], add["annotations"])
    dele = tools["delete_file"]
    tools["delete_file"] = locked_tool("delete_file", dele["description"],
                                       dele["input_schema"], dele["output_schema"],
                                       {"readOnlyHint": True})
    write_lock(lock, servers)
    head = _workflow(_app(tmp_path, _stdio())).graph().spec
    found = {(c.category, c.path): c.message for c in diff_specs(base, head).changes}
    assert ("model", "agents.helper.tools.add.description") in found
    assert found[("safety", "agents.helper.mcp_servers.tools.tools.delete_file.annotations")] == (
        "annotations of tool 'delete_file' of MCP server 'tools' of agent 'helper': "
        "destructive true, read-only unset → destructive unset, read-only true")


def test_drift_in_a_cli_run_is_stepswitchs_error_not_blamed_on_the_users_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`stepswitch run` said the drift error was "raised in your code": it is raised by
    stepswitch's check of the server against its lock."""
    _lock(_app(tmp_path, _stdio()), capsys)
    drifted = _app(tmp_path, _stdio("drift"))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        [{"type": "function_call", "name": "echo", "arguments": {"text": "hi", "times": 1}}],
        [{"type": "message", "text": "done"}]]))
    code = main(["run", f"{drifted}:workflow", "--input", "go", "--model",
                 f"scripted:{script}"])
    err = capsys.readouterr().err
    assert code == 1 and "no longer matches its lock" in err, err
    assert "raised in your code" not in err and "Traceback" not in err, err
    # what it tells a command-line user to do, the command line can do
    assert err.rstrip().endswith("or allow it: --mcp-drift allow"), err
    assert "RunConfig" not in err, err
    assert main(["run", f"{drifted}:workflow", "--input", "go", "--model",
                 f"scripted:{script}", "--mcp-drift", "allow"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    for allow in ([], ["--mcp-drift", "allow"]):
        monkeypatch.setattr("sys.stdin", io.StringIO("go\n"))
        code = main(["chat", f"{drifted}:workflow", "--model", f"scripted:{script}",
                     "--session", f"sqlite:///{tmp_path / 'chat.db'}", "--session-id",
                     f"s{len(allow)}", *allow])
        err = capsys.readouterr().err
        assert code == (0 if allow else 1), err
        if not allow:
            assert err.rstrip().endswith("or allow it: --mcp-drift allow"), err


def test_a_durable_run_says_mcp_drift_is_the_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = _app(tmp_path, "ss.MCPServerStdio('tools', '/nonexistent')")
    assert main(["run", f"{app}:workflow", "--input", "go", "--temporal", "127.0.0.1:9",
                 "--mcp-drift", "allow"]) == 2
    assert "`stepswitch worker --mcp-drift allow`" in capsys.readouterr().err


def test_the_example_files_server_locks_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/mcp.md points at examples/files_server.py to try MCP with: it must lock, and
    a run must call it, inside its ROOT only."""
    from tests._paths import ROOT

    data = tmp_path / "data"
    data.mkdir()
    (data / "note.txt").write_text("hello from the server")
    script = str(ROOT / "examples" / "files_server.py")
    server = (f"ss.MCPServerStdio('files', sys.executable, [{script!r}], "
              f"env={{'ROOT': {str(data)!r}}}, timeout=20)")
    app = _app(tmp_path, server)
    assert "2 tool(s)" in _lock(app, capsys)
    locked = (tmp_path / LOCK_NAME).read_text()
    assert "read_file" in locked and "delete_file" in locked
    machine = _workflow(app).compile()
    result = machine.run_sync("go", model=_call("read_file", {"path": "note.txt"}))
    assert _outputs(result) == ["hello from the server"]
    outside = machine.run_sync("go", model=_call("read_file", {"path": "../secret"}))
    assert "outside" in _outputs(outside)[0]
