"""``stepswitch run``: scripted transcripts and the real client over HTTP, pausing,
saving, resuming, approvals, and a clear message (never a traceback) for mistakes."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from stepswitch.cli.main import main
from stepswitch.models import OpenAIServer
from stepswitch.models.script import call, error_reply, message, raw_reply, refusal
from tests._paths import ROOT
from tests.cli.conftest import run_main

TARGET = "graphs/support.py:support"
SCRIPT = [
    {"output": [{"type": "function_call", "name": "lookup_order", "arguments": {"order_id": 42}}]},
    {"output": [{"type": "function_call", "name": "transfer_to_refund", "arguments": {}}]},
    {
        "output": [
            {"type": "function_call", "name": "process_refund", "arguments": {"order_id": 42}}
        ]
    },
    {"output": [{"type": "message", "text": "Refunded order 42."}]},
]
HTTP_SCRIPT = [
    [call("lookup_order", {"order_id": 42})],
    [message("Passing you to refunds."), call("transfer_to_refund", {})],
    [call("process_refund", {"order_id": 42})],
    [message("Refunded order 42.")],
]


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPSWITCH_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"steps": SCRIPT}))
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``stepswitch run ARGV`` in this process."""
    return run_main(["run", *argv], capsys)


def test_scripted_run_with_every_approval_given(
    script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        [TARGET, "--input", "refund 42", "--model", f"scripted:{script}", "--approve", "all"],
        capsys,
    )
    assert code == 0
    assert out == "Refunded order 42.\n"
    lines = err.splitlines()
    assert lines[0] == "→ agent triage"
    assert '  tool lookup_order({"order_id": 42})' in lines
    assert "  handoff triage → refund" in lines
    assert lines.count("→ agent refund") == 1  # not said again when the run resumes
    assert any(line.startswith("  approved process_refund") for line in lines)
    assert lines[-1].startswith("done: last agent refund, 4 model call(s)")


def test_pause_save_then_resume_in_another_invocation(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "run.json"
    code, out, err = run(
        [TARGET, "--input", "refund 42", "--model", f"scripted:{script}", "--state", str(state)],
        capsys,
    )
    assert code == 0 and out == ""
    assert "paused: 1 call(s) wait for approval:" in err
    assert "process_refund" in err and f"--resume {state}" in err
    assert json.loads(state.read_text())["body"]["current_agent"] == "refund"

    code, out, err = run(
        [TARGET, "--resume", str(state), "--model", f"scripted:{script}", "--approve", "all"],
        capsys,
    )
    assert code == 0
    assert out == "Refunded order 42.\n"
    assert "→ refunded order 42 (customer request)" in err


def test_pause_without_a_state_file_exits_1(
    script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        [TARGET, "--input", "refund 42", "--model", f"scripted:{script}", "--approve", "none"],
        capsys,
    )
    assert code == 1
    assert "rerun with --state FILE" in err


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("y\n", "refunded order 42"), ("n\n", "rejected process_refund"),
     ("\n", "rejected process_refund"),  # the default, N
     ("maybe\nyes\n", "answer y or n (or p to pause): ")],  # a typo is asked again
)
def test_ask_reads_the_answer_from_the_terminal(
    answer: str,
    expected: str,
    script: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(answer))
    code, out, err = run(
        [TARGET, "--input", "refund 42", "--model", f"scripted:{script}", "--approve", "ask"],
        capsys,
    )
    assert code == 0
    assert 'approve process_refund({"order_id": 42}) for agent refund? [y/N/p(ause)]' in err
    assert expected in err
    assert out == "Refunded order 42.\n"


