"""A generated runner calls MCP tools as the interpreter does, against a real stdio server
(tests/mcp/mcp_server.py): the same items on every surface (``run_sync`` on the generated
module, ``run`` and ``run_streamed`` on the interpreter), an approval that pauses both and
runs the tool once per resume, and a checked-in style runner file that reaches the server
from a fresh process which never loads the compiler."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import stepswitch as ss
from stepswitch.cli.main import main
from stepswitch.compiler.codegen import codegen, load_source
from stepswitch.mcp import _client
from stepswitch.testing import ScriptStep, assistant_message, function_call
from tests._items import output_of
from tests._paths import ROOT
from tests.conformance.harness import run_all
from tests.differential.twin import Mixed
from tests.mcp.test_mcp import SERVER

_n = itertools.count()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """An importable module declaring a stdio server at a module-level name, locked once
    for the module's tests (the lock is the slow part: it starts the server)."""
    folder = tmp_path_factory.mktemp("mcp_runner")
    name = f"mcp_runner_app_{os.getpid()}_{next(_n)}"
    calls = folder / "calls.txt"
    (folder / f"{name}.py").write_text(
        "import sys\nimport stepswitch as ss\n"
        f"files = ss.MCPServerStdio('tools', sys.executable, [{str(SERVER)!r}], timeout=20,\n"
        f"    env={{'SW_MCP_CALLS': {str(calls)!r}}},\n"
        "    require_approval={'delete_file': True})\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[files])\n"
        "workflow = ss.Workflow(name='mcp_runner', entry=helper)\n",
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(folder))
        assert main(["mcp", "lock", str(folder / f"{name}.py")]) == 0
        import importlib

        module = importlib.import_module(name)
        try:
            yield module
        finally:
            sys.modules.pop(name, None)
            _client.wait(_client.close_all(), 10)


def _twin(machine: ss.StateMachine, module: str) -> ss.StateMachine:
    """The generated runner's MACHINE, its objects imported by path (no fallback)."""
    source = codegen(machine, module_name=f"{module}_runner", source=f"{module}:workflow")
    assert f'ref="{module}:files.tools.add"' in source
    twin: ss.StateMachine = load_source(source, f"{module}_runner").MACHINE
    assert twin.ir == machine.ir
    return twin


def _folder(app: ModuleType) -> Path:
    return Path(app.__file__ or "").parent


def _calls(app: ModuleType) -> list[str]:
    path = _folder(app) / "calls.txt"
    return path.read_text("utf-8").splitlines() if path.exists() else []


def test_the_generated_runner_calls_the_server_like_the_interpreter(app: ModuleType) -> None:
    machine = app.workflow.compile()
    mixed = Mixed(_twin(machine, app.__name__), machine)
    script: list[ScriptStep] = [[function_call("add", {"a": 2, "b": 3}),
               function_call("echo", {"text": "hi", "times": 2})],
              [assistant_message("done")]]
    out = run_all(mixed, "go", script)
    assert out.error is None, out.error
    outputs = [output_of(i) for i in out.items if i.type == "tool_call_output_item"]
    assert outputs == ["5", "hi hi"]
    # validation before dispatch: a bad argument never reaches the server
    bad_script: list[ScriptStep] = [[function_call("add", {"a": "x", "b": 1})],
                                    [assistant_message("done")]]
    bad = run_all(mixed, "go", bad_script)
    (shown,) = [output_of(i) for i in bad.items if i.type == "tool_call_output_item"]
    assert shown.startswith("Invalid arguments for tool add")


def test_an_approval_pauses_both_and_each_resume_runs_the_tool_once(app: ModuleType) -> None:
    (_folder(app) / "calls.txt").unlink(missing_ok=True)
    machine = app.workflow.compile()
    mixed = Mixed(_twin(machine, app.__name__), machine)
    script: list[ScriptStep] = [[function_call("delete_file", {"path": "/tmp/z"})],
              [assistant_message("done")]]
    paused = run_all(mixed, "clean up", script)
    assert [i.name for i in paused.result.interruptions] == ["delete_file"]
    assert _calls(app) == []  # no surface ran it before the approval
    state = ss.RunState.from_json(paused.result.to_state().to_json())
    state.approve(state.interruptions[0])
    done = run_all(mixed, state, script[1:])
    assert [output_of(i) for i in done.items if i.type == "tool_call_output_item"] == [
        "deleted /tmp/z"]
    assert _calls(app) == ["/tmp/z"] * 3  # once per surface, each after its resume


