"""``stepswitch worker`` and ``stepswitch run --temporal``: a run started from the CLI,
its progress shown, its approval given through the update, its result printed."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from stepswitch.cli.main import main
from tests._paths import ROOT
from tests.temporal.conftest import wait_until_polling
from tests.temporal.flows import counts


@pytest.mark.parametrize("local", ["none", "models"])
def test_run_on_temporal_shows_progress_approves_and_prints_the_result(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, local: str,
) -> None:
    ledger = tmp_path / "ledger.db"
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(ledger))
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    monkeypatch.chdir(ROOT)
    queue = f"cli-{uuid.uuid4().hex[:8]}"
    worker = _worker("tests/temporal/flows.py:durable", dev_server, queue,
                     "--local-activities", local)
    workflow_id = f"cli-{uuid.uuid4().hex[:8]}"
    try:
        code = main(["run", "tests/temporal/flows.py:durable", "--temporal", dev_server,
                     "--task-queue", queue, "--input", "a lamp", "--approve", "all",
                     "--workflow-id", workflow_id])
    finally:
        worker.terminate()
        _, err = worker.communicate(timeout=20)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out == "reserved and charged\n"
    assert "tool reserve" in out.err and "approved charge (c2)" in out.err
    assert counts(str(ledger)) == {"reserve": 1, "charge": 1}
    assert b"worker for durable" in err
    scheduled = asyncio.run(_scheduled(dev_server, workflow_id))
    assert [n for n in scheduled if not n.endswith(".model")] == [
        "tests.temporal.flows:reserve", "tests.temporal.flows:charge"]
    assert any(n.endswith(".model") for n in scheduled) == (local == "none")


async def _scheduled(address: str, workflow_id: str) -> list[str]:
    """The activities the run scheduled through the server, in order."""
    client = await Client.connect(address)
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return [e.activity_task_scheduled_event_attributes.activity_type.name
            for e in history.events if e.HasField("activity_task_scheduled_event_attributes")]


def test_run_on_an_unreachable_server_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["run", "tests/temporal/flows.py:durable", "--temporal", "127.0.0.1:9",
                 "--input", "hi", "--approve", "all"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("stepswitch: error: cannot reach the Temporal server at 127.0.0.1:9")
    assert len(err.strip().splitlines()) == 1


def test_the_command_exits_2_every_time_not_an_abort_at_interpreter_exit() -> None:
    # Temporal's runtime threads could abort the interpreter as it finalized, after the
    # error was printed (exit 134 or 139, from one start in twelve to one in four): so
    # real processes, many of them, run side by side (each mostly waits on its imports)
    command = [sys.executable, "-m", "stepswitch", "run", "tests/temporal/flows.py:durable",
               "--temporal", "127.0.0.1:9", "--input", "hi"]
    procs = [subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(12)]
    try:
        ended = [(p.communicate(timeout=120)[1], p.returncode) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for stderr, code in ended:
        assert code == 2, stderr
        assert "Fatal Python error" not in stderr
        assert stderr.startswith("stepswitch: error: cannot reach the Temporal server")


def test_run_on_a_queue_without_workers_waits_a_bounded_time(
    dev_server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["run", "tests/temporal/flows.py:durable", "--temporal", dev_server,
                 "--task-queue", "nobody-here", "--worker-wait", "0.5", "--input", "hi"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no worker polls task queue 'nobody-here' (waited 0.5s)" in err
    # the hint is a command to paste: this target, this server, this queue
    assert (f"start one with `stepswitch worker tests/temporal/flows.py:durable --address "
            f"{dev_server} --task-queue nobody-here`") in err


def test_attaching_to_an_unknown_run_is_a_one_line_error(
    dev_server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["run", "tests/temporal/flows.py:durable", "--temporal", dev_server,
                 "--workflow-id", "nonexistent-id", "--approve", "all"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        f"stepswitch: error: no run with workflow id 'nonexistent-id' on {dev_server}")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("flags", "says"), [
    (["--trace", "t.jsonl"], "start the worker with `stepswitch worker ... --trace FILE.jsonl`"),
    (["--session", "sqlite:///never.db"], "with --temporal the worker keeps the conversations"),
    (["--model", "scripted:s.json"], "--model: on Temporal the worker calls the model: start it "
     "with `stepswitch worker ... --model scripted:s.json` and drop --model here"),
    (["--base-url", "http://x/v1"], "--base-url: on Temporal the worker calls the model"),
    (["--wait-timeout", "5"], "--wait-timeout: on Temporal the worker calls the model"),
    (["--session-id", "ann", "--workflow-id", "bob"], "--session-id 'ann' and --workflow-id"),
])
def test_flags_a_durable_run_cannot_honour_are_refused_not_ignored(
    flags: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["run", "tests/temporal/flows.py:durable", "--temporal", "127.0.0.1:9",
                 "--input", "hi", "--approve", "all", *flags])
    err = capsys.readouterr().err
    assert code == 2 and says in err, err
    assert not (ROOT / "t.jsonl").exists() and not (ROOT / "never.db").exists()


def test_a_flow_runs_on_temporal_from_the_cli(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ledger = tmp_path / "ledger.db"
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(ledger))
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    monkeypatch.chdir(ROOT)
    queue = f"cli-flow-{uuid.uuid4().hex[:8]}"
    worker = _worker("tests/temporal/flows.py:durable_flow", dev_server, queue)
    try:
        code = main(["run", "tests/temporal/flows.py:durable_flow", "--temporal", dev_server,
                     "--task-queue", queue, "--input", "one lamp", "--approve", "all"])
    finally:
        worker.terminate()
        _, err = worker.communicate(timeout=20)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out == "receipt: reserved and charged\n"
    assert "tool reserve" in out.err and "approved charge (c2)" in out.err
    assert "packer: reserved and charged\ndone: last step receipt" in out.err
    assert counts(str(ledger)) == {"take_order": 1, "reserve": 1, "charge": 1, "receipt": 1}
    assert b"worker for durable_flow" in err


def test_a_flow_with_session_flags_is_refused_before_any_server_is_contacted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    # port 9 has no server: the refusal comes first, so the error is about the flow
    for argv, why in (
        (["worker", "graphs/judge.py:judge", "--address", "127.0.0.1:9", "--task-queue", "q",
          "--session", "sqlite:///never.db"], "--session keeps the worker's conversations"),
        (["run", "graphs/judge.py:judge", "--temporal", "127.0.0.1:9", "--input", "x",
          "--session-id", "ann"], "--session-id continues a conversation"),
    ):
        code = main(argv)
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert code == 2
        assert line == (
            f"stepswitch: error: workflow 'judge' is a flow: {why}, and sessions are for "
            "handoff workflows (a flow starts at its first node each run; see "
            "docs/sessions.md)"
        )
    assert not (ROOT / "never.db").exists()


def test_a_worker_with_an_unreachable_session_store_does_not_start(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["worker", "tests/temporal/flows.py:durable", "--address", "127.0.0.1:9",
                 "--task-queue", "q", "--session", "redis://127.0.0.1:1/0"])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert line.startswith("stepswitch: error: --session: cannot connect to Redis at 127.0.0.1:1")


@pytest.mark.parametrize("flags", [["--task-queue", "q"], ["--workflow-id", "w"],
                                   ["--worker-wait", "3"]])
def test_temporal_flags_without_temporal_are_refused_not_ignored(
    flags: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["run", "graphs/support.py:support", "--input", "hi",
                 "--model", "scripted:examples/support_script.json", *flags])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert line == (f"stepswitch: error: {flags[0]} is for a durable run: add --temporal "
                    f"HOST:PORT, or drop {flags[0]} to run here")


def test_a_worker_writes_the_spans_of_the_runs_it_serves(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `run --temporal --trace` is refused and points here: the worker's --trace writes
    # what `stepswitch trace` reads, across the approval's pause and resumption
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(tmp_path / "ledger.db"))
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    monkeypatch.chdir(ROOT)
    spans = tmp_path / "worker.jsonl"
    queue = f"trace-{uuid.uuid4().hex[:8]}"
    worker = _worker("tests/temporal/flows.py:durable", dev_server, queue, "--trace", str(spans))
    try:
        code = main(["run", "tests/temporal/flows.py:durable", "--temporal", dev_server,
                     "--task-queue", queue, "--input", "a lamp", "--approve", "all"])
    finally:
        worker.terminate()
        _, err = worker.communicate(timeout=20)
    assert code == 0, capsys.readouterr().err
    assert worker.returncode == 0, err
    capsys.readouterr()
    assert main(["trace", str(spans)]) == 0
    tree = capsys.readouterr().out
    names = [line.strip().split("  ")[0] for line in tree.splitlines()]
    assert names[0].startswith("trace ") and names[1] == "invoke_workflow durable", tree
    for name in ("invoke_agent clerk", "execute_tool reserve", "execute_tool charge"):
        assert name in names, tree
    assert names.count("invoke_workflow durable") == 2  # paused for the approval, resumed


def test_a_worker_trace_file_it_cannot_write_is_refused_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = main(["worker", "tests/temporal/flows.py:durable", "--address", "127.0.0.1:9",
                 "--task-queue", "q", "--trace", str(tmp_path)])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert line.startswith(f"stepswitch: error: --trace {tmp_path}: cannot write it")


def test_a_run_left_waiting_says_the_command_that_decides_it(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ledger = tmp_path / "ledger.db"
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(ledger))
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    monkeypatch.chdir(ROOT)
    queue = f"none-{uuid.uuid4().hex[:8]}"
    worker = _worker("tests/temporal/flows.py:durable", dev_server, queue)
    try:
        code = main(["run", "tests/temporal/flows.py:durable", "--temporal", dev_server,
                     "--task-queue", queue, "--input", "a lamp", "--approve", "none"])
        err = capsys.readouterr().err
        assert code == 0, err
        assert 'waiting for approval: c2: charge({"amount": 30}) by clerk' in err
        command = shlex.split(err.split("decide with: ", 1)[1].strip())
        workflow_id = command[command.index("--workflow-id") + 1]
        assert command == ["stepswitch", "run", "tests/temporal/flows.py:durable", "--temporal",
                           dev_server, "--workflow-id", workflow_id, "--approve", "all"]
        assert counts(str(ledger)) == {"reserve": 1}
        # attached under another workflow's TARGET: refused, nothing decided
        code = main(["run", "tests/temporal/flows.py:durable_flow", "--temporal", dev_server,
                     "--workflow-id", workflow_id, "--approve", "all"])
        wrong = capsys.readouterr().err
        assert code == 2 and wrong.strip() == (
            f"stepswitch: error: run {workflow_id!r} on {dev_server} is a run of workflow "
            "'durable', not of 'durable_flow' (the TARGET given): attach with that workflow's "
            "TARGET, whose calls these are"), wrong
        assert counts(str(ledger)) == {"reserve": 1}
        code = main(command[1:])  # as printed
    finally:
        worker.terminate()
        worker.communicate(timeout=20)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out == "reserved and charged\n"
    assert counts(str(ledger)) == {"reserve": 1, "charge": 1}


def test_attaching_names_the_run_s_own_task_queue_not_the_flag_s_default(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(tmp_path / "ledger.db"))
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    monkeypatch.chdir(ROOT)
    queue = f"own-{uuid.uuid4().hex[:8]}"
    worker = _worker("tests/temporal/flows.py:durable", dev_server, queue)
    workflow_id = f"own-{uuid.uuid4().hex[:8]}"
    try:
        code = main(["run", "tests/temporal/flows.py:durable", "--temporal", dev_server,
                     "--task-queue", queue, "--input", "a lamp", "--approve", "none",
                     "--workflow-id", workflow_id])
        assert code == 0, capsys.readouterr().err
        capsys.readouterr()
        # attached without --task-queue (the printed command has none)
        code = main(["run", "tests/temporal/flows.py:durable", "--temporal", dev_server,
                     "--workflow-id", workflow_id, "--approve", "all"])
    finally:
        worker.terminate()
        worker.communicate(timeout=20)
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.startswith(f"run {workflow_id} on {dev_server} (task queue {queue})\n")


def _worker(target: str, address: str, queue: str, *flags: str) -> subprocess.Popen[bytes]:
    """``stepswitch worker TARGET`` with the tests' model, serving ``queue``, once it
    polls (see :func:`tests.temporal.conftest.wait_until_polling`)."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "stepswitch", "worker", target, "--address", address,
         "--task-queue", queue, "--model", "tests/temporal/flows.py:model", *flags],
        cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        wait_until_polling(address, queue, worker)
    except BaseException:
        worker.kill()
        _, err = worker.communicate(timeout=20)
        raise AssertionError(err.decode(errors="replace")[-2000:]) from None
    return worker


