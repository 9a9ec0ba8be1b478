"""The same scenarios from the command line: ``stepswitch run TARGET --api agents`` and
``stepswitch chat --api agents`` against ``AgentsAPIServer``, in this process.

The ledger is a file the workflow's refund tool appends a line to, so a count survives
the commands: pause, approve, a dropped write-back, resume.
"""

from __future__ import annotations

import io
import json
import time
import uuid
from pathlib import Path

import pytest

from stepswitch.models import AgentsAPIServer
from stepswitch.models.agents_api_server import Fault, session_failed
from stepswitch.models.script import call, message
from tests._paths import ROOT
from tests.agents_api.raw_server import RawServer
from tests.cli.conftest import MODEL_ENV, run_main

APP = '''
import os
import stepswitch as ss


@ss.function_tool(needs_approval=True)
def process_refund(order_id: int) -> str:
    """Refund an order."""
    with open(os.environ["LEDGER"], "a", encoding="utf-8") as ledger:
        ledger.write(f"refund {order_id}\\n")
    return f"refunded {order_id}"


refund = ss.Agent(name="refund", instructions="You refund orders.", tools=[process_refund])
shop = ss.Workflow("shop", entry=refund, agents=[refund])
warm = ss.Workflow("warm", entry=ss.Agent(
    name="warm", instructions="Be creative.",
    model_settings=ss.ModelSettings(temperature=0.9)))
'''


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in MODEL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # a module name of its own per test: the commands import it in this process
    path = tmp_path / f"shop_{uuid.uuid4().hex[:8]}.py"
    path.write_text(APP, encoding="utf-8")
    monkeypatch.setenv("LEDGER", str(tmp_path / "ledger.txt"))
    return path


def flags(server: AgentsAPIServer) -> list[str]:
    return ["--api", "agents", "--base-url", server.url, "--model", "gpt-test"]


def ledger(app: Path) -> list[str]:
    path = app.parent / "ledger.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_run_pauses_resumes_and_a_lost_write_back_is_resubmitted_never_rerun(
    app: Path, server: AgentsAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    state = app.parent / "state.json"
    server.add([call("process_refund", {"order_id": 42})])
    code, out, err = run_main(["run", f"{app}:shop", *flags(server), "--input",
                               "refund order 42", "--state", str(state), "--approve", "none"],
                              capsys)
    assert code == 0, err
    assert "paused: 1 call(s) wait for approval" in err
    assert "--api agents" in err  # the resume hint keeps the backend
    assert ledger(app) == []

    # approved on resume; the write-back is applied, then every try of it is cut
    server.add([message("Refunded order 42.")])
    server.faults.append(Fault("drop", nth=1, times=3))
    code, out, err = run_main(["run", f"{app}:shop", *flags(server), "--resume", str(state),
                               "--approve", "all"], capsys)
    assert code == 1, err
    assert ledger(app) == ["refund 42"]
    assert "saved" in err and str(state) in err
    [line] = [x for x in err.splitlines() if x.startswith("stepswitch: error:")]
    assert "127.0.0.1" in line

    code, out, err = run_main(["run", f"{app}:shop", *flags(server), "--resume", str(state),
                               "--approve", "all"], capsys)
    assert code == 0, err
    assert out.strip() == "Refunded order 42."
    assert ledger(app) == ["refund 42"]  # resumed twice, ran once
    keys = {k for c, k in server.write_backs}
    assert len(server.write_backs) == 4 and len(keys) == 1  # 3 cut tries + the resubmit
    assert len(server.applied) == 1
    server.assert_complete()


