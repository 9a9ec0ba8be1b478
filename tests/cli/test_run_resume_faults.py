"""Issue 11, items 5 and 8 at the CLI: ``stepswitch run --resume FILE`` consumes its file,
and a run that ends in any exception (a user hook's, Ctrl-C) is saved, so running the
same command again never repeats an approved side effect."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stepswitch.cli.main import main

WORKFLOW = textwrap.dedent('''
    import os
    import stepswitch as ss

    def _record(what):
        with open(os.environ["LEDGER"], "a") as f:
            f.write(what + "\\n")

    @ss.function_tool(needs_approval=True)
    def process_refund(order_id: int) -> str:
        """Refund an order."""
        _record(f"refund {order_id}")
        return f"refunded {order_id}"

    @ss.function_tool
    def wait_for_bank(order_id: int) -> str:
        """Hangs until Ctrl-C."""
        raise KeyboardInterrupt

    def _notify(ctx):
        raise RuntimeError("the pager is down")

    done = ss.Agent("done")
    desk = ss.Agent("desk", tools=[process_refund, wait_for_bank],
                    handoffs=[ss.handoff(done, on_handoff=_notify)])
    support = ss.Workflow("support", entry=desk, agents=[desk, done])
''')


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"output": [{"type": "function_call", "name": name, "arguments": arguments}]}


def text(content: str) -> dict[str, Any]:
    return {"output": [{"type": "message", "text": content}]}


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _app_file(tmp_path).write_text(WORKFLOW)
    monkeypatch.setenv("LEDGER", str(tmp_path / "ledger.txt"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    return tmp_path


def _app_file(app: Path) -> Path:
    """A module name of its own per test: the CLI refuses two files of one name."""
    return app / f"{app.name.replace('-', '_')}_app.py"


def ledger(app: Path) -> list[str]:
    path = app / "ledger.txt"
    return path.read_text().splitlines() if path.exists() else []


def stepswitch_run(app: Path, steps: list[dict[str, Any]], *argv: str,
                   capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    script = app / "script.json"
    script.write_text(json.dumps({"steps": steps}))
    code = main(["run", f"{_app_file(app)}:support", "--model", f"scripted:{script}", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_resuming_the_same_file_twice_runs_the_approved_call_once(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [call("process_refund", order_id=1), text("refunded")]
    state = app / "s.json"
    code, _, _ = stepswitch_run(app, steps, "--input", "refund 1", "--state", str(state),
                                capsys=capsys)
    assert code == 0 and ledger(app) == []
    code, out, _ = stepswitch_run(app, steps, "--resume", str(state), "--approve", "all",
                                  capsys=capsys)
    assert code == 0 and out == "refunded\n"
    assert ledger(app) == ["refund 1"]
    assert json.loads(state.read_text())["body"]["status"] == "finished"
    # the same command again: the file now holds a finished run, which is refused
    code, _, err = stepswitch_run(app, steps, "--resume", str(state), "--approve", "all",
                                  capsys=capsys)
    assert code == 2
    assert f"--resume {state}: the saved run already finished" in err
    assert ledger(app) == ["refund 1"]


def test_a_resumed_run_that_pauses_again_rewrites_its_file(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = [call("process_refund", order_id=1), call("process_refund", order_id=2),
             text("both")]
    state = app / "s.json"
    stepswitch_run(app, steps, "--input", "refunds", "--state", str(state), capsys=capsys)
    # approve the first refund; the model then asks for a second one: pause there
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\np\n"))
    code, _, err = stepswitch_run(app, steps, "--resume", str(state), "--approve", "ask",
                                  capsys=capsys)
    assert ledger(app) == ["refund 1"]
    assert code == 0 and f"saved the run to {state}" in err
    # the file holds the new pause: resuming it runs the second refund, not the first again
    code, out, _ = stepswitch_run(app, steps, "--resume", str(state), "--approve", "all",
                                  capsys=capsys)
    assert code == 0 and out == "both\n"
    assert ledger(app) == ["refund 1", "refund 2"]


def test_a_hook_failing_after_an_approved_call_is_saved_and_never_repeated(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [{"output": [
        {"type": "function_call", "name": "process_refund", "arguments": {"order_id": 1}},
        {"type": "function_call", "name": "transfer_to_done", "arguments": {}},
    ]}, text("done")]
    state = app / "s.json"
    stepswitch_run(app, steps, "--input", "refund 1", "--state", str(state), capsys=capsys)
    command = ["--resume", str(state), "--approve", "all", "--state", str(state)]
    code, _, err = stepswitch_run(app, steps, *command, capsys=capsys)
    assert code == 1 and "RuntimeError: the pager is down" in err
    assert f"saved the run so far to {state}" in err
    assert ledger(app) == ["refund 1"]
    code, _, err = stepswitch_run(app, steps, *command, capsys=capsys)
    assert code == 2 and "middle of a turn" in err
    assert ledger(app) == ["refund 1"]


def test_ctrl_c_saves_the_run_so_far(app: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = [call("process_refund", order_id=1), call("wait_for_bank", order_id=1),
             text("done")]
    state = app / "s.json"
    stepswitch_run(app, steps, "--input", "refund 1", "--state", str(state), capsys=capsys)
    code, _, err = stepswitch_run(app, steps, "--resume", str(state), "--approve", "all",
                                  capsys=capsys)
    assert code == 130 and "interrupted" in err
    assert f"saved the run so far to {state}" in err
    assert ledger(app) == ["refund 1"]
    saved = json.loads(state.read_text())["body"]
    assert [i["type"] for i in saved["items"]].count("tool_call_output_item") == 1
    code, _, err = stepswitch_run(app, steps, "--resume", str(state), "--approve", "all",
                                  capsys=capsys)
    assert ledger(app) == ["refund 1"]


SLOW_APP = textwrap.dedent('''
    import asyncio
    import stepswitch as ss

    @ss.function_tool
    def quick(n: int) -> str:
        """Quick."""
        return "ok"

    @ss.function_tool
    async def slow(n: int) -> str:
        """Slow."""
        await asyncio.sleep(60)
        return "late"

    a = ss.Agent("a", tools=[quick, slow])
    support = ss.Workflow("slow", entry=a, agents=[a])
''')


def test_a_real_ctrl_c_saves_the_run_and_exits_130(tmp_path: Path) -> None:
    import signal
    import subprocess

    (tmp_path / "slow_app.py").write_text(SLOW_APP)
    (tmp_path / "script.json").write_text(json.dumps({"steps": [
        call("quick", n=1), call("slow", n=1), text("done")]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "stepswitch", "run", "slow_app.py:support", "--model",
         "scripted:script.json", "--input", "go", "--state", "s.json"],
        cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until the slow tool is running
        if "tool slow" in line:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "saved the run so far to s.json" in err and "Traceback" not in err
    saved = json.loads((tmp_path / "s.json").read_text())["body"]
    assert [i["type"] for i in saved["items"]] == [
        "tool_call_item", "tool_call_output_item", "tool_call_item"]


def test_resume_of_a_file_past_the_size_bound_or_a_device_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stepswitch import _files

    big = tmp_path / "big.json"
    big.write_text(" " * 2048 + "{}")
    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 1024)
    for path, said in ((big, "larger than"), (Path("/dev/zero"), "not a regular file")):
        code = main(["run", "graphs/support.py:support", "--resume", str(path),
                     "--model", "scripted:examples/support_script.json"])
        err = capsys.readouterr().err
        assert code == 2
        assert err.startswith(f"stepswitch: error: --resume {path}: ") and said in err, err
        assert len(err.strip().splitlines()) == 1
