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
from tests._paths import ROOT

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
        ('{"name": "x", "trace_id": "t", "span_id": "s", "kind": "INTERNAL", "start_ns": 1, '
         '"end_ns": 2, "events": [{"name": "e", "attributes": "oops"}]}\n',
         "bad.jsonl:1: not a span (events[0].attributes is not an object)"),
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


def _span(span_id: str, parent: str | None, **extra: object) -> str:
    raw = {"name": "invoke_agent a", "trace_id": "t1", "span_id": span_id,
           "parent_id": parent, "kind": "INTERNAL", "start_ns": 1, "end_ns": 2, **extra}
    return json.dumps(raw) + "\n"


def test_trace_escapes_terminal_sequences_from_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    title = "\x1b]0;pwned\x07\x1b[2K"
    f = tmp_path / "evil.jsonl"
    f.write_text(_span("s1", None, name=f"execute_tool x{title}",
                       attributes={"gen_ai.tool.call.id": f"call{title}"},
                       events=[{"name": "stepswitch.approval.requested",
                                "attributes": {"gen_ai.tool.name": f"t{title}"}}]))
    assert main(["trace", str(f)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "call\\x1b]0;pwned\\x07\\x1b[2K" in out


def test_trace_of_a_chain_of_3000_spans_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "deep.jsonl"
    f.write_text("".join(_span(f"s{i}", f"s{i - 1}" if i else None) for i in range(3000)))
    assert main(["trace", str(f)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3001
    assert lines[-1] == "  " * 3000 + "invoke_agent a  0 µs"


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (_span("a", None) + _span("a", "a"),
         "dup.jsonl:2: span id 'a' is already the id of the span on line 1"),
        (_span("r", None) + _span("a", "b") + _span("b", "a"),
         "dup.jsonl:2: spans form a parent cycle (a → b → a)"),
        (_span("a", "a"), "dup.jsonl:1: spans form a parent cycle (a → a)"),
        ("[" * 5000 + "]" * 5000 + "\n", "dup.jsonl:1: not a JSON line (nested deeper"),
        ('{"n": ' + "9" * 6000 + "}\n", "dup.jsonl:1: not a JSON line (an integer has more"),
    ],
)
def test_trace_refuses_shared_ids_cycles_and_hostile_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, error: str
) -> None:
    f = tmp_path / "dup.jsonl"
    f.write_text(content)
    assert main(["trace", str(f)]) == 2
    err = capsys.readouterr().err
    assert error in err
    assert len(err.strip().splitlines()) == 1


def test_trace_refuses_a_fifo_and_a_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero", str(tmp_path)):
        assert main(["trace", path]) == 2
        err = capsys.readouterr().err
        assert f"{path}: not a regular file" in err, err


def test_trace_refuses_a_file_past_the_size_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stepswitch import _files

    f = tmp_path / "big.jsonl"
    f.write_text(_span("a", None) * 100)
    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 1024)
    assert main(["trace", str(f)]) == 2
    assert "larger than" in capsys.readouterr().err


def test_trace_shows_events_among_children_in_time_order_and_the_error_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = tmp_path / "spans.jsonl"
    spans.write_text("".join([
        _span("a", None, start_ns=100, end_ns=900, events=[
            {"name": "stepswitch.handoff", "time_ns": 500,
             "attributes": {"gen_ai.agent.name": "b"}},
        ]),
        _span("c1", "a", name="chat one", start_ns=200, end_ns=300),
        _span("c2", "a", name="chat two", start_ns=600, end_ns=700, status="ERROR",
              status_description="database down\nsecond line",
              attributes={"error.type": "RuntimeError"}),
    ]))
    assert main(["trace", str(spans)]) == 0
    lines = capsys.readouterr().out.splitlines()
    body = [line.strip() for line in lines[2:]]
    assert body[0].startswith("chat one")
    assert body[1] == "· handoff (agent=b)"  # after the call that made it, before the next
    assert body[2].startswith("chat two")
    assert body[2].endswith("ERROR RuntimeError: database down")


def test_run_trace_writes_the_error_message_of_a_failed_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fail.jsonl"
    code = main(["run", TARGET, "--input", "hi", "--model", "scripted:" + SCRIPT,
                 "--max-turns", "1", "--trace", str(out)])
    assert code == 1
    spans = [json.loads(line) for line in out.read_text().splitlines()]
    failed = [s for s in spans if s["status"] == "ERROR"]
    assert failed and all("status_description" in s for s in failed)
    assert any("MaxTurnsExceeded" in s["attributes"].get("error.type", "") for s in failed)
    capsys.readouterr()
    assert main(["trace", str(out)]) == 0
    tree = capsys.readouterr().out
    assert "ERROR MaxTurnsExceeded: " in tree


def test_trace_of_a_file_cut_off_mid_line_shows_the_spans_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = _span("a", None) + _span("b", "a", name="chat x")
    cut = tmp_path / "cut.jsonl"
    cut.write_text(whole + whole.splitlines()[0][:40].replace('"a"', '"c"'))
    assert main(["trace", str(cut)]) == 0
    captured = capsys.readouterr()
    assert "chat x" in captured.out
    assert captured.err == (f"stepswitch: warning: {cut}:3: the last line is cut off (a run "
                            "stopped while writing it?); showing the 2 span(s) before it\n")
    # a bad line that is not the last, or a last line with its newline, is refused
    cut.write_text(whole + "{not json\n")
    assert main(["trace", str(cut)]) == 2
    assert "cut.jsonl:3: not a JSON line" in capsys.readouterr().err


def test_run_trace_content_records_tool_arguments_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def tool_attrs(flags: list[str]) -> dict[str, object]:
        out = tmp_path / f"run{len(flags)}.jsonl"
        code = main(["run", TARGET, "--input", "refund order 42", "--model",
                     f"scripted:{SCRIPT}", "--approve", "all", "--trace", str(out), *flags])
        assert code == 0
        spans = [json.loads(line) for line in out.read_text().splitlines()]
        attrs: dict[str, object] = next(
            s["attributes"] for s in spans if s["name"] == "execute_tool lookup_order")
        return attrs

    assert "gen_ai.tool.call.arguments" not in tool_attrs([])
    assert tool_attrs(["--trace-content"])["gen_ai.tool.call.arguments"] == '{"order_id": 42}'
    capsys.readouterr()
    assert main(["run", TARGET, "--input", "x", "--model", f"scripted:{SCRIPT}",
                 "--trace-content"]) == 2
    assert "give --trace FILE.jsonl too" in capsys.readouterr().err
