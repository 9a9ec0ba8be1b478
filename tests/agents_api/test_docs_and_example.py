"""``docs/agents-api.md``'s example runs as written and shows what the page says, and
``examples/support_agents_api.py`` (run by ``make demo``) works as shipped."""

from __future__ import annotations

import json
import re
import runpy

import pytest

from tests._paths import ROOT
from tests.test_docs_examples import block, run


def test_the_a_1042_lookup_writes_back_what_the_page_shows(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    ns = run(block("docs/agents-api.md", "AgentsAPIServer(script) as server"))
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Order A-1042 has shipped with DHL."
    page = (ROOT / "docs" / "agents-api.md").read_text(encoding="utf-8")
    shown = re.search(r'```json\n(\{"type": "agent.session.input.tool_result".*?)```', page,
                      re.S)
    assert shown is not None
    assert json.loads(shown.group(1)) == ns["action"]
    items = ns["items"]
    assert isinstance(items, list)
    assert [(i["type"], i.get("call_id")) for i in items if "call_id" in i] == [
        ("function_call", "call_0_0"), ("function_call_output", "call_0_0")]


def test_the_demo_example_runs_the_support_workflow_on_the_agents_api(
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = runpy.run_path(str(ROOT / "examples" / "support_agents_api.py"), run_name="example")
    assert module["run"]() == 0
    captured = capsys.readouterr()
    assert "Done: order 42 is refunded in full." in captured.out
    assert "approved process_refund" in captured.err
    assert ": clean" in captured.out
    assert "done: last agent refund, 4 model call(s)" in captured.err
