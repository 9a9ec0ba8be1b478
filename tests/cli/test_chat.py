"""``stepswitch chat`` and ``run --session``: conversations kept in a session, continuing
at the agent that holds them; bad URLs, ids and servers are one-line errors."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest

from stepswitch.cli.main import main
from stepswitch.sessions import SQLiteSession

ROOT = Path(__file__).resolve().parents[2]
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


def test_an_unreachable_server_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = _chat(
        ["--model", f"scripted:{CHAT_SCRIPT}", "--session", "redis://127.0.0.1:1/0"],
        "hi\n", capsys, monkeypatch,
    )
    assert code == 1
    assert "cannot connect to Redis at 127.0.0.1:1" in err


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