def test_ask_at_end_of_input_pauses(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s.json"
    code, _, err = run(
        [
            TARGET,
            "--input",
            "x",
            "--model",
            f"scripted:{script}",
            "--approve",
            "ask",
            "--state",
            str(state),
        ],
        capsys,
    )
    assert code == 0 and state.exists() and "paused" in err


def test_no_key_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([TARGET, "--input", "hi"], capsys)
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith("stepswitch: error: no OpenAI API key: set OPENAI_API_KEY")


@pytest.mark.parametrize(
    ("argv", "phrase"),
    [
        ([TARGET], "--input TEXT is required"),
        ([TARGET, "--input", "x", "--resume", "s.json"], "drop --input"),
        ([TARGET, "--resume", "/nonexistent/s.json", "--model", "scripted:x.json"], "cannot read"),
        ([TARGET, "--input", "x", "--model", "scripted:/nonexistent.json"], "cannot read"),
        (["docs", "--input", "x"], "no Workflow or SDK agent found"),
        ([TARGET, "--input", "x", "--max-turns", "0"], "--max-turns must be at least 1"),
    ],
)
def test_usage_mistakes_exit_2(
    argv: list[str], phrase: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2
    assert phrase in err


def test_a_bad_script_file_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": [\n  {"output": [}\n]}')
    code, _, err = run([TARGET, "--input", "x", "--model", f"scripted:{bad}"], capsys)
    assert code == 2 and f"{bad}:2: not valid JSON" in err


def test_a_tampered_state_is_refused(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "run.json"
    run([TARGET, "--input", "x", "--model", f"scripted:{script}", "--state", str(state)], capsys)
    state.write_text(state.read_text().replace("process_refund", "lookup_order", 1))
    code, _, err = run([TARGET, "--resume", str(state), "--model", f"scripted:{script}"], capsys)
    assert code == 2 and "stepswitch: error:" in err


def _saved_paused_run(script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    state = tmp_path / "run.json"
    code, _, _ = run(
        [TARGET, "--input", "x", "--model", f"scripted:{script}", "--state", str(state)], capsys
    )
    assert code == 0 and state.exists()
    return state


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda text: text[: len(text) // 2], "not valid JSON"),
        (lambda text: text.replace("process_refund", "lookup_order", 1), "digest"),
        (lambda text: "{}", "not a stepswitch run state"),
    ],
    ids=["truncated", "tampered", "not-a-state"],
)
def test_a_damaged_state_file_is_refused_naming_the_file(
    damage: Any,
    says: str,
    script: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = _saved_paused_run(script, tmp_path, capsys)
    state.write_text(damage(state.read_text()))
    code, _, err = run([TARGET, "--resume", str(state), "--model", f"scripted:{script}"], capsys)
    assert code == 2
    assert err.startswith(f"stepswitch: error: --resume {state}: ") and says in err


def test_a_state_file_that_is_not_text_is_refused(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "run.json"
    state.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run([TARGET, "--resume", str(state), "--model", f"scripted:{script}"], capsys)
    assert code == 2 and f"--resume {state}: not a saved run" in err


def test_a_state_of_another_workflow_is_refused_before_anything_runs(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every call of this state awaits approval, so with --approve none it would pause
    # again at once and be saved as if it belonged to the other workflow
    state = _saved_paused_run(script, tmp_path, capsys)
    other = tmp_path / "other.py"
    other.write_text(
        "import stepswitch as ss\n"
        "wf = ss.Workflow(name='other', entry=ss.Agent(name='solo', instructions='x'))\n"
    )
    saved = tmp_path / "again.json"
    code, _, err = run(
        [
            f"{other}:wf",
            "--resume",
            str(state),
            "--model",
            f"scripted:{script}",
            "--approve",
            "none",
            "--state",
            str(saved),
        ],
        capsys,
    )
    assert code == 2
    assert f"--resume {state}: the saved run is of workflow 'support', not 'other'" in err
    assert not saved.exists()


def test_streamed_scripted_run_shows_each_message_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scripted model streams no text deltas: with --stream its messages are printed
    whole when they complete (they used to be dropped)."""
    steps = [
        {"output": [{"type": "message", "text": "Let me pass you to refunds."},
                    {"type": "function_call", "name": "transfer_to_refund", "arguments": {}}]},
        *SCRIPT[2:],
    ]
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"steps": steps}))
    code, out, err = run(
        [TARGET, "--input", "refund 42", "--model", f"scripted:{path}", "--approve", "all",
         "--stream"],
        capsys,
    )
    assert code == 0, err
    assert out == "Refunded order 42.\n"
    lines = err.splitlines()
    assert lines.count("  triage: Let me pass you to refunds.") == 1
    assert lines.count("  refund: Refunded order 42.") == 1
    assert err.count("Let me pass you to refunds.") == 1


def test_streamed_progress_prints_each_message_once() -> None:
    """Deltas shown for a message stand for it; a message with none is printed whole,
    also when one response holds several messages."""
    from types import SimpleNamespace

    from stepswitch.cli._console import Progress
    from stepswitch.runtime.events import RawResponsesStreamEvent, RunItemStreamEvent
    from stepswitch.runtime.items import MessageOutputItem

    def delta(text: str) -> RawResponsesStreamEvent:
        return RawResponsesStreamEvent(SimpleNamespace(type="response.output_text.delta",
                                                       delta=text))

    def done(text: str) -> RunItemStreamEvent:
        return RunItemStreamEvent("message_output_created", MessageOutputItem("a", text))

    buf = io.StringIO()
    out = Progress(buf, stream_text=True)
    for event in (delta("One "), delta("two."), delta("Three."), done("One two."),
                  done("Three."), done("Unstreamed."), delta("Four."), done("Four.")):
        out.event(event)
    out.end_text()
    text = buf.getvalue()
    for sentence in ("One ", "two.", "Three.", "Four."):
        assert text.count(sentence) == 1, text
    assert text.count("  a: Unstreamed.\n") == 1, text


def test_script_too_short_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = tmp_path / "short.json"
    short.write_text(json.dumps(SCRIPT[:1]))
    code, _, err = run([TARGET, "--input", "x", "--model", f"scripted:{short}"], capsys)
    assert code == 2 and "the script has 1 step(s)" in err


# ---- over real HTTP ------------------------------------------------------------------


def http_args(server: OpenAIServer, *extra: str) -> list[str]:
    return [TARGET, "--input", "refund 42", "--model", "gpt-test", "--base-url", server.url, *extra]


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_streamed_run_over_http_shows_the_text_as_it_comes(
    api: str, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.add(*HTTP_SCRIPT)
    code, out, err = run(
        http_args(openai_server, "--api", api, "--stream", "--approve", "all"), capsys
    )
    assert code == 0, err
    assert out == "Refunded order 42.\n"
    assert "  Passing you to refunds.\n" in err
    # shown once, as it came: the completed message is not printed again
    assert err.count("Passing you to refunds.") == 1
    assert all(r.stream and r.api == api for r in openai_server.requests)
    assert openai_server.requests[0].headers["authorization"] == "Bearer unused"
    openai_server.assert_complete()


def test_unstreamed_run_over_http_uses_plain_requests(
    openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_server.add(*HTTP_SCRIPT)
    code, _, err = run(http_args(openai_server, "--approve", "all"), capsys)
    assert code == 0, err
    assert "  triage: Passing you to refunds." in err
    assert not any(r.stream for r in openai_server.requests)
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("step", "code", "phrase"),
    [
        (error_reply(401), 2, "rejected the API key"),
        (error_reply(404), 2, "check the model name and the base URL"),
        (raw_reply('{"id": "r", "output": [{"ty'), 1, "the run failed: "),
    ],
)
def test_server_failures_are_one_clear_message(
    step: Any,
    code: int,
    phrase: str,
    openai_server: OpenAIServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    openai_server.add(step)
    got, _, err = run(http_args(openai_server), capsys)
    assert got == code
    assert phrase in err
    assert "stepswitch: error:" in err


def test_rate_limit_is_retried(
    openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.add(error_reply(429, retry_after=0.01), [message("Hello.")])
    code, out, _ = run(http_args(openai_server), capsys)
    assert code == 0 and out == "Hello.\n"


def test_a_run_paused_here_resumes_in_a_subprocess_against_the_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAIServer(HTTP_SCRIPT, api_key="sk-sub") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-sub")
        state = tmp_path / "state.json"
        code, _, err = run(http_args(server, "--api", "chat", "--state", str(state)), capsys)
        assert code == 0 and "paused: 1 call(s)" in err
        # these sources, not whatever stepswitch the interpreter would find installed
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
        env.pop("OPENAI_BASE_URL", None)
        second = subprocess.run(
            [
                sys.executable,
                "-m",
                "stepswitch",
                "run",
                TARGET,
                "--resume",
                str(state),
                "--model",
                "gpt-test",
                "--base-url",
                server.url,
                "--api",
                "chat",
                "--approve",
                "all",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert second.returncode == 0, second.stderr
    assert second.stdout == "Refunded order 42.\n"
    assert "Traceback" not in second.stderr
    assert "→ refunded order 42 (customer request)" in second.stderr
    assert [r.api for r in server.requests] == ["chat"] * 4
    assert {r.headers["authorization"] for r in server.requests} == {"Bearer sk-sub"}
    server.assert_complete()


def test_a_failed_run_is_saved_and_resumes_where_it_stopped(
    openai_server: OpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = error_reply(500, retry_after=0.01)
    openai_server.add([call("lookup_order", {"order_id": 42})], down, down, down)
    state = tmp_path / "failed.json"
    code, _, err = run(http_args(openai_server, "--state", str(state)), capsys)
    assert code == 1
    assert (
        "the run failed: model 'gpt-test'" in err and "HTTP 500 after the client's retries" in err
    )
    assert f"retry with --resume {state}" in err

    openai_server.add([message("Order 42 has shipped.")])
    code, out, _ = run(
        [TARGET, "--resume", str(state), "--model", "gpt-test", "--base-url", openai_server.url],
        capsys,
    )
    assert code == 0 and out == "Order 42 has shipped.\n"
    last = openai_server.requests[-1].body["input"]
    assert (
        last[-1]["output"] == "order 42: shipped, 1 item, paid 30.00"
    )  # the history carries it on
    openai_server.assert_complete()


def test_a_refusal_is_said_and_exits_1(
    openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.add([refusal("I can't help with that.")])
    code, out, err = run(http_args(openai_server), capsys)
    assert code == 1 and out == ""
    assert "  triage refused: I can't help with that." in err
    assert "stepswitch: the model refused: I can't help with that." in err


def test_a_base_url_that_is_not_a_url_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([TARGET, "--input", "x", "--base-url", "localhost:8000"], capsys)
    assert code == 2 and "--base-url 'localhost:8000' is not an http(s) URL" in err


def test_max_turns_stops_the_run_and_a_larger_budget_resumes_it(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "limit.json"
    code, _, err = run(
        [
            TARGET,
            "--input",
            "refund 42",
            "--model",
            f"scripted:{script}",
            "--max-turns",
            "1",
            "--state",
            str(state),
        ],
        capsys,
    )
    assert code == 1 and "the run failed: Max turns (1) exceeded" in err
    # the CLI's advice is a command, not the Python API's (exc.run_data, RunConfig)
    assert "exc.run_data" not in err and "RunConfig" not in err
    assert f"retry with --resume {state} --max-turns 2" in err
    assert state.exists()
    code, out, _ = run(
        [
            TARGET,
            "--resume",
            str(state),
            "--model",
            f"scripted:{script}",
            "--max-turns",
            "10",
            "--approve",
            "all",
        ],
        capsys,
    )
    assert code == 0 and out == "Refunded order 42.\n"


def test_an_exception_from_the_users_code_is_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "fragile_wf.py").write_text(
        "import stepswitch as ss\n"
        "\n"
        "def instructions(ctx, agent):\n"
        '    raise KeyError("no prompt")\n'
        "\n"
        'agent = ss.Agent(name="a", instructions=instructions)\n'
        'wf = ss.Workflow(name="fragile", entry=agent)\n'
    )
    script = tmp_path / "s.json"
    script.write_text(json.dumps([[{"type": "message", "text": "hi"}]]))
    code, _, err = run(
        [f"{tmp_path}/fragile_wf.py:wf", "--input", "x", "--model", f"scripted:{script}"], capsys
    )
    assert code == 1
    assert "the run failed: KeyError: 'no prompt' (raised in your code at " in err
    assert "fragile_wf.py:4)" in err


def test_a_state_file_in_a_new_folder_is_saved_there(
    script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "runs" / "today" / "run.json"
    code, _, err = run(
        [TARGET, "--input", "x", "--model", f"scripted:{script}", "--state", str(state)], capsys
    )
    assert code == 0 and f"saved the run to {state}" in err
    assert json.loads(state.read_text())["body"]["current_agent"] == "refund"


@pytest.mark.parametrize("where", ["folder", "under-a-file"])
def test_a_state_path_it_cannot_save_to_is_refused_before_the_run_starts(
    where: str, script: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "plain.txt"
    blocker.write_text("x")
    state = tmp_path if where == "folder" else blocker / "run.json"
    code, _, err = run(
        [TARGET, "--input", "x", "--model", f"scripted:{script}", "--state", str(state)], capsys
    )
    assert code == 2 and err.startswith(f"stepswitch: error: --state {state}: ")
    assert "→ agent" not in err  # nothing ran: no model call, no tool


def test_a_tool_that_raises_with_no_failure_function_fails_the_run_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "boom.py").write_text(
        "import stepswitch as ss\n"
        "\n"
        "@ss.function_tool(failure_error_function=None)\n"
        "def pick(x: int) -> str:\n"
        '    """Pick."""\n'
        "    return {1: 'one'}[x]\n"
        "\n"
        "wf = ss.Workflow(name='w', entry=ss.Agent(name='a', instructions='x', tools=[pick]))\n"
    )
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"steps": [
        {"output": [{"type": "function_call", "name": "pick", "arguments": {"x": 5}}]},
        {"output": [{"type": "message", "text": "done"}]},
    ]}))
    code, _, err = run([f"{tmp_path}/boom.py:wf", "--input", "hi", "--model",
                        f"scripted:{script}"], capsys)
    assert code == 1  # a failed run, not a usage error
    assert err.strip().splitlines()[-1] == (
        "stepswitch: error: the run failed: Error running tool pick: KeyError: 5 "
        f"(raised in your code at {tmp_path}/boom.py:6)"
    )


def test_a_scripted_delay_is_waited_out_in_process_and_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/models.md: "delay" holds an answer back in process too (it once did only over
    # HTTP); the two research calls of one response wait at the same time, not in turn
    answer = {"output": [{"type": "message", "text": '{"summary": "x"}'}], "delay": 1.5}
    path = tmp_path / "slow.json"
    path.write_text(json.dumps([
        [{"type": "function_call", "name": "research", "arguments": {"input": "a"}},
         {"type": "function_call", "name": "research", "arguments": {"input": "b"}}],
        answer, answer,
        [{"type": "message", "text": "both researched"}],
    ]))
    began = time.monotonic()
    code, out, err = run([TARGET, "--input", "hi", "--model", f"scripted:{path}"], capsys)
    took = time.monotonic() - began
    assert code == 0, err
    assert out == "both researched\n"
    assert err.count('    → {"summary":"x"}') == 2
    assert took >= 1.5  # waited
    assert took < 2.9  # in parallel: one after the other would be 3 s and more


_ECHO_MODEL = '''
from stepswitch.runtime.model import ModelResponse
from stepswitch.testing import assistant_message


class Echo:
    """Says how many items it was sent: a model of the user's own."""

    async def get_response(self, request):
        return ModelResponse((assistant_message(f"echo of {len(request.input)} item(s)"),))


model = Echo()
'''


def test_model_from_a_file_as_the_worker_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `stepswitch worker --model FILE.py:NAME` is tried in process first: no API key needed
    (tmp_path / "mymodel.py").write_text(_ECHO_MODEL)
    code, out, err = run([TARGET, "--input", "hi", "--model", f"{tmp_path}/mymodel.py:model"],
                         capsys)
    assert code == 0, err
    assert out == "echo of 1 item(s)\n"
    code, _, err = run([TARGET, "--input", "hi", "--model", f"{tmp_path}/mymodel.py:nope"],
                       capsys)
    assert code == 2
    assert err == (f"stepswitch: error: --model {tmp_path}/mymodel.py:nope: "
                   f"{tmp_path}/mymodel.py has no model named 'nope' (an object with async "
                   "get_response(request))\n")
    code, _, err = run([TARGET, "--input", "hi", "--model", "missing.py:model"], capsys)
    assert code == 2 and err == "stepswitch: error: --model missing.py:model: no file missing.py\n"


_GREET_APP = '''
from dataclasses import dataclass

import stepswitch as ss


@dataclass
class Who:
    name: str


def make() -> Who:
    return Who("ann")


@ss.function_tool(needs_approval=True)
def greet(ctx: ss.RunContext[Who], loud: bool) -> str:
    """Greet the user."""
    return f"hello {ctx.context.name}"


desk = ss.Agent(name="desk", instructions="Greet.", tools=[greet])
wf = ss.Workflow("hello", desk, agents=[desk], context_type=Who)
'''


def test_the_continue_hint_repeats_the_flags_the_resumption_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hint once dropped --context and --model, so the command it printed failed
    monkeypatch.chdir(tmp_path)
    (tmp_path / "greetapp.py").write_text(_GREET_APP)
    (tmp_path / "my script.json").write_text(json.dumps([
        [{"type": "function_call", "name": "greet", "arguments": {"loud": True}}],
        [{"type": "message", "text": "greeted"}],
    ]))
    code, _, err = run(["greetapp.py:wf", "--input", "hi", "--model", "scripted:my script.json",
                        "--context", "greetapp:make", "--state", "st.json"], capsys)
    assert code == 0, err
    hint = err.split("continue with: ", 1)[1].strip()
    assert hint == ("stepswitch run greetapp.py:wf --resume st.json --approve all "
                    "--model 'scripted:my script.json' --context greetapp:make")
    command = shlex.split(hint)
    assert command[0] == "stepswitch"
    code, out, err = run(command[2:], capsys)  # exactly as printed
    assert code == 0, err
    assert out == "greeted\n"
    assert "    → hello ann" in err


def test_a_flow_run_shows_its_steps_between_the_agents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the progress once showed only `→ agent` lines: half of a flow's graph was missing
    path = tmp_path / "judge.json"
    path.write_text(json.dumps([
        [{"type": "message", "text": "A dragon learns to knit."}],
        [{"type": "message", "text": '{"feedback": "fine", "score": "pass"}'}],
    ]))
    code, _, err = run(["graphs/judge.py:judge", "--input", "a story",
                        "--model", f"scripted:{path}"], capsys)
    assert code == 0, err
    moves = [line for line in err.splitlines() if line.startswith("→ ")]
    assert moves == ["→ step take_request", "→ agent story_outline_generator",
                     "→ step keep_outline", "→ agent evaluator", "→ step final_outline"]
    path.write_text(json.dumps([
        [{"type": "message", "text": "hola"}], [{"type": "message", "text": "buenas"}],
        [{"type": "message", "text": "saludos"}], [{"type": "message", "text": "hola"}],
    ]))
    code, _, err = run(["graphs/translation.py:translation", "--input", "hello",
                        "--model", f"scripted:{path}"], capsys)
    assert code == 0, err
    moves = [line for line in err.splitlines() if line.startswith("→ ")]
    assert moves == ["→ step three_attempts", "→ fan-out spanish_agent ×3",
                     "→ step list_translations", "→ agent translation_picker"]


def test_a_misspelt_script_key_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[{"outptu": []}]')
    code, _, err = run([TARGET, "--input", "hi", "--model", f"scripted:{path}"], capsys)
    assert code == 2
    assert err == (f"stepswitch: error: {path}: step 1: expected one of the keys output, "
                   "error, raw, got 'outptu' (did you mean 'output'?)\n")


CONTEXT_APP = '''
from dataclasses import dataclass
import stepswitch as ss

@dataclass
class Shop:
    name: str

def instructions(ctx, agent):
    return f"You work at {ctx.context.name}."

clerk = ss.Agent(name="clerk", instructions=instructions)
wf = ss.Workflow(name="shop", entry=clerk)
'''


def test_instructions_reading_a_context_the_run_lacks_say_pass_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ctx_instructions_app.py").write_text(CONTEXT_APP)
    (tmp_path / "s.json").write_text('[[{"type": "message", "text": "hi"}]]')
    monkeypatch.chdir(tmp_path)
    code = main(["run", "ctx_instructions_app.py:wf", "--input", "hi", "--model",
                 "scripted:s.json"])
    err = capsys.readouterr().err
    assert code == 1
    [line] = [x for x in err.splitlines() if x.startswith("stepswitch: error:")]
    assert "'NoneType' object has no attribute 'name'" in line
    assert line.endswith("the run has no context object (ctx.context is None): pass "
                         "`--context module:factory`, a function returning it")


def test_a_workflow_with_errors_is_refused_as_compile_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Findings are exit 1 for `check` and `compile`; `run` said the same findings and
    exited 2, as for a usage mistake."""
    app = tmp_path / "broken_app_r1.py"
    app.write_text("import stepswitch as ss\n"
                   "a = ss.Agent(name='a', instructions='x', handoffs=[ss.handoff('nobody')])\n"
                   "w = ss.Workflow('w', entry=a, agents=[a])\n")
    script = tmp_path / "s.json"
    script.write_text(json.dumps([[{"type": "message", "text": "hi"}]]))
    code, _, err = run_main(["run", f"{app}:w", "--input", "x", "--model",
                             f"scripted:{script}"], capsys)
    assert code == 1 and "SW103" in err and "Traceback" not in err, err
    assert main(["compile", f"{app}:w", "-o", str(tmp_path / "r.py")]) == 1


def test_a_tool_value_as_the_final_output_is_printed_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``stop_on_first_tool`` makes a tool's dict the final output: stdout is JSON, as
    for a structured output, not a Python repr."""
    (tmp_path / "saver_app.py").write_text(
        "import stepswitch as ss\n\n"
        "@ss.function_tool\n"
        "def save(title: str) -> dict[str, object]:\n"
        "    '''Save a report.'''\n"
        "    return {'saved': True, 'title': title, 'note': 'café'}\n\n"
        "agent = ss.Agent('writer', tools=[save], tool_use_behavior='stop_on_first_tool')\n"
        "wf = ss.Workflow('saver', entry=agent)\n")
    (tmp_path / "script.json").write_text(json.dumps(
        [{"output": [{"type": "function_call", "name": "save", "arguments": {"title": "T"}}]}]))
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["run", "saver_app.py:wf", "--input", "go", "--model",
                               "scripted:script.json"], capsys)
    assert code == 0, err
    assert json.loads(out) == {"saved": True, "title": "T", "note": "café"}
    assert '"note": "café"' in out


def test_a_run_that_fails_says_why_before_where_it_was_saved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "typed_flow_app.py").write_text(
        "import stepswitch as ss\n\n"
        "@ss.step\n"
        "def entry(text: str) -> int:\n"
        "    return text  # type: ignore[return-value]\n\n"
        "wf = ss.Workflow('wf', entry, flow=[ss.then(entry, ss.END)])\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(["run", "typed_flow_app.py:wf", "--input", "x", "--state",
                             "s.json"], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    said = next(i for i, line in enumerate(lines) if line.startswith("stepswitch: error: "))
    saved = next(i for i, line in enumerate(lines) if "saved the run so far" in line)
    assert said < saved, err
    assert "returned str" in lines[said]


def test_server_flags_a_scripted_model_does_not_use_are_said_not_passed_over(
    script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run([TARGET, "--input", "refund 42", "--model", f"scripted:{script}",
                          "--approve", "all", "--api", "chat", "--base-url",
                          "http://127.0.0.1:1/v1"], capsys)
    assert code == 0, err
    assert ("stepswitch: note: --base-url and --api chat choose the server a model name is "
            "sent to; a scripted model answers in this process, so they are not used") in err
    code, _, err = run([TARGET, "--input", "refund 42", "--model", f"scripted:{script}",
                        "--approve", "all"], capsys)
    assert code == 0 and "note:" not in err