def test_a_run_on_a_queue_another_workflow_s_worker_polls_is_a_one_line_error(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """That worker fails the run's workflow task over and over (its workflow is not
    registered there): the command says so, instead of a query's timeout traceback."""
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(tmp_path / "ledger.db"))
    monkeypatch.chdir(ROOT)
    queue = f"other-{uuid.uuid4().hex[:8]}"
    worker = _worker("tests/temporal/flows.py:durable", dev_server, queue)
    workflow_id = f"other-{uuid.uuid4().hex[:8]}"
    try:
        code = main(["run", "tests/temporal/flows.py:durable_flow", "--temporal", dev_server,
                     "--task-queue", queue, "--input", "one lamp", "--approve", "all",
                     "--workflow-id", workflow_id])
    finally:
        worker.terminate()
        worker.communicate(timeout=20)
    err = capsys.readouterr().err
    assert code == 2
    [progress, line] = err.strip().splitlines()
    assert progress == f"run {workflow_id} on {dev_server} (task queue {queue})"
    assert line.startswith(
        f"stepswitch: error: run '{workflow_id}' cannot go on: a worker on task queue "
        f"'{queue}' fails it: Workflow class stepswitch.durable_flow is not registered on "
        "this worker")
    assert "give each workflow's workers a task queue of their own" in line


