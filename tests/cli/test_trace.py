"""``stepswitch run --trace FILE`` writes the run's spans as JSON lines, and
``stepswitch trace FILE`` prints them as a tree; over the real HTTP client too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.cli.main import main
from stepswitch.models import OpenAIServer
from stepswitch.models.script import message

ROOT = Path(__file__).resolve().parents[2]
TARGET = str(ROOT / "graphs/support.py") + ":support"
SCRIPT = str(ROOT / "examples/support_script.json")


def test_run_writes_spans_and_trace_prints_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.jsonl"
    code = main(["run", TARGET, "--input", "refund order 42", "--model", f"scripted:{SCRIPT}",
                 "--approve", "all", "--trace", str(out)])
    assert code == 0
    spans = [json.loads(line) for line in out.read_text().splitlines()]
    names = [s["name"] for s in spans]
    assert names.count("invoke_workflow support") == 2  # paused, then resumed
    assert {"invoke_agent triage", "invoke_agent refund", "execute_tool lookup_order",
            "execute_tool process_refund", "chat transcript"} <= set(names)
    assert len({s["trace_id"] for s in spans}) == 1
    capsys.readouterr()
    assert main(["trace", str(out)]) == 0
    tree = capsys.readouterr().out.splitlines()
    assert tree[0].startswith("trace ")
    assert tree[1].startswith("  invoke_workflow support")
    steps = [line.split("→ ")[1].split()[0] for line in tree if "chat transcript" in line]
    assert steps == ["RunAgain", "Handoff", "Interruption", "Final"]
    assert any("tokens 310 in / 12 out" in line for line in tree)
    assert any("approval.requested (tool=process_refund" in line for line in tree)
    # indentation is nesting: the refund tool runs under the resumed refund agent
    tool = next(line for line in tree if "execute_tool process_refund" in line)
    assert tool.startswith("        execute_tool")


def test_trace_over_real_http_names_the_model_and_provider(tmp_path: Path) -> None:
    out = tmp_path / "http.jsonl"
    script = [[message("Hello there.")]]
    with OpenAIServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "stepswitch", "run", TARGET, "--input", "hi",
             "--base-url", server.url, "--model", "gpt-4.1-mini", "--trace", str(out)],
            capture_output=True, text=True, timeout=60, cwd=ROOT,
        )
    assert proc.returncode == 0, proc.stderr
    chat = [json.loads(x) for x in out.read_text().splitlines()
            if json.loads(x)["name"].startswith("chat ")]
    assert [c["name"] for c in chat] == ["chat gpt-4.1-mini"]
    assert chat[0]["kind"] == "CLIENT"
    assert chat[0]["attributes"]["gen_ai.provider.name"] == "openai"
    assert chat[0]["attributes"]["stepswitch.step"] == "Final"


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("not json\n", "bad.jsonl:1: not a JSON line"),
        ('{"name": "x"}\n', "bad.jsonl:1: not a span (missing fields trace_id, span_id, "
                             "kind, start_ns, end_ns)"),
        ('{"name": "x", "trace_id": "t", "span_id": "s", "kind": "INTERNAL", "start_ns": 1}\n',
         "bad.jsonl:1: not a span (missing field end_ns)"),
        ("[1, 2]\n", "bad.jsonl:1: not a span"),
        ("\n", "holds no spans"),
    ],
)
def test_trace_of_a_bad_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, error: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    assert main(["trace", str(bad)]) == 2
    err = capsys.readouterr().err
    assert error in err
    assert err.startswith("stepswitch: error: ")  # worded as every command's errors
    assert len(err.strip().splitlines()) == 1


def test_trace_of_a_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "/nonexistent/x.jsonl"]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_an_untraced_run_never_imports_opentelemetry() -> None:
    code = (
        "import sys, stepswitch as ss\n"
        "from graphs.support import support\n"
        "from stepswitch.testing import ScriptedModel, assistant_message\n"
        "r = support.compile().run_sync('hi', model=ScriptedModel([assistant_message('x')]))\n"
        "assert r.final_output == 'x'\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
