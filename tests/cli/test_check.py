"""``stepswitch check`` in-process (``main(argv)``) and once as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tests._paths import ROOT
from tests.cli.conftest import run_main, run_process

BROKEN = """
import stepswitch as ss
lonely = ss.Agent("lonely", "Alone.")
top = ss.Agent("top", "Top.", handoffs=["top", "ghost"])
wf = ss.Workflow(name="w", entry=top, agents=[top, lonely])
"""

CLEAN = """
import stepswitch as ss
top = ss.Agent("top", "Top.")
wf = ss.Workflow(name="w", entry=top)
"""


def _module(tmp_path: Path, body: str) -> Path:
    path = tmp_path / f"wf_{uuid.uuid4().hex[:10]}.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_clean_workflow_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["check", str(_module(tmp_path, CLEAN))], capsys)
    assert code == 0
    assert "SW203 [info]" in out and "passed with 0 errors" in out


def test_errors_exit_one_with_located_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _module(tmp_path, BROKEN)
    code, out, _ = run_main(["check", f"{path}:wf"], capsys)
    assert code == 1
    line = next(ln for ln in out.splitlines() if " SW103 " in ln)
    assert line.split(":")[1] == "4"  # the line that declares `top`
    assert "    help: " in out
    assert "failed with 2 errors, 1 warning" in out


def test_exit_zero_select_and_ignore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(_module(tmp_path, BROKEN))
    assert run_main(["check", path, "--exit-zero"], capsys)[0] == 0
    code, out, _ = run_main(["check", path, "--select", "sw1", "--ignore", "SW103"], capsys)
    assert code == 0 and "SW107" in out and "SW103" not in out and "SW201" not in out
    code, out, _ = run_main(["check", path, "--select", "SW2,SW103"], capsys)
    assert code == 1 and "SW107" not in out


def test_bad_select_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["check", str(_module(tmp_path, CLEAN)), "--select", "E501"], capsys)
    assert code == 2 and "E501" in err and out == ""


def test_max_model_calls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(_module(tmp_path, CLEAN))
    code, out, _ = run_main(["check", path, "--max-model-calls", "5"], capsys)
    assert code == 1 and "SW204" in out
    assert run_main(["check", path, "--max-model-calls", "10"], capsys)[0] == 0
    assert run_main(["check", path, "--max-model-calls", "zero"], capsys)[0] == 2


def test_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["check", str(_module(tmp_path, BROKEN)), "--format", "json"], capsys)
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and records
    keys = {"file", "line", "column", "end_line", "end_column", "code", "severity", "message",
            "hint", "path", "workflow"}
    assert all(set(r) == keys for r in records)
    assert {r["code"] for r in records} >= {"SW103", "SW107", "SW201"}


def test_target_problems_exit_two_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(["check", str(tmp_path / "missing.py")], capsys)
    assert code == 2 and "no such file" in err
    path = _module(tmp_path, CLEAN)
    code, _, err = run_main(["check", f"{path}:nothing"], capsys)
    assert code == 2 and "no attribute 'nothing'" in err
    code, _, err = run_main(["check", f"{path}:top"], capsys)
    assert code == 2 and "is an Agent, not a Workflow" in err
    raising = _module(tmp_path, "raise RuntimeError('boom in user code')\n")
    code, _, err = run_main(["check", str(raising)], capsys)
    assert code == 2 and "in your code" in err and "boom in user code" in err
    assert "stepswitch/cli" not in err


def test_a_folder_checks_every_workflow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _module(tmp_path, CLEAN)
    _module(tmp_path, BROKEN)
    code, out, _ = run_main(["check", str(tmp_path)], capsys)
    assert code == 1 and "Checked 2 workflows" in out


def test_repository_graphs_are_clean_of_errors_and_warnings(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = run_main(["check", "graphs/", "--format", "json"], capsys)
    assert code == 0
    assert {json.loads(line)["severity"] for line in out.splitlines()} <= {"info"}


def test_broken_example_shows_several_problems(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = run_main(["check", "examples/broken_workflow.py"], capsys)
    assert code == 1
    for expected in ("SW103", "SW107", "SW108", "SW201", "SW202", "SW302", "SW401", "SW501"):
        assert expected in out


def test_as_a_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stepswitch", "check", "examples/broken_workflow.py",
         "--format", "github"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("::")
    assert "::error file=examples/broken_workflow.py,line=" in proc.stdout
    assert proc.stderr == ""


GREETER = """
import stepswitch as ss