_CHANGED_FLOW = '''
import stepswitch as ss
from tests.temporal.flows import charge, receipt, reserve, take_order

packer = ss.Agent("packer", instructions={instructions!r}, tools=[reserve, charge])
durable_flow = ss.Workflow("durable_flow", take_order, flow=[
    ss.then(take_order, packer),
    ss.then(packer, receipt),
    ss.then(receipt, ss.END),
], max_turns=6)
'''


def test_a_decision_a_changed_worker_refuses_is_a_one_line_error(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run paused on one version of a flow, decided through a worker of another (the
    same file edited): the decision fails with MachineChanged, said in one line."""
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(tmp_path / "ledger.db"))
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    monkeypatch.chdir(ROOT)
    shop = tmp_path / "shop_changed.py"
    shop.write_text(_CHANGED_FLOW.format(instructions="Reserve, then charge."))
    target = f"{shop}:durable_flow"
    queue = f"changed-{uuid.uuid4().hex[:8]}"
    workflow_id = f"changed-{uuid.uuid4().hex[:8]}"
    worker = _worker(target, dev_server, queue)
    try:
        code = main(["run", target, "--temporal", dev_server, "--task-queue", queue,
                     "--input", "one lamp", "--approve", "none", "--workflow-id", workflow_id])
    finally:
        worker.terminate()
        worker.communicate(timeout=20)
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    shop.write_text(_CHANGED_FLOW.format(instructions="Charge first."))  # deployed
    worker = _worker(target, dev_server, queue)
    try:
        code = main(["run", target, "--temporal", dev_server, "--workflow-id", workflow_id,
                     "--approve", "all"])
    finally:
        worker.terminate()
        worker.communicate(timeout=20)
    err = capsys.readouterr().err
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(
        "stepswitch: error: the decision on c2 failed: the workflow 'durable_flow' changed "
        "under this run"), err
    assert "Traceback" not in err


def test_a_run_started_from_an_edited_file_fails_on_a_worker_of_the_old_version(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The command pins the run to the machine it compiled: a worker still running the
    file as it was fails the run before any step or tool runs, not silently runs the
    old version."""
    ledger = tmp_path / "ledger.db"
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(ledger))
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    monkeypatch.chdir(ROOT)
    shop = tmp_path / "shop_pinned.py"  # a module name of its own in this process
    shop.write_text(_CHANGED_FLOW.format(instructions="Reserve, then charge."))
    target = f"{shop}:durable_flow"
    queue = f"pinned-{uuid.uuid4().hex[:8]}"
    worker = _worker(target, dev_server, queue)  # the old version
    try:
        assert worker.stderr is not None
        assert b"worker for durable_flow" in worker.stderr.readline()  # it read the file
        shop.write_text(_CHANGED_FLOW.format(instructions="Charge first."))  # edited
        code = main(["run", target, "--temporal", dev_server, "--task-queue", queue,
                     "--input", "one lamp", "--approve", "all"])
    finally:
        worker.terminate()
        worker.communicate(timeout=20)
    err = capsys.readouterr().err
    assert code == 1, err
    assert "stepswitch: error: the run failed: the workflow 'durable_flow' changed under " \
        "this run" in err
    assert not ledger.exists() or counts(str(ledger)) == {}


