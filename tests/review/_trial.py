"""The files a new user's trial makes with the real CLI: two small workflows in one file,
a run of each with ``--record`` (a recording and a ``*.trail.json`` case) and ``--state``,
and the other files ``run`` reads or writes (a scripted model's script, a trace). The
review commands' tests read them back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import run_main

WORKFLOWS = '''\
import stepswitch as ss


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look up an order."""
    return f"order {order_id}: shipped"


@ss.function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


desk = ss.Agent(name="desk", instructions="Help the user.", tools=[lookup])
helpdesk = ss.Workflow(name="helpdesk", entry=desk)
calc = ss.Agent(name="calc", instructions="Add numbers.", tools=[add])
astool = ss.Workflow(name="astool", entry=calc)
'''

SCRIPTS = {
    "helpdesk": [[{"type": "function_call", "name": "lookup", "arguments": {"order_id": 1}}],
                 [{"type": "message", "text": "Shipped."}]],
    "astool": [[{"type": "function_call", "name": "add", "arguments": {"a": 1, "b": 2}}],
               [{"type": "message", "text": "3"}]],
}


def trial(tmp_path: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> None:
    """Write the files into ``tmp_path`` and work there: ``wf.py``, ``hd.json`` and
    ``as.json`` (scripts), ``cases/hd.trail.json`` (a case), ``rec.json`` (a recording),
    ``hd_st.json`` and ``as_st.json`` (saved states), ``hd.jsonl`` (a trace)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "wf", raising=False)  # another test's wf.py
    (tmp_path / "wf.py").write_text(WORKFLOWS)
    (tmp_path / "cases").mkdir()
    for name, short in (("helpdesk", "hd"), ("astool", "as")):
        steps = [{"output": out} for out in SCRIPTS[name]]
        (tmp_path / f"{short}.json").write_text(json.dumps({"steps": steps}))
    runs = [
        ("helpdesk", "hd", ["--record", "cases/hd.trail.json", "--state", "hd_st.json"]),
        ("helpdesk", "hd", ["--record", "rec.json", "--trace", "hd.jsonl"]),
        ("astool", "as", ["--state", "as_st.json"]),
    ]
    for name, short, extra in runs:
        code, _, err = run_main(["run", f"wf.py:{name}", "--input", "hi", "--model",
                                 f"scripted:{short}.json", *extra], capsys)
        assert code == 0, err
