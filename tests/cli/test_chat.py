"""``stepswitch chat`` and ``run --session``: conversations kept in a session, continuing
at the agent that holds them; bad URLs, ids and servers are one-line errors."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from stepswitch.cli.main import main
from stepswitch.sessions import SQLiteSession
from tests._paths import ROOT

TARGET = "graphs/support.py:support"
CHAT_SCRIPT = str(ROOT / "examples/support_chat.json")


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPSWITCH_MODEL"):
        monkeypatch.delenv(name, raising=False)


def _chat(argv: list[str], lines: str, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    code = main(["chat", TARGET, *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_chat_continues_at_the_refund_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "chat.db"
    code, out, err = _chat(
        ["--model", f"scripted:{CHAT_SCRIPT}", "--approve", "all",
         "--session", f"sqlite:///{db}", "--session-id", "ann"],
        "I want a refund\norder 42\n", capsys, monkeypatch,
    )
    assert code == 0, err
    assert out.splitlines() == ["refund> Which order should I refund?",
                                "refund> Done: order 42 is refunded in full."]
    assert "approved process_refund" in err
    snap = asyncio.run(SQLiteSession("ann", db).load())
    assert snap.current_agent == "refund"
    texts = [getattr(i, "content", None) for i in snap.items]
    assert texts[0] == "I want a refund" and "order 42" in texts
    assert texts[-1] == "Done: order 42 is refunded in full."


def test_chat_asks_and_a_no_is_the_models_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = _chat(
        ["--model", f"scripted:{CHAT_SCRIPT}", "--session", f"sqlite:///{tmp_path}/c.db"],
        "I want a refund\norder 42\nn\n", capsys, monkeypatch,
    )
    assert code == 0, err
    assert "approve process_refund" in err and "rejected process_refund" in err
    assert out.splitlines()[-1].startswith("refund> ")
    # a chat cannot wait for a decision, so it does not offer to pause
    assert "for agent refund? [y/N] " in err and "p(ause)" not in err


def test_chat_says_so_when_piped_input_ends_at_an_approval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = _chat(
        ["--model", f"scripted:{CHAT_SCRIPT}", "--session", f"sqlite:///{tmp_path}/c.db"],
        "I want a refund\norder 42\n", capsys, monkeypatch,
    )
    assert code == 0, err
    assert ("  declined process_refund: the input ended before an answer (pass --approve all "
            "to approve such calls)") in err.splitlines()


def test_chat_default_store_is_under_the_working_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("I want a refund\n"))
    code = main(["chat", str(ROOT / TARGET), "--model", f"scripted:{CHAT_SCRIPT}"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert (tmp_path / ".stepswitch" / "sessions.db").exists()


@pytest.mark.parametrize("argv, message", [
    (["--session", "mongodb://x/y"], "unknown session URL scheme 'mongodb'"),
    (["--session", "sqlite:///x.db", "--session-id", ""], "session id is empty"),
    (["--session", "sqlite:///x.db", "--session-id", "x" * 400], "at most 256"),
])
def test_bad_session_flags_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, _, err = _chat(["--model", f"scripted:{CHAT_SCRIPT}", *argv], "", capsys,
                         monkeypatch)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["chat", "run"])
@pytest.mark.parametrize(("url", "what"), [
    ("redis://127.0.0.1:1/0", "Redis at 127.0.0.1:1"),
    ("postgresql://postgres@127.0.0.1:1/test", "PostgreSQL at 127.0.0.1:1"),
])
def test_an_unreachable_server_is_a_flag_error_before_the_banner(
    command: str, url: str, what: str,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    extra = ["--input", "hi"] if command == "run" else []
    code = main([command, TARGET, "--model", f"scripted:{CHAT_SCRIPT}", "--session", url,
                 *extra])
    out, err = capsys.readouterr()
    # exit 2, as for every other bad --session: nothing ran, nothing was printed first
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"stepswitch: error: --session: cannot connect to {what}")


def test_run_with_a_session_continues_at_the_refund_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    url = f"sqlite:///{tmp_path}/run.db"
    first = tmp_path / "first.json"
    first.write_text(json.dumps({"steps": [
        {"output": [{"type": "function_call", "name": "transfer_to_refund", "arguments": {}}]},
        {"output": [{"type": "message", "text": "Which order?"}]},
    ]}))
    second = tmp_path / "second.json"
    second.write_text(json.dumps({"steps": [
        {"output": [{"type": "message", "text": "Order 42, noted."}]},
    ]}))
    assert main(["run", TARGET, "--input", "refund please", "--model", f"scripted:{first}",
                 "--session", url, "--session-id", "bob"]) == 0
    assert main(["run", TARGET, "--input", "order 42", "--model", f"scripted:{second}",
                 "--session", url, "--session-id", "bob"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["Which order?", "Order 42, noted."]
    assert err.count("→ agent refund") == 2  # the second run started at refund
    assert main(["run", TARGET, "--input", "x", "--session-id", "bob",
                 "--model", f"scripted:{second}"]) == 2
    assert "--session-id needs --session URL" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["chat", str(ROOT / TARGET)], "no OpenAI API key"),
        (["chat", str(ROOT / TARGET), "--session", "sqlite:///k.db"], "no OpenAI API key"),
        (["chat", str(ROOT / TARGET), "--model", "scripted:missing.json"], "missing.json"),
        (["chat", "nosuch.py:support", "--session", "sqlite:///k.db"], "nosuch.py"),
        (["run", str(ROOT / TARGET), "--input", "hi", "--session", "sqlite:///k.db"],
         "no OpenAI API key"),
        (["run", str(ROOT / TARGET), "--input", "hi", "--session", "sqlite:///k.db",
          "--model", "scripted:missing.json"], "missing.json"),
        (["run", "nosuch.py:support", "--input", "hi", "--session", "sqlite:///k.db"],
         "nosuch.py"),
    ],
)
def test_a_command_that_fails_before_its_run_leaves_no_session_file(
    argv: list[str], why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert why in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def _refund_script(tmp_path: Path) -> Path:
    script = tmp_path / "refund.json"
    script.write_text(json.dumps({"steps": [
        {"output": [{"type": "function_call", "name": "transfer_to_refund", "arguments": {}}]},
        {"output": [{"type": "function_call", "name": "process_refund",
                     "arguments": {"order_id": 42, "reason": "arrived damaged"}}]},
        {"output": [{"type": "message", "text": "Refunded."}]},
    ]}))
    return script


def test_a_paused_run_on_a_session_says_how_to_continue_it_with_its_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    script, state, url = _refund_script(tmp_path), tmp_path / "r3.json", f"sqlite:///{tmp_path}/c.db"
    assert main(["run", TARGET, "--input", "refund order 42", "--model", f"scripted:{script}",
                 "--session", url, "--session-id", "ann", "--state", str(state),
                 "--approve", "none"]) == 0
    err = capsys.readouterr().err
    hint = err.split("continue with: ", 1)[1].strip()
    assert hint == (f"stepswitch run {TARGET} --resume {state} --approve all "
                    f"--model scripted:{script} --session {url} --session-id ann")
    # without the session the CLI names its flags, not the Python API's session=
    assert main(["run", TARGET, "--resume", str(state), "--approve", "all",
                 "--model", f"scripted:{script}"]) == 2
    err = capsys.readouterr().err
    assert "taken with session 'ann': pass --session URL --session-id ann" in err
    assert "session=" not in err
    assert main(["run", TARGET, "--resume", str(state), "--approve", "all",
                 "--model", f"scripted:{script}", "--session", url]) == 2
    err = capsys.readouterr().err
    assert "belongs to session 'ann', not 'default': pass --session-id ann" in err
    # the hint, as printed, continues the run
    copy = tmp_path / "r3-copy.json"
    copy.write_text(state.read_text())
    argv = [*hint.split()[1:], "--model", f"scripted:{script}"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out == "Refunded.\n", err
    assert "  approved process_refund" in err
    # the same pause resumed again (from a copy) conflicts with the session, which has
    # moved on: the CLI does not suggest a retry that would conflict the same way
    argv[argv.index(str(state))] = str(copy)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "another run has added to the session since" in err and "retry with" not in err
    # the refused resume approved nothing, so nothing claims it did; and the Python
    # API's advice (RunConfig(on_conflict=...)) is not a command-line user's
    assert "approved" not in err, err
    assert "RunConfig" not in err and "on_conflict" not in err, err
    assert "the script continues" not in err, err  # nothing continues: it is refused


def test_a_session_held_by_an_agent_the_workflow_lacks_is_refused_in_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "c.db"
    session = SQLiteSession("ann", db)
    asyncio.run(session.append([], operation_id="op", expected_version=0,
                               current_agent="billing"))
    asyncio.run(session.close())
    url, script = f"sqlite:///{db}", _refund_script(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    for argv in (["run", TARGET, "--input", "hi"], ["chat", TARGET]):
        assert main([*argv, "--model", f"scripted:{script}", "--session", url,
                     "--session-id", "ann"]) == 2
        err = capsys.readouterr().err
        assert "continues at agent 'billing', which workflow 'support' does not have" in err
        assert "new --session-id" in err and "starting_agent" not in err, err


def test_chat_reads_the_session_once_before_the_first_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # each load is a round trip to the store (PostgreSQL, Redis): the banner's check and
    # the "continuing at" line share one
    loads: list[int | None] = []
    real = SQLiteSession.load

    async def counted(self: SQLiteSession, limit: int | None = None) -> Any:
        loads.append(limit)
        return await real(self, limit=limit)

    monkeypatch.setattr(SQLiteSession, "load", counted)
    db = tmp_path / "chat.db"
    argv = ["--model", f"scripted:{CHAT_SCRIPT}", "--approve", "all",
            "--session", f"sqlite:///{db}", "--session-id", "ann"]
    code, _, err = _chat(argv, "I want a refund\n", capsys, monkeypatch)
    assert code == 0, err
    # the flag check (which, for a script, takes the history too), then the first run's
    assert loads[:2] == [None, None], loads
    loads.clear()
    code, _, err = _chat(argv, "", capsys, monkeypatch)
    assert code == 0 and "(continuing the conversation at agent refund)" in err
    assert loads == [None], loads


@pytest.mark.parametrize("argv", [
    ["chat", "graphs/story.py:story"],
    ["chat", "graphs/story.py:story", "--session", "sqlite:///{tmp}/s.db"],
    ["run", "graphs/story.py:story", "--input", "a robot", "--session", "sqlite:///{tmp}/s.db"],
])
def test_a_flow_is_refused_a_session_before_anything_is_made(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    argv[1] = str(ROOT / argv[1])
    code = main([*argv, "--model", f"scripted:{CHAT_SCRIPT}"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "is a flow" in err and "sessions are for handoff workflows" in err
    assert ("--session" if argv[0] == "run" else "stepswitch run") in err
    assert "session=" not in err and "chatting with" not in err
    assert len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # no .stepswitch/, no s.db


def test_a_script_continues_across_commands_in_one_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # each command is a new process with a fresh script: without the session's earlier
    # model calls it would start over and answer the second message with the first reply
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"steps": [
        {"output": [{"type": "message", "text": "Hello."}]},
        # a response with a call and a text counts as one earlier model call
        {"output": [{"type": "function_call", "name": "transfer_to_refund", "arguments": {}},
                    {"type": "message", "text": "Passing you on."}]},
        {"output": [{"type": "function_call", "name": "process_refund",
                     "arguments": {"order_id": 42, "reason": "late"}}]},
        {"output": [{"type": "message", "text": "Refunded."}]},
        {"output": [{"type": "message", "text": "Anything else?"}]},
    ]}))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    url, state = f"sqlite:///{tmp_path}/c.db", tmp_path / "paused.json"
    flags = ["--model", f"scripted:{script}", "--session", url, "--session-id", "ann"]
    assert main(["run", TARGET, "--input", "hi", *flags]) == 0
    assert capsys.readouterr().out == "Hello.\n"
    assert main(["run", TARGET, "--input", "refund 42", *flags, "--state", str(state),
                 "--approve", "none"]) == 0
    err = capsys.readouterr().err
    assert "first 1 step(s) are the session's earlier model call(s); the script continues " \
        "at step 2" in err
    assert "paused" in err
    assert main(["run", TARGET, "--resume", str(state), "--approve", "all", *flags]) == 0
    out, err = capsys.readouterr()
    assert out == "Refunded.\n", err
    # step 1 the first command's, steps 2-3 this run's before it paused
    assert ("its first 1 step(s) are the session's earlier model call(s), and the next 2 "
            "this run's before it paused; the script continues at step 4") in err, err
    code, out, err = _chat(flags, "thanks\n", capsys, monkeypatch)
    assert code == 0 and out == "refund> Anything else?\n", err


def test_chat_takes_a_model_from_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chatmodel.py").write_text(
        "from stepswitch.runtime.model import ModelResponse\n"
        "from stepswitch.testing import assistant_message\n"
        "class Echo:\n"
        "    async def get_response(self, request):\n"
        "        return ModelResponse((assistant_message(f'{len(request.input)} in'),))\n"
        "model = Echo()\n")
    code, out, err = _chat(["--model", f"{tmp_path}/chatmodel.py:model",
                            "--session", f"sqlite:///{tmp_path}/c.db"], "hi\nagain\n",
                           capsys, monkeypatch)
    assert code == 0, err
    # the second turn sees the first one's items
    assert out.splitlines() == ["triage> 1 in", "triage> 3 in"]


EVIL = "ok\x1b]0;pwned\x07\x1b[2K\r\u202edone\nline two"
EVIL_SHOWN = "ok\\x1b]0;pwned\\x07\\x1b[2K\\r\\u202edone\nline two"


def test_model_text_from_chat_and_run_is_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "evil.json"
    script.write_text(json.dumps({"steps": [
        {"output": [{"type": "message", "text": EVIL}]},
    ]}))
    code, out, err = _chat(["--model", f"scripted:{script}", "--session",
                            f"sqlite:///{tmp_path}/c.db"], "hi\n", capsys, monkeypatch)
    assert code == 0, err
    assert out == f"triage> {EVIL_SHOWN}\n"
    assert main(["run", TARGET, "--input", "hi", "--model", f"scripted:{script}"]) == 0
    out, err = capsys.readouterr()
    assert out == EVIL_SHOWN + "\n"
    assert "\x1b" not in err and "\x07" not in err
