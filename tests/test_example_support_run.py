"""The demo script pauses, saves, loads, approves and resumes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import stepswitch as ss
from tests._paths import ROOT

SCRIPT = ROOT / "examples" / "support_run.py"


def test_the_demo_saves_a_state_and_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("support_run_demo", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    state_file = tmp_path / "state.json"
    assert module.main(["--state", str(state_file)]) == 0
    out = capsys.readouterr().out
    assert "waits for approval of process_refund" in out
    assert "final output (refund): Your refund for order 42 has been processed." in out
    doc = json.loads(state_file.read_text())
    assert doc["body"]["status"] == "interrupted"
    assert ss.RunState.from_json(state_file.read_text()).interruptions[0].name == "process_refund"
