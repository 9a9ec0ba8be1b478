"""The CLI against hostile input and odd files (issue 11), each as a real subprocess:
escaped approval prompts, truncated streams, non-regular output files, shadowing
modules, modules that exit or print at import, machine formats; bad state and script files
in-process."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stepswitch.models import OpenAIServer
from stepswitch.models.script import call, message, raw_reply, truncated
from tests._paths import ROOT
from tests.cli.conftest import run_main
from tests.cli.conftest import run_process as cli

TARGET = "graphs/support.py:support"
NOISE = ("Traceback", "Exception ignored", "Task exception", "Task was destroyed",
         "Unclosed", "unclosed", "RuntimeWarning", "ResourceWarning")


def no_noise(stderr: str) -> None:
    for word in NOISE:
        assert word not in stderr, stderr


# ---- 4: the approval prompt shows arguments escaped ------------------------------------


@pytest.mark.parametrize("approve", ["ask", "all", "none"])
def test_approval_lines_show_control_and_bidi_characters_escaped(
    approve: str, tmp_path: Path
) -> None:
    # \r is JSON whitespace: a raw one sends the cursor back and the rest of the line
    # overwrites what came before; U+202E reverses what follows on screen
    sneaky = '{"order_id": 42,\r"reason": "refund 5 dollars \u202e\u2066"}'
    with OpenAIServer(
        [
            [call("transfer_to_refund", {})],
            [call("process_refund", sneaky)],
            [message("Done.")],
        ]
    ) as server:
        proc = cli("run", TARGET, "--input", "refund", "--model", "m", "--base-url", server.url,
                   "--approve", approve, "--state", str(tmp_path / "s.json"), stdin="y\n")
    assert proc.returncode == 0, proc.stderr
    no_noise(proc.stderr)
    for raw in ("\r", "\u202e", "\u2066"):
        assert raw not in proc.stderr
    assert r'process_refund({"order_id": 42,\r"reason": "refund 5 dollars \u202e\u2066"})' in (
        proc.stderr
    )


# ---- 6 and 21: a truncated stream in the CLI; no asyncio noise -------------------------


def sse_chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    data = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(data)}\n\n"


# the server closes in good order after a fragment: no finish_reason, no [DONE]
CLEAN_CUT = raw_reply(sse_chunk({"role": "assistant", "content": "Your refund of 5000 dol"}),
                      content_type="text/event-stream")
# the connection drops mid-stream
DROPPED = truncated([message("Your refund of 5000 dollars is approved and on its way.")], 4)
# a chunk of the wrong shape mid-stream
MALFORMED = raw_reply(sse_chunk({"role": "assistant", "content": "Hi"})
                      + 'data: {"id": "c", "choices": [{"index": 0, "delta": "x"}]}\n\n'
                      + sse_chunk({}, "stop"), content_type="text/event-stream")


@pytest.mark.parametrize(
    ("api", "step", "says"),
    [
        ("chat", CLEAN_CUT, "ended before the model finished"),
        ("chat", DROPPED, "broke off mid-answer"),
        ("responses", DROPPED, "broke off mid-answer"),
        ("chat", MALFORMED, "malformed response: choices[0].delta must be an object"),
    ],
    ids=["chat-clean-cut", "chat-dropped", "responses-dropped", "chat-malformed"],
)
def test_a_broken_stream_fails_the_run_saves_it_and_prints_no_noise(
    api: str, step: Any, says: str, tmp_path: Path
) -> None:
    state = tmp_path / "run.json"
    with OpenAIServer([[call("lookup_order", {"order_id": 42})], step]) as server:
        proc = cli("run", TARGET, "--input", "refund", "--model", "m", "--base-url", server.url,
                   "--api", api, "--stream", "--state", str(state))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""  # a fragment is not printed as the answer
    assert "stepswitch: error: the run failed:" in proc.stderr
    assert says in proc.stderr
    assert "raised in your code" not in proc.stderr
    assert f"saved the run so far to {state}" in proc.stderr
    no_noise(proc.stderr)
    saved = json.loads(state.read_text())
    kinds = [i["type"] for i in saved["body"]["items"]]
    assert kinds == ["tool_call_item", "tool_call_output_item"]


# ---- 11: output files that are not regular files ---------------------------------------


def test_compile_to_dash_writes_the_runner_to_stdout() -> None:
    proc = cli("compile", TARGET, "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (ROOT / "codegen" / "support.py").read_text()


def test_compile_to_dev_stdout_writes_and_does_not_hang() -> None:
    proc = cli("compile", TARGET, "-o", "/dev/stdout", timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith((ROOT / "codegen" / "support.py").read_text())


def test_compile_to_dev_zero_writes_without_reading_it() -> None:
    proc = cli("compile", TARGET, "-o", "/dev/zero", timeout=30)
    assert proc.returncode == 0, proc.stderr
    no_noise(proc.stderr)


def test_compile_check_against_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "runner.py"
    os.mkfifo(fifo)
    proc = cli("compile", TARGET, "-o", str(fifo), "--check", timeout=30)
    assert proc.returncode == 2
    assert f"{fifo}: not a regular file" in proc.stderr
    no_noise(proc.stderr)


def test_compile_check_against_dev_zero_is_refused() -> None:
    proc = cli("compile", TARGET, "-o", "/dev/zero", "--check", timeout=30)
    assert proc.returncode == 2
    assert "/dev/zero: not a regular file" in proc.stderr


# ---- 12: modules next to the workflow that shadow what stepswitch needs ---------------


WORKFLOW = """
import stepswitch as ss
agent = ss.Agent("helper", "Help.")
wf = ss.Workflow(name="w", entry=agent)
"""


def test_an_openai_py_or_http_py_beside_the_workflow_does_not_break_run(tmp_path: Path) -> None:
    (tmp_path / "wf.py").write_text(WORKFLOW)
    for shadow in ("openai.py", "http.py"):
        (tmp_path / shadow).write_text('raise SystemExit("the shadow was imported")\n')
    with OpenAIServer([[message("Hello there.")]]) as server:
        proc = cli("run", "wf.py:wf", "--input", "hi", "--model", "m", "--base-url", server.url,
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Hello there.\n"
    no_noise(proc.stderr)


def test_a_shadowing_module_the_workflow_imports_is_named(tmp_path: Path) -> None:
    (tmp_path / "wf.py").write_text("import http.client\n" + WORKFLOW)
    (tmp_path / "http.py").write_text("# my notes on http\n")
    proc = cli("check", "wf.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "http.py" in proc.stderr and "shadows" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("name", "argv"), [
    ("redis", ["run", "wf.py:wf", "--input", "hi", "--session", "redis://127.0.0.1:6379/0"]),
    ("psycopg", ["run", "wf.py:wf", "--input", "hi",
                 "--session", "postgresql://postgres@127.0.0.1/test"]),
    ("temporalio", ["worker", "wf.py:wf", "--address", "127.0.0.1:9", "--task-queue", "q"]),
    ("opentelemetry", ["run", "wf.py:wf", "--input", "hi", "--trace", "t.jsonl"]),
])
def test_a_file_shadowing_an_optional_dependency_is_named_not_reported_missing(
    name: str, argv: list[str], tmp_path: Path
) -> None:
    # the extras are installed; a same-named file beside the workflow is imported instead
    (tmp_path / "wf.py").write_text(WORKFLOW)
    (tmp_path / f"{name}.py").write_text("x = 1\n")
    (tmp_path / "s.json").write_text('{"steps": [{"output": [{"type": "message", "text": "hi"}]}]}')
    proc = cli(*argv, "--model", "scripted:s.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.endswith(f"{name}.py shadows the installed package {name!r}: it is imported "
                         "in its place (its folder comes first on the import path); rename it")
    assert "pip install" not in line


# ---- 13: hostile state and script files ------------------------------------------------


BAD_JSON: dict[str, bytes] = {
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "huge_int": b'{"steps": [], "n": ' + b"9" * 10_000 + b"}",
    "not_utf8": b'{"steps": ["\xff\xfe"]}',
}


# in-process: reading a file is no matter of the process (run_main checks no traceback)
@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_a_hostile_script_file_is_one_line_naming_it(
    kind: str, tmp_path: Path, in_root: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "script.json"
    path.write_bytes(BAD_JSON[kind])
    code, _, err = run_main(["run", TARGET, "--input", "hi", "--model", f"scripted:{path}"],
                            capsys)
    assert code == 2, err
    [line] = err.strip().splitlines()
    assert str(path) in line


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_a_hostile_state_file_is_one_line_naming_it(
    kind: str, tmp_path: Path, in_root: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(BAD_JSON[kind])
    script = tmp_path / "s.json"
    script.write_text("[]")
    code, _, err = run_main(["run", TARGET, "--resume", str(path), "--model",
                             f"scripted:{script}"], capsys)
    assert code == 2, err
    [line] = err.strip().splitlines()
    assert str(path) in line


# ---- 16: modules that exit at import ---------------------------------------------------


def test_check_dir_reports_a_module_that_exits_and_checks_the_others(tmp_path: Path) -> None:
    (tmp_path / "a_quits.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "b_broken.py").write_text(textwrap.dedent("""
        import stepswitch as ss
        top = ss.Agent("top", "Top.", handoffs=["ghost"])
        wf = ss.Workflow(name="w", entry=top)
    """))
    (tmp_path / "c_fails.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "d_clean.py").write_text(WORKFLOW)
    proc = cli("check", ".", cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "a_quits.py" in proc.stderr and "exited while being imported" in proc.stderr
    assert "c_fails.py" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "b_broken.py:wf" in proc.stdout and "SW103" in proc.stdout  # still checked
    assert "d_clean.py:wf" in proc.stdout


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("class Boom(BaseException):\n    pass\n\n\nraise Boom('bang')\n",
         "importing it raised Boom: bang at {path}:5, a BaseException that is not an "
         "Exception"),
        ("class Mute(BaseException):\n    def __str__(self):\n        raise ValueError\n"
         "\n\nraise Mute\n", "importing it raised Mute at {path}:6"),
        ("raise GeneratorExit('odd')\n", "importing it raised GeneratorExit: odd at {path}:1"),
    ],
)
def test_a_module_raising_a_base_exception_at_import_is_one_line(
    body: str, said: str, tmp_path: Path
) -> None:
    path = tmp_path / "boom.py"
    path.write_text(body)
    proc = cli("check", "boom.py", cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("stepswitch: error: boom.py: ")
    assert said.format(path=path) in line


def test_a_file_target_with_a_relative_import_is_told_the_module_form(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "agents.py").write_text(WORKFLOW)
    (tmp_path / "app" / "main.py").write_text("from .agents import wf\n")
    proc = cli("check", "app/main.py", cwd=tmp_path)
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert "app/main.py: a relative import at " in line
    assert "module form `package.module:NAME` (here `app.main:NAME`)" in line
    proc = cli("check", "app.main:wf", cwd=tmp_path)  # the form it names works
    assert proc.returncode == 0, proc.stderr


# ---- 20: import-time prints keep machine formats valid ---------------------------------


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_import_time_prints_go_to_stderr_not_into_machine_output(
    fmt: str, tmp_path: Path
) -> None:
    (tmp_path / "wf.py").write_text('print("loading my workflow...")\n' + WORKFLOW)
    proc = cli("check", "wf.py", "--format", fmt, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "loading my workflow..." in proc.stderr
    assert "loading my workflow..." not in proc.stdout
    if fmt == "json":
        records: list[Any] = [json.loads(line) for line in proc.stdout.splitlines()]
        assert records
    elif fmt == "sarif":
        assert json.loads(proc.stdout)["version"] == "2.1.0"


# ---- 22: --format github prints only workflow commands ---------------------------------


def test_github_format_prints_only_workflow_commands() -> None:
    proc = cli("check", "examples/broken_workflow.py", "graphs", "--format", "github")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines and all(line.startswith("::") for line in lines), proc.stdout
    assert proc.stderr == ""


# ---- 15: names holding a lone surrogate ------------------------------------------------


SURROGATES = """
import stepswitch as ss
b = ss.Agent(name="b\\ud800x", instructions="B.")
a = ss.Agent(name="a", instructions="A.", handoffs=[b])
wf = ss.Workflow(name="w\\udfff", entry=a, agents=[a, b])
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "wf.py"],
        ["render", "wf.py"],
        ["render", "wf.py", "--format", "dot"],
        ["render", "wf.py", "--view", "machine"],
        ["render", "wf.py", "--format", "svg", "-o", "out.svg"],
        ["check", "wf.py"],
    ],
    ids=lambda argv: "-".join(argv),
)
def test_names_with_lone_surrogates_are_shown_escaped(argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "wf.py").write_text(SURROGATES)
    proc = cli(*argv, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    shown = proc.stdout + ((tmp_path / "out.svg").read_text() if "out.svg" in argv else "")
    if argv[0] != "check":
        assert "ud800" in shown  # the name, escaped, not dropped


# ---- 11, continued: the run's own files are never read or replaced unless regular ------


@pytest.mark.parametrize("flag", ["--resume", "--state", "--model"])
def test_run_refuses_a_fifo_or_device_for_its_files(flag: str, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    script = tmp_path / "s.json"
    script.write_text("[]")
    args = {
        "--resume": ["--resume", str(fifo), "--model", f"scripted:{script}"],
        "--state": ["--input", "hi", "--state", "/dev/stdout", "--model", f"scripted:{script}"],
        "--model": ["--input", "hi", "--model", f"scripted:{fifo}"],
    }[flag]
    proc = cli("run", TARGET, *args, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert "not a regular file" in proc.stderr
    assert "Traceback" not in proc.stderr


UNREACHABLE_SURROGATE = """
import stepswitch as ss
b = ss.Agent(name="b\\ud800x", instructions="B.")
a = ss.Agent(name="a", instructions="A.")
wf = ss.Workflow(name="w", entry=a, agents=[a, b])
"""


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_escape_a_lone_surrogate_and_stay_valid(fmt: str, tmp_path: Path) -> None:
    (tmp_path / "wf.py").write_text(UNREACHABLE_SURROGATE)
    proc = cli("check", "wf.py", "--format", fmt, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    parsed = [json.loads(line) for line in text.splitlines()] if fmt == "json" else [
        json.loads(text)]
    assert parsed and "b\ud800x" in json.dumps(parsed, ensure_ascii=False)


def completion(message: dict[str, Any]) -> str:
    return json.dumps({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", **message}}],
    })


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"content": "Refunding \ud800 now."}, "choices[0].message.content"),
        ({"content": None, "tool_calls": [{"id": "c9", "type": "function", "function": {
            "name": "lookup_order", "arguments": '{"order_id": 4\udc00}'}}]},
         "choices[0].message.tool_calls[0].function.arguments"),
    ],
    ids=["content", "arguments"],
)
def test_a_model_answer_holding_a_lone_surrogate_is_refused_and_the_run_kept(
    message: dict[str, Any], field: str, tmp_path: Path
) -> None:
    # JSON can carry a lone surrogate as an escape; it is no text: it could be neither
    # sent back to the model nor saved, so the answer is refused where it arrives
    state = tmp_path / "run.json"
    with OpenAIServer([[call("lookup_order", {"order_id": 42})],
                       raw_reply(completion(message))]) as server:
        proc = cli("run", TARGET, "--input", "refund", "--model", "m", "--base-url", server.url,
                   "--api", "chat", "--state", str(state))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"malformed response: {field} holds a lone surrogate" in proc.stderr
    assert f"saved the run so far to {state}" in proc.stderr
    import stepswitch as ss

    saved = ss.RunState.from_json(state.read_text(encoding="utf-8"))
    assert [i.type for i in saved.items] == ["tool_call_item", "tool_call_output_item"]


def test_streamed_text_cannot_hide_the_approval_prompt(tmp_path: Path) -> None:
    # ESC[8m conceals what follows on most terminals; ESC[2J clears the screen
    hide = "Sure.\x1b[8m\x1b[2J\r"
    with OpenAIServer([[message(hide), call("transfer_to_refund", {})],
                       [call("process_refund", {"order_id": 42})]]) as server:
        proc = cli("run", TARGET, "--input", "refund", "--model", "m", "--base-url", server.url,
                   "--stream", "--approve", "ask", "--state", str(tmp_path / "s.json"),
                   stdin="p\n")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stderr and "\r" not in proc.stderr
    assert "Sure.\\x1b[8m\\x1b[2J\\r" in proc.stderr
    assert 'approve process_refund({"order_id": 42})' in proc.stderr