def test_a_runner_file_reaches_the_server_from_a_fresh_process(
    app: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(app)
    runner = folder / f"{app.__name__}_runner.py"
    assert main(["compile", f"{app.__name__}:workflow", "-o", str(runner)]) == 0, \
        capsys.readouterr().err
    code = (
        f"import sys, {runner.stem} as r\n"
        "from stepswitch.testing import ScriptedModel, assistant_message, function_call\n"
        "m = ScriptedModel([[function_call('add', {'a': 40, 'b': 2})], "
        "[assistant_message('done')]])\n"
        "out = r.run_sync('go', model=m)\n"
        "print([i.output for i in out.new_items if i.type == 'tool_call_output_item'])\n"
        "print(sorted(n for n in ('jinja2', 'networkx', 'stepswitch.compiler', "
        "'stepswitch.graph', 'stepswitch.analysis', 'stepswitch.render') if n in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT / "src")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['42']", "[]"]


def test_a_server_no_module_level_name_holds_is_refused_with_the_reason(
    app: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(app)  # the same server name: its entry in the lock there serves
    name = f"mcp_inline_app_{os.getpid()}_{next(_n)}"
    (folder / f"{name}.py").write_text(
        "import sys\nimport stepswitch as ss\n"
        "helper = ss.Agent('helper', 'Help.', mcp_servers=[\n"
        f"    ss.MCPServerStdio('tools', sys.executable, [{str(SERVER)!r}])])\n"
        "workflow = ss.Workflow(name='w', entry=helper)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(folder))
    try:
        assert main(["compile", f"{name}:workflow", "-o", str(folder / "r.py")]) == 2
        err = capsys.readouterr().err
        assert "a tool of an MCP server that no module-level name holds" in err
        assert "module:files.tools.NAME" in err and "Traceback" not in err
        assert main(["check", f"{name}:workflow"]) == 0
        out = capsys.readouterr().out
        assert "SW711" in out and "no module-level name holds" in out
    finally:
        sys.modules.pop(name, None)


def test_an_sdk_apps_mcp_server_is_called_by_its_runner(
    app: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(app)  # the server is named as the lock there has it
    name = f"mcp_sdk_app_{os.getpid()}_{next(_n)}"
    (folder / f"{name}.py").write_text(
        "import sys\nfrom agents import Agent\nfrom agents.mcp import MCPServerStdio\n"
        f"files = MCPServerStdio(name='tools', params={{'command': sys.executable, "
        f"'args': [{str(SERVER)!r}]}}, client_session_timeout_seconds=20,\n"
        "    require_approval={'always': {'tool_names': ['delete_file']}})\n"
        "helper = Agent(name='helper', instructions='Help.', mcp_servers=[files])\n",
        encoding="utf-8",
    )
    runner = folder / f"{name}_runner.py"
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(folder))
        try:
            assert main(["compile", f"{name}:helper", "-o", str(runner)]) == 0, \
                capsys.readouterr().err
        finally:
            sys.modules.pop(name, None)
    joined = re.sub(r'"\s+"', "", runner.read_text("utf-8"))  # long literals are split
    assert f'"stepswitch.interop.sdk_objects:{name}:files@mcp.tools.add"' in joined
    code = (
        f"import {runner.stem} as r\n"
        "from stepswitch.testing import ScriptedModel, assistant_message, function_call\n"
        "m = ScriptedModel([[function_call('add', {'a': 1, 'b': 2}), "
        "function_call('delete_file', {'path': '/x'})], [assistant_message('done')]])\n"
        "out = r.run_sync('go', model=m)\n"
        "print([i.output for i in out.new_items if i.type == 'tool_call_output_item'])\n"
        "print([i.name for i in out.interruptions])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT / "src")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['3']", "['delete_file']"]