@ss.function_tool
def greet(name: str) -> str:
    \"\"\"Greet someone.\"\"\"
    return f"hello {name}"


desk = ss.Agent("desk", "Greet.", tools=[greet])
wf = ss.Workflow(name="greeter", entry=desk)
"""


def test_a_folder_with_files_that_do_not_import_does_not_say_passed(tmp_path: Path) -> None:
    # a CI log once read "Checked 1 workflow: passed ..." above exit 2; and a runner left
    # stale by a rename said only "cannot import", not what to do
    app = tmp_path / "app"
    app.mkdir()
    (app / "greeter.py").write_text(GREETER)
    made = run_process("compile", "app/greeter.py:wf", "-o", "app/gen_greeter.py", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    (app / "greeter.py").write_text(GREETER.replace("greet", "welcome"))
    (app / "script.py").write_text("raise RuntimeError('only runs by hand')\n")
    done = run_process("check", "app/", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout.splitlines()[-1] == (
        "Checked 1 workflow; 2 files could not be imported (stderr says why) and went "
        "unchecked: failed with 0 errors, 0 warnings, 1 info.")
    again = "stepswitch compile app/greeter.py:wf -o app/gen_greeter.py"
    assert (
        "stepswitch: error: app/gen_greeter.py: a stale generated runner (cannot import "
        "'greeter:greet': greeter has no attribute 'greet'); regenerate it with "
        f"`{again}`\n") in done.stderr
    assert "only runs by hand" in done.stderr
    # the command it gives works, and then only the script is left
    assert run_process(*again.split()[1:], cwd=tmp_path).returncode == 0
    done = run_process("check", "app/", cwd=tmp_path)
    assert done.returncode == 2
    assert "Checked 1 workflow; 1 file could not be imported" in done.stdout
    assert "error: app/gen_greeter" not in done.stderr
    # a folder says why it skipped the runner
    assert ("stepswitch: note: skipped app/gen_greeter.py: a generated runner (of "
            "greeter:wf), not a workflow") in done.stderr


def test_a_misspelt_workflow_or_flow_node_gets_a_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _module(tmp_path, """
        from typing import Literal

        from pydantic import BaseModel

        import stepswitch as ss


        class Verdict(BaseModel):
            score: Literal["pass", "fail"]


        judge = ss.Agent(name="judge", instructions="Judge.", output_type=Verdict)


        @ss.step
        def ok(v: Verdict) -> str:
            return "ok"


        @ss.step
        def bad(v: Verdict) -> str:
            return "bad"


        report = ss.Workflow("report", judge, agents=[judge], flow=[
            ss.route(judge, on="score", cases={"pass": ok, "fail": "bda"}),
            ss.then(ok, ss.END)])
    """)
    code, _, err = run_main(["check", f"{path}:reprot"], capsys)
    assert code == 2
    assert err == (f"stepswitch: error: {path}:reprot: {path} has no attribute 'reprot' "
                   "(did you mean 'report'?)\n")
    code, _, err = run_main(["check", f"{path}:zzz"], capsys)
    assert code == 2 and err.endswith("has no attribute 'zzz'; its Workflows: report\n")
    # the step `bad` is not in the flow (only named, misspelt): still suggested
    code, out, _ = run_main(["check", str(path)], capsys)
    assert code == 1
    assert ("SW701 [error] flow node 'bda' names no agent or step of workflow 'report' "
            "(did you mean 'bad'?)") in out