def test_a_run_its_script_cannot_answer_exits_2_as_in_process(
    dev_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A transcript that runs out is a mistake in what the run was given (exit 2 in
    process), not a failed run (1): the durable command says the same."""
    monkeypatch.setenv("STEPSWITCH_LEDGER", str(tmp_path / "ledger.db"))
    monkeypatch.chdir(ROOT)
    script = tmp_path / "empty.json"
    script.write_text("[]")
    queue = f"short-{uuid.uuid4().hex[:8]}"
    worker = _worker("tests/temporal/flows.py:durable", dev_server, queue,
                     "--model", f"scripted:{script}")
    try:
        code = main(["run", "tests/temporal/flows.py:durable", "--temporal", dev_server,
                     "--task-queue", queue, "--input", "one lamp", "--approve", "all",
                     "--workflow-id", f"short-{uuid.uuid4().hex[:8]}"])
    finally:
        worker.terminate()
        _, logged = worker.communicate(timeout=20)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip().splitlines()[-1].startswith("stepswitch: error: the run failed: "), err
    assert "script" in err and "Traceback" not in err
    # the worker says it in one line too: it is the run's failure, not the worker's
    log = logged.decode()
    assert "Traceback" not in log, log
    assert "stepswitch.durable.model failed: UserError: " in log and "add a step" in log
