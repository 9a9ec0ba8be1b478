"""``stepswitch run`` with text that is not UTF-8 (``--input $'caf\\xe9'``: Python reads
argv with surrogateescape): the paused run is saved, resumed and traced without loss."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from stepswitch.runtime import RunState
from stepswitch.sessions import SQLiteSession
from tests._items import text_of
from tests._paths import ROOT

SCRIPT = [
    {"output": [{"type": "function_call", "name": "lookup_order", "arguments": {"order_id": 42}}]},
    {"output": [{"type": "function_call", "name": "transfer_to_refund", "arguments": {}}]},
    {"output": [{"type": "function_call", "name": "process_refund",
                 "arguments": {"order_id": 42}}]},
    {"output": [{"type": "message", "text": "Refunded order 42."}]},
]


def _run(*argv: str | bytes | Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
           "PYTHONUTF8": "1"}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPSWITCH_MODEL"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "stepswitch", "run", *argv], cwd=ROOT,
                          env=env, capture_output=True, timeout=60, check=False)


def test_a_non_utf8_input_is_saved_resumed_and_traced_without_loss(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": SCRIPT}))
    state, trace, db = tmp_path / "s.json", tmp_path / "t.jsonl", tmp_path / "c.db"
    common = ["--model", f"scripted:{script}", "--session", f"sqlite:///{db}"]
    first = _run("graphs/support.py:support", "--input", b"caf\xe9 order 42", "--state",
                 state, "--approve", "none", "--trace", trace, *common)
    assert first.returncode == 0, first.stderr.decode(errors="replace")
    assert b"Traceback" not in first.stderr
    saved = RunState.from_json(state.read_bytes())  # UTF-8, and it reads back
    assert text_of(saved.input[0]) == "caf\udce9 order 42"
    assert saved.interruptions[0].name == "process_refund"
    second = _run("graphs/support.py:support", "--resume", state, "--approve", "all", *common)
    assert second.returncode == 0, second.stderr.decode(errors="replace")
    assert b"Traceback" not in second.stderr and b"Refunded order 42." in second.stdout
    done = RunState.from_json(state.read_bytes())
    assert done.status == "finished"
    assert text_of(done.input[0]) == "caf\udce9 order 42"
    import asyncio

    session = SQLiteSession("default", db)
    items = asyncio.run(session.get_items())
    asyncio.run(session.close())
    assert items[0].content == "caf\udce9 order 42"  # type: ignore[union-attr]
    trace.read_bytes().decode("utf-8")
    assert trace.read_text(encoding="utf-8").count("\n") >= 5  # the spans were written


def test_a_surrogate_pair_that_json_cannot_keep_is_one_line_and_exit_2(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """Only Python code can make one (argv never holds a high surrogate): refused with
    the fix, never a traceback."""
    from stepswitch.cli.main import main

    monkeypatch.chdir(ROOT)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": SCRIPT}))
    state = tmp_path / "s.json"
    code = main(["run", "graphs/support.py:support", "--input", "order 42 \ud83d\ude00",
                 "--model", f"scripted:{script}", "--state", str(state), "--approve", "none"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if "surrogate pair" in x]
    assert f"--state {state}: the run cannot be saved" in line and "join it first" in line
    assert not state.exists()
