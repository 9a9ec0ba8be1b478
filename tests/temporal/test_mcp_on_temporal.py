"""MCP tools on Temporal: each call is an activity of the worker, which reaches a real
stdio server (tests/mcp/mcp_server.py); the run is the in-process run (items, approvals
run once, a dying server's located error with the run kept), and the worker holds the
run to the lock unless it is started with ``mcp_drift="allow"``."""

from __future__ import annotations

import asyncio
import importlib
import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from temporalio.client import Client

from stepswitch.cli.main import main
from stepswitch.mcp import _client
from stepswitch.testing import assistant_message, function_call
from tests.mcp.test_mcp import SERVER
from tests.temporal.drive import in_process, on_temporal

_n = itertools.count()


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """A module with four servers at module-level names, one workflow each: ``files``
    (normal, ``delete_file`` gated), ``crashing`` (its ``add`` kills it), ``drifted``
    (another description for ``add`` than the lock's) and ``hanging`` (its ``add`` never
    answers; ``timeout=2``); locked once."""
    folder = tmp_path_factory.mktemp("mcp_temporal")
    name = f"mcp_temporal_app_{os.getpid()}_{next(_n)}"
    calls = folder / "calls.txt"

    def server(var: str, mode: str, extra: str = "", timeout: int = 20) -> str:
        return (f"{var} = ss.MCPServerStdio('{var}', sys.executable, [{str(SERVER)!r}], "
                f"timeout={timeout}, env={{'SW_MCP_MODE': {mode!r}, 'SW_MCP_CALLS': "
                f"{str(calls)!r}}}{extra})\n")

    source = folder / f"{name}.py"
    source.write_text(
        "import sys\nimport stepswitch as ss\n"
        + server("files", "normal", ", require_approval={'delete_file': True}")
        + server("crashing", "crash") + server("drifted", "normal")
        + server("hanging", "hang", timeout=2)
        + "".join(f"wf_{v} = ss.Workflow(name='mcp_{v}', entry=ss.Agent('helper', 'Help.', "
                  f"mcp_servers=[{v}]))\n"
                  for v in ("files", "crashing", "drifted", "hanging")),
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(folder))
        assert main(["mcp", "lock", f"{source}:wf_files"]) == 0
        assert main(["mcp", "lock", f"{source}:wf_crashing"]) == 0  # locked before it crashes
        assert main(["mcp", "lock", f"{source}:wf_drifted"]) == 0
        # the lock now says drifted's add reads otherwise: what a changed server looks like
        from stepswitch.mcp.lock import locked_tool, read_lock, write_lock

        lock = folder / "stepswitch.mcp.lock"
        servers = read_lock(lock)
        add = servers["drifted"]["tools"]["add"]
        servers["drifted"]["tools"]["add"] = locked_tool(
            "add", "Add.", add["input_schema"], add["output_schema"], add["annotations"])
        servers["hanging"] = servers["files"]  # the same server script: the same tools
        write_lock(lock, servers)
        module = importlib.import_module(name)
        try:
            yield module
        finally:
            sys.modules.pop(name, None)
            _client.wait(_client.close_all(), 10)


def _calls(apps: ModuleType) -> list[str]:
    path = Path(apps.__file__ or "").with_name("calls.txt")
    return path.read_text("utf-8").splitlines() if path.exists() else []


def _scheduled(history: Any) -> list[str]:
    return [e.activity_task_scheduled_event_attributes.activity_type.name
            for e in history.events if e.HasField("activity_task_scheduled_event_attributes")]


def _temporal(dev_server: str, machine: Any, script: list[Any], **options: Any) -> Any:
    async def go() -> Any:
        client = await Client.connect(dev_server)
        return await on_temporal(client, machine, "go", script, **options)

    return asyncio.run(go())


def test_mcp_calls_are_activities_and_the_run_matches_in_process(
    dev_server: str, apps: ModuleType
) -> None:
    machine = apps.wf_files.compile()
    script = [[function_call("add", {"a": 2, "b": 3}),
               function_call("delete_file", {"path": "/tmp/t"})],
              [assistant_message("done")]]
    expected = in_process(machine, "go", script)
    assert _calls(apps) == ["/tmp/t"]
    seen, history = _temporal(dev_server, machine, script)
    assert seen.error is None
    assert (seen.items, seen.final_output, seen.asked) == (
        expected.items, expected.final_output, expected.asked)
    assert [c for c in expected.asked] == [[expected.asked[0][0]]]  # delete_file paused
    ref = f"{apps.__name__}:files.tools"
    assert sorted(n for n in _scheduled(history) if n.startswith(ref)) == [
        f"{ref}.add", f"{ref}.delete_file"]
    assert _calls(apps) == ["/tmp/t", "/tmp/t"]  # once in process, once on Temporal


def test_a_server_dying_mid_call_fails_the_run_with_its_located_error(
    dev_server: str, apps: ModuleType
) -> None:
    machine = apps.wf_crashing.compile()
    script = [[function_call("add", {"a": 1, "b": 2})], [assistant_message("done")]]
    expected = in_process(machine, "go", script)
    assert expected.error is not None and expected.error[0] == "MCPServerError"
    seen, history = _temporal(dev_server, machine, script)
    assert seen.error is not None
    assert seen.error[0] == "MCPServerError"
    assert "failed during the call of tool 'add'" in seen.error[1]
    assert f"{Path(apps.__file__ or '').name}:" in seen.error[1]  # the declaring line
    assert seen.items == expected.items  # the run so far is kept
    assert _scheduled(history).count(f"{apps.__name__}:crashing.tools.add") == 1  # not retried


def test_the_worker_holds_the_run_to_the_lock_unless_it_allows_drift(
    dev_server: str, apps: ModuleType
) -> None:
    machine = apps.wf_drifted.compile()
    script = [[function_call("echo", {"text": "hi", "times": 2})], [assistant_message("done")]]
    seen, _ = _temporal(dev_server, machine, script)
    assert seen.error is not None and seen.error[0] == "MCPServerError"
    assert "no longer matches its lock (tool 'add': description changed)" in seen.error[1]
    allowed, _ = _temporal(dev_server, machine, script, mcp_drift="allow")
    assert allowed.error is None
    assert [i.get("output") for i in allowed.items if i.get("type") == "tool_call_output_item"
            ] == ["hi hi"]


def test_a_hanging_call_times_out_as_in_process(dev_server: str, apps: ModuleType) -> None:
    machine = apps.wf_hanging.compile()
    script = [[function_call("add", {"a": 1, "b": 2})], [assistant_message("done")]]
    expected = in_process(machine, "go", script)
    (shown,) = [i["output"] for i in expected.items if i.get("type") == "tool_call_output_item"]
    assert shown.endswith("Tool 'add' timed out after 2 seconds.")
    seen, history = _temporal(dev_server, machine, script)
    assert (seen.error, seen.items, seen.final_output) == (
        None, expected.items, expected.final_output)
    assert _scheduled(history).count(f"{apps.__name__}:hanging.tools.add") == 1  # not retried
