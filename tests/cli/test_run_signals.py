"""Issue 23, item 1: ``stepswitch run --resume FILE --approve ...`` stopped by SIGTERM,
SIGHUP or SIGKILL while an approved tool runs never runs that tool a second time.

SIGTERM and SIGHUP save the run so far as Ctrl-C does (exit 143 and 129); before the
approved call runs the file is rewritten as taken, so even a SIGKILL leaves a file that
a later resume refuses, naming the call as possibly done. The last test sends the three
signals at random points of real resumes and checks the ledger the tool writes: an
approved effect at most once, an unapproved one never (seeded: ``SIGNAL_SEED=N`` tries
another sequence; at most 5 rounds and about 8 s).
"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from stepswitch.cli.main import main

WORKFLOW = textwrap.dedent('''
    import asyncio
    import os
    import stepswitch as ss

    @ss.function_tool(needs_approval=True)
    async def process_refund(order_id: int) -> str:
        """Refund an order."""
        await asyncio.sleep(float(os.environ.get("BEFORE", "0")))
        with open(os.environ["LEDGER"], "a") as f:
            f.write(f"refund {order_id}\\n")
        await asyncio.sleep(float(os.environ.get("AFTER", "0")))
        return f"refunded {order_id}"

    desk = ss.Agent("desk", tools=[process_refund])
    support = ss.Workflow("support", entry=desk, agents=[desk])
''')

STEPS = [
    {"output": [
        {"type": "function_call", "name": "process_refund", "arguments": {"order_id": 1}},
        {"type": "function_call", "name": "process_refund", "arguments": {"order_id": 2}},
    ]},
    {"output": [{"type": "message", "text": "done"}]},
]


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # a module name of its own per test: the CLI refuses two files of one name
    name = "".join(c if c.isalnum() else "_" for c in tmp_path.name)
    (tmp_path / f"{name}_app.py").write_text(WORKFLOW)
    monkeypatch.setattr(sys.modules[__name__], "COMMAND", [
        "run", f"{name}_app.py:support", "--model", "scripted:script.json"])
    (tmp_path / "script.json").write_text(json.dumps({"steps": STEPS}))
    monkeypatch.setenv("LEDGER", str(tmp_path / "ledger.txt"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ledger(app: Path) -> list[str]:
    path = app / "ledger.txt"
    return path.read_text().splitlines() if path.exists() else []


COMMAND: list[str] = []
"""``stepswitch run APP --model scripted:script.json`` (set by the ``app`` fixture)."""


def in_process(*argv: str, answers: str = "", capsys: pytest.CaptureFixture[str],
               monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    code = main([*COMMAND, *argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def pause(app: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> None:
    (app / "ledger.txt").unlink(missing_ok=True)
    code, _ = in_process("--input", "refund 1 and 2", "--state", "s.json",
                         capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and ledger(app) == []


def resume(app: Path, answers: str, before: float = 0,
           after: float = 0) -> subprocess.Popen[str]:
    """``stepswitch run --resume s.json`` in a process of its own, answering the
    approval prompts with ``answers``; each refund takes ``before`` seconds, records
    itself in the ledger, then takes ``after`` seconds."""
    policy = ["--approve", "all"] if answers == "all" else ["--approve", "ask"]
    env = {**os.environ, "BEFORE": str(before), "AFTER": str(after),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    (app / "answers.txt").write_text("" if answers == "all" else answers)
    with (app / "answers.txt").open() as stdin:
        return subprocess.Popen(
            [sys.executable, "-m", "stepswitch", *COMMAND, "--resume", "s.json", *policy],
            cwd=app, env=env, text=True, stdin=stdin, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )


def wait_for(proc: subprocess.Popen[str], check: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None:
            pytest.fail(f"the resume ended first ({proc.returncode}): {proc.communicate()}")
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_save_the_run_as_ctrl_c_does(
    app: Path, sig: signal.Signals, code: int, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pause(app, capsys, monkeypatch)
    proc = resume(app, "y\nn\n", after=60)  # refund 1 approved, refund 2 rejected
    wait_for(proc, lambda: ledger(app) == ["refund 1"])  # the approved tool is running
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert f"interrupted ({sig.name})" in err and "Traceback" not in err
    assert "saved the run so far to s.json" in err
    saved = json.loads((app / "s.json").read_text())["body"]
    assert saved["status"] == "stopped"
    # the same command again: the refund that was running is not started again
    again, err = in_process("--resume", "s.json", "--approve", "ask", answers="y\ny\n",
                            capsys=capsys, monkeypatch=monkeypatch)
    assert again == 2
    assert "approved call 'process_refund'" in err and "may have run" in err
    assert "at most once" in err
    assert ledger(app) == ["refund 1"]


def test_a_resume_killed_outright_leaves_a_file_no_resume_runs_again(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    pause(app, capsys, monkeypatch)
    proc = resume(app, "y\nn\n", after=60)  # refund 1 approved, refund 2 rejected
    wait_for(proc, lambda: ledger(app) == ["refund 1"])
    proc.kill()  # SIGKILL: nothing of the process runs any more
    proc.communicate(timeout=30)
    saved = json.loads((app / "s.json").read_text())["body"]
    assert saved["resumed"] is True  # written before the refund ran
    again, err = in_process("--resume", "s.json", "--approve", "ask", answers="y\ny\n",
                            capsys=capsys, monkeypatch=monkeypatch)
    assert again == 2
    assert "--resume s.json: a run resumed this saved run and stopped before" in err
    assert 'process_refund({"order_id": 1})' in err and "may have run" in err
    assert ledger(app) == ["refund 1"]


def test_the_file_is_marked_taken_before_the_approved_call_runs(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    pause(app, capsys, monkeypatch)
    before = json.loads((app / "s.json").read_text())["body"]
    seen: list[Any] = []
    import stepswitch.cli.run as cli_run
    from stepswitch.cli._state_files import save as real

    def spy(args: Any, state: Any) -> list[str]:
        seen.append((state.resumed, list(ledger(app))))
        return real(args, state)

    monkeypatch.setattr(cli_run, "save", spy)  # run's own binding: what _drive calls
    code, _ = in_process("--resume", "s.json", "--approve", "all", capsys=capsys,
                         monkeypatch=monkeypatch)
    assert code == 0 and ledger(app) == ["refund 1", "refund 2"]
    # first the taken state, with nothing run yet; then the finished run
    assert seen[0] == (True, []) and seen[-1] == (False, ["refund 1", "refund 2"])
    assert "resumed" not in before


SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)


def test_random_signals_never_repeat_an_approved_call_nor_run_a_rejected_one(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(int(os.environ.get("SIGNAL_SEED", "23")))
    deadline = time.monotonic() + 8  # a bound on the whole test, whatever the machine
    rounds = 0
    while rounds < 5 and time.monotonic() < deadline:  # the first round always runs
        rounds += 1
        pause(app, capsys, monkeypatch)
        # which refunds a person approves: the same answers every time the prompt comes
        approve = {1: rng.random() < 0.7, 2: rng.random() < 0.5}
        answers = "".join("y\n" if approve[n] else "n\n" for n in (1, 2))
        sig = rng.choice(SIGNALS)
        before, after = rng.choice((0.0, 0.1, 0.2)), rng.choice((0.1, 0.2, 0.3))
        proc = resume(app, answers, before=before, after=after)
        seen = ""
        if rng.random() < 0.25:  # anywhere: start-up, reading the state, the prompts
            time.sleep(rng.uniform(0.0, 0.8))
        else:  # once the resumed run has begun: the tools, the model, the saving
            assert proc.stderr is not None
            for line in proc.stderr:
                seen += line
                if "→ agent" in line:
                    break
            time.sleep(rng.uniform(0.0, before + after + 0.1))
        if proc.poll() is None:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        err = seen + err
        assert "Traceback" not in err, err
        assert proc.returncode in (0, 2, 143, 129, -sig), (sig, proc.returncode, err)
        # then the same command once more, in this process, to its end
        code, err = in_process("--resume", "s.json", "--approve", "ask", answers=answers,
                               capsys=capsys, monkeypatch=monkeypatch)
        assert code in (0, 2), err
        done = ledger(app)
        for n in (1, 2):
            assert done.count(f"refund {n}") <= (1 if approve[n] else 0), (sig, approve, done)
        if code == 0:  # a run that went on to its end ran every approved refund
            assert sorted(done) == [f"refund {n}" for n in (1, 2) if approve[n]]
