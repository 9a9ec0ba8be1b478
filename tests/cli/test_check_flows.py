"""``stepswitch check`` on flows, where a new user met them (trial 2): a step's
``RunContext[X]`` is checked against the workflow's ``context_type`` like a tool's
(SW407, located at the step), and a lambda predicate (SW709) says why it is refused for
in-process runs too."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.cli.main import main

APP = textwrap.dedent('''
    from dataclasses import dataclass

    import stepswitch as ss

    @dataclass
    class A:
        name: str = "a"

    @dataclass
    class B:
        count: int = 0

    @ss.step
    def wants_b(ctx: ss.RunContext[B], s: str) -> str:
        """Reads a B."""
        return s * ctx.context.count

    @ss.step
    def wants_a(ctx: ss.RunContext[A], s: str) -> str:
        """Reads an A."""
        return ctx.context.name + s

    a = ss.Agent(name="a", instructions="A.")
    mixed = ss.Workflow("flow_ctx", wants_b, context_type=A, agents=[a], flow=[
        ss.then(wants_b, a), ss.then(a, wants_a), ss.then(wants_a, ss.END)])
    fitting = ss.Workflow("flow_ok", wants_a, context_type=A, flow=[ss.then(wants_a, ss.END)])
''')


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / _module(tmp_path)).write_text(APP)
    return tmp_path


def _module(app: Path) -> str:
    return f"{app.name.replace('-', '_')}_ctxflow.py"


def _line(text: str) -> int:
    """The 1-based line of ``text`` in the app's file."""
    lines = APP.splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(text))


def test_a_steps_run_context_is_checked_against_the_context_type(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", f"{_module(app)}:mixed"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    sw407 = [line for line in out.splitlines() if "SW407" in line]
    assert sw407 == [
        f"{_module(app)}:{_line('def wants_b')}:1: SW407 [error] step 'wants_b' takes "
        "RunContext[B], but the workflow's context_type is A"], out
    assert main(["check", f"{_module(app)}:fitting"]) == 0


def test_a_lambda_predicate_says_why_it_is_refused_in_process_too() -> None:
    top = ss.step(name="top")(_upper)
    a = ss.Agent(name="a", instructions="A.")
    wf = ss.Workflow("cg", top, agents=[a], flow=[
        ss.then(top, a),
        ss.branch(a, when=lambda s: len(s) > 3, then=ss.END, otherwise=ss.END)])
    with pytest.raises(ss.CompileError) as caught:
        wf.compile()
    [line] = [d.format_line() for d in caught.value.report.errors]
    assert "SW709" in line and "in-process runs too" in line
    assert "which its diagram labels, `stepswitch diff` compares and a generated runner " \
           "imports, and a lambda has none" in line


def _upper(text: str) -> str:
    return text.upper()
