"""Function TARGETs (``app.py:main``): the app is what the function first runs or returns,
stopped before any model call; every way it can fail is one located line."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.errors import TargetError
from stepswitch.targets.load import load_one, load_targets
from tests._paths import ROOT
from tests.cli.conftest import run_main, run_process

APP = "tests/interop/sdk_apps/in_main.py"
BAD = "tests/interop/sdk_apps/bad_mains.py"


@pytest.fixture(autouse=True)
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "stdin", io.StringIO("a line nobody should read\n"))


def _line(path: str, text: str) -> int:
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(text)


def _error(target: str) -> str:
    with pytest.raises(TargetError) as caught:
        load_targets([target])
    text = str(caught.value)
    assert "\n" not in text and "Traceback" not in text, text
    return text


def test_async_main_is_read_at_its_first_run_with_its_max_turns() -> None:
    loaded = load_one(f"{APP}:main")
    wf = loaded.workflow
    assert loaded.label == f"{APP}:main"
    assert {a.name for a in wf.agents} == {"Triage", "Spanish"}
    assert wf.max_turns == 4  # Runner.run(..., max_turns=4) is carried
    spec = wf.to_spec()
    assert spec.entry == "Triage"
    triage = spec.agent("Triage")
    assert triage is not None and triage.location.file.endswith("in_main.py")
    assert triage.location.line == _line(APP, 'triage = Agent(name="Triage"')


def test_sync_run_carries_the_context_type_and_prints_nothing_to_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    wf = load_one(f"{APP}:main_sync").workflow
    assert wf.to_spec().entry == "Weather"
    assert wf.context_type is dict
    out, err = capsys.readouterr()
    assert out == "" and "building, then running" in err


def test_run_streamed_and_a_factory_and_a_list() -> None:
    assert load_one(f"{APP}:streamed").workflow.to_spec().entry == "Weather"
    assert load_one(f"{APP}:build_agent").workflow.to_spec().entry == "Weather"
    (front,) = load_targets([f"{APP}:two_agents"])  # Back is reached from Front
    assert front.workflow.to_spec().entry == "Front"


def test_a_run_inside_except_exception_is_still_stopped_and_its_options_reported() -> None:
    wf = load_one(f"{APP}:swallowed").workflow
    report = wf.check()
    (note,) = [d for d in report.diagnostics if d.code == "SW610"]
    assert "Runner.run.previous_response_id" in note.message
    assert note.location.file.endswith("in_main.py")
    assert note.location.line == _line(APP, 'Runner.run_sync(build_agent(), "hi", hooks=None')


def test_no_model_is_called_and_the_entry_points_are_restored() -> None:
    import agents

    before = agents.Runner.__dict__["run_sync"]
    load_one(f"{APP}:main_sync")
    assert agents.Runner.__dict__["run_sync"] is before
    assert ss.StateMachine.__dict__["run_sync"].__qualname__ == "StateMachine.run_sync"


def test_a_stepswitch_run_gives_the_workflow_it_compiled() -> None:
    wf = load_one(f"{BAD}:runs_ours").workflow
    assert wf.name == "ours"


@pytest.mark.parametrize(("name", "expected"), [
    ("never_runs", f"never_runs() ({BAD}:{_line(BAD, 'def never_runs')}) returned None "
                   "without running an agent: it called none of "
                   "Runner.run, Runner.run_sync, Runner.run_streamed or StateMachine.run*"),
    ("raises", "raised RuntimeError: no OPENAI_API_KEY in the environment at "
               f"{BAD}:{_line(BAD, 'raise RuntimeError')} before it ran an agent"),
    ("asks", f"reads standard input at {BAD}:{_line(BAD, 'input(')}, which is closed"),
    ("needs_args", "takes city, but a function TARGET is called with no arguments"),
    ("returns_a_number", f"returns_a_number() ({BAD}:{_line(BAD, 'def returns_a_number')}) "
                         "returned an int, not an SDK agent or a Workflow"),
    ("exits", "exited (SystemExit(3))"),
    ("returns_our_agent", "returned a stepswitch Agent 'loose', not a Workflow"),
])
def test_a_function_that_gives_no_app_is_one_located_line(name: str, expected: str) -> None:
    text = _error(f"{BAD}:{name}")
    assert text.startswith(f"{BAD}:{name}: "), text
    assert expected in text, text


def test_a_function_that_blocks_is_stopped_in_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    monkeypatch.setenv("STEPSWITCH_TARGET_TIMEOUT", "0.3")
    started = time.monotonic()
    text = _error(f"{BAD}:hangs")
    assert time.monotonic() - started < 5
    assert (f"hangs() ({BAD}:{_line(BAD, 'def hangs')}): did not reach a run or return "
            f"within 0.3 s (it was at {BAD}:{_line(BAD, 'time.sleep(30)')})") in text


def test_a_bad_timeout_setting_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEPSWITCH_TARGET_TIMEOUT", "soon")
    assert "STEPSWITCH_TARGET_TIMEOUT='soon': expected a positive number" in _error(
        f"{APP}:main")


def test_a_file_with_nothing_readable_names_its_builders_and_the_target() -> None:
    text = _error("tests/interop/sdk_apps/only_functions.py")
    assert text == (
        "tests/interop/sdk_apps/only_functions.py: no Workflow or SDK agent at module level "
        "in tests/interop/sdk_apps/only_functions.py; agents are built in main() at line "
        f"{_line('tests/interop/sdk_apps/only_functions.py', 'def main')}, make_helper() at "
        f"line {_line('tests/interop/sdk_apps/only_functions.py', 'def make_helper')}: name "
        "one as the TARGET, e.g. `tests/interop/sdk_apps/only_functions.py:main`"
    )


def test_a_folder_says_which_files_it_skipped_and_why(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "helper_app.py").write_text(textwrap.dedent('''
        from agents import Agent
        helper = Agent(name="Helper")
    '''))
    (tmp_path / "helper_runner.py").write_text(textwrap.dedent('''
        from agents import Agent, Runner
        def main():
            Runner.run_sync(Agent(name="Other"), "hi")
    '''))
    (tmp_path / "helper_util.py").write_text("X = 1\n")
    skipped: list[str] = []
    found = load_targets([str(tmp_path)], skipped=skipped)
    assert [f.workflow.to_spec().entry for f in found] == ["Helper"]
    assert [s.split(": ", 1)[1] for s in skipped] == [
        f"no Workflow or SDK agent at module level in {tmp_path}/helper_runner.py; agents are "
        f"built in main() at line 3: name one as the TARGET, e.g. "
        f"`{tmp_path}/helper_runner.py:main`",
        f"no Workflow or SDK agent at module level in {tmp_path}/helper_util.py",
    ]
    code, _, err = run_main(["check", str(tmp_path)], capsys)
    assert code == 0
    assert f"stepswitch: note: skipped {tmp_path}/helper_util.py" in err


def test_check_show_and_render_a_function_target(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["show", f"{APP}:main"], capsys)
    assert code == 0 and "Triage ─handoff→ Spanish" in out
    code, out, _ = run_main(["render", f"{APP}:main", "--format", "mermaid"], capsys)
    assert code == 0 and out.startswith("flowchart")
    code, out, _ = run_main(["check", f"{APP}:main", "--format", "json"], capsys)
    assert code == 0 and all(json.loads(line) for line in out.splitlines() if line)


def test_in_a_process_stdin_is_closed_and_the_error_is_one_line() -> None:
    done = run_process("check", f"{BAD}:asks", stdin="ada\n")
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "reads standard input" in lines[0], done.stderr


def test_agents_built_inside_a_function_are_located_at_their_own_lines() -> None:
    for name, agent, text in (("build_agent", "Weather", 'return Agent(name="Weather"'),
                              ("two_agents", "Back", 'back = Agent(name="Back")')):
        wf = load_targets([f"{APP}:{name}"])[0].workflow
        spec = wf.to_spec().agent(agent)
        assert spec is not None and spec.location.file == APP
        assert spec.location.line == _line(APP, text)