def test_run_refuses_what_the_api_cannot_express_before_a_session_exists(
    app: Path, server: AgentsAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run_main(["run", f"{app}:warm", *flags(server), "--input", "hi"], capsys)
    assert code == 1, err
    [finding] = [x for x in err.splitlines() if "SW654" in x]
    assert finding.startswith(f"{app}:") and "temperature" in finding
    assert "nothing was sent" in err
    assert server.requests == []


def test_worker_refuses_what_the_api_cannot_express_before_it_takes_runs(
    app: Path, server: AgentsAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # no Temporal server is contacted: the refusal comes first
    code, _out, err = run_main(["worker", f"{app}:warm", *flags(server),
                                "--address", "127.0.0.1:1", "--task-queue", "q"], capsys)
    assert code == 1, err
    assert any("SW654" in line for line in err.splitlines())
    assert "stepswitch worker: 1 finding(s) above" in err
    assert server.requests == []


def test_check_for_the_agents_api_target(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = run_main(["check", f"{app}:warm", "--target", "agents-api"], capsys)
    assert code == 1 and "SW654" in out
    code, out, _ = run_main(["check", f"{app}:warm"], capsys)
    assert code == 0 and "SW654" not in out  # another target: temperature is fine
    code, out, _ = run_main(["check", "graphs/support.py:support", "--target", "agents-api",
                             "--format", "json"], capsys)
    assert code == 0
    codes = [json.loads(line)["code"] for line in out.splitlines()]  # JSON lines
    assert codes and not [c for c in codes if c.startswith("SW65")]


def test_a_failed_session_from_the_cli_is_one_line_and_the_run_is_kept(
    app: Path, server: AgentsAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    state = app.parent / "state.json"
    server.add(session_failed("the model is overloaded"))
    code, _out, err = run_main(["run", f"{app}:shop", *flags(server), "--input", "hi",
                               "--state", str(state)], capsys)
    assert code == 1
    [line] = [x for x in err.splitlines() if x.startswith("stepswitch: error:")]
    assert "Agents API session sess_1 failed: the model is overloaded" in line
    assert state.exists()


def test_chat_keeps_one_hosted_session_for_the_whole_conversation(
    app: Path, server: AgentsAPIServer, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.add([message("Which order?")], [call("process_refund", {"order_id": 7})],
               [message("Refunded order 7.")])
    monkeypatch.setattr("sys.stdin", io.StringIO("I want a refund\norder 7\n"))
    store = app.parent / "chat.db"
    code, out, err = run_main(["chat", f"{app}:shop", *flags(server), "--approve", "all",
                               "--session", f"sqlite:///{store}", "--session-id", "c1"], capsys)
    assert code == 0, err
    assert out.splitlines() == ["refund> Which order?", "refund> Refunded order 7."]
    assert ledger(app) == ["refund 7"]
    assert len(server.sessions) == 1  # the second line went to the same session
    messages = [e for r in server.requests if r.method == "POST"
                and r.path.endswith("/events") for e in r.body["events"]
                if e["type"] == "agent.session.input.message"]
    assert [m["input"][0]["content"][0]["text"] for m in messages] == ["order 7"]
    server.assert_complete()


def test_a_conversation_whose_hosted_session_is_gone_says_so_and_what_to_do(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = f"sqlite:///{app.parent / 'chat.db'}"
    with AgentsAPIServer([[message("Which order?")]]) as first:
        monkeypatch.setattr("sys.stdin", io.StringIO("I want a refund\n"))
        code, _out, err = run_main(["chat", f"{app}:shop", *flags(first), "--session", store],
                                   capsys)
        assert code == 0, err
    with AgentsAPIServer([[message("never said")]]) as fresh:  # sess_1 is not on it
        monkeypatch.setattr("sys.stdin", io.StringIO("order 7\n"))
        said = [run_main(["chat", f"{app}:shop", *flags(fresh), "--session", store], capsys),
                run_main(["run", f"{app}:shop", *flags(fresh), "--session", store, "--input",
                          "order 7"], capsys)]
        assert fresh.sessions == {}
    for code, _out, err in said:
        assert code == 2, err
        [line] = [x for x in err.splitlines() if x.startswith("stepswitch: error:")]
        assert ("the saved conversation's hosted session sess_1 no longer exists at "
                f"{fresh.url}/ (404: No session found with id 'sess_1'.)") in line
        assert "start a new conversation" in line
        assert "check the model name" not in line


def test_api_agents_with_a_scripted_model_refuses_what_the_api_cannot_express(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = app.parent / "script.json"
    script.write_text(json.dumps([[{"type": "message", "text": "A poem."}]]), encoding="utf-8")
    scripted = ["--api", "agents", "--model", f"scripted:{script}", "--input", "hi"]
    code, out, err = run_main(["run", f"{app}:warm", *scripted], capsys)
    assert code == 1, err
    [finding] = [x for x in err.splitlines() if "SW654" in x]
    assert finding.startswith(f"{app}:") and "temperature" in finding
    assert "the hosted Agents API cannot run this workflow as written" in err
    assert out == ""  # the scripted model never answered

    # what the API can express runs on the script, and the flag is not passed over unsaid
    code, out, err = run_main(["run", f"{app}:shop", *scripted], capsys)
    assert code == 0, err
    assert out.strip() == "A poem."
    assert ("note: --api agents: the workflow was checked for the hosted Agents API, but "
            "this model answers in this process") in err


def test_wait_timeout_bounds_a_server_that_opens_the_stream_and_stays_silent(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with RawServer(silent=True) as silent:
        started = time.monotonic()
        code, _out, err = run_main(["run", f"{app}:shop", "--api", "agents", "--base-url",
                                    silent.url, "--model", "gpt-test", "--input", "hi",
                                    "--wait-timeout", "0.5"], capsys)
        took = time.monotonic() - started
    assert code == 1, err
    [line] = [x for x in err.splitlines() if x.startswith("stepswitch: error:")]
    assert (f"model 'gpt-test' at {silent.url}/: the session's event stream sent no event "
            "naming the session in 0.5 s (the wait timeout); retry the run") in line
    assert took < 10


def test_wait_timeout_is_kept_in_the_resume_hint(
    app: Path, server: AgentsAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add([call("process_refund", {"order_id": 1})])
    code, _out, err = run_main(["run", f"{app}:shop", *flags(server), "--input", "refund 1",
                                "--state", str(app.parent / "s.json"), "--approve", "none",
                                "--wait-timeout", "30"], capsys)
    assert code == 0, err
    assert "--api agents --wait-timeout 30" in err


@pytest.mark.parametrize(("given", "says"), [
    (["--model", "gpt-test"], "--wait-timeout bounds the wait for a hosted Agents API session: "
     "add --api agents, or drop --wait-timeout"),
    (["--api", "agents", "--model", "scripted:s.json"], "--model scripted:s.json answers in "
     "this process, with no session to wait for"),
    (["--api", "agents", "--model", "gpt-test", "--wait-timeout", "0"],
     "--wait-timeout must be a positive number of seconds, got 0"),
])
def test_wait_timeout_where_it_bounds_nothing_is_a_usage_error(
    given: list[str], says: str, app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["run", f"{app}:shop", "--input", "hi"], ["chat", f"{app}:shop"]):
        code, _out, err = run_main([*command, "--base-url", "http://127.0.0.1:9/v1",
                                    "--wait-timeout", "5", *given], capsys)
        assert code == 2 and says in err, err
