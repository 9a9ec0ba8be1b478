"""``stepswitch compile``: writes the runner, ``--check`` gates CI, mistakes exit 2."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stepswitch.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_compile_writes_the_checked_in_runner(
    in_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "deep" / "runner.py"
    code, out, _ = run(["compile", "graphs/support.py:support", "-o", str(out_file)], capsys)
    assert code == 0 and "wrote the runner of graphs/support.py:support" in out
    assert out_file.read_bytes() == (ROOT / "codegen" / "support.py").read_bytes()
    # by module name it is the same module
    code, out, _ = run(["compile", "graphs.support:support", "-o", str(out_file)], capsys)
    assert code == 0 and "up to date" in out


def test_check_exits_0_when_current_and_1_with_a_short_diff_when_stale(
    in_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ["compile", "graphs/support.py:support", "-o"]
    code, out, _ = run([*target, "codegen/support.py", "--check"], capsys)
    assert (code, out.strip()) == (0, "codegen/support.py: up to date")

    stale = tmp_path / "support.py"
    text = (ROOT / "codegen" / "support.py").read_text(encoding="utf-8")
    stale.write_text(text.replace("max_uses=2", "max_uses=5"), encoding="utf-8")
    code, out, _ = run([*target, str(stale), "--check"], capsys)
    assert code == 1
    assert "-                    action=HandoffTo(target='triage', max_uses=5)," in out
    assert "+                    action=HandoffTo(target='triage', max_uses=2)," in out
    assert "stale" in out
    assert stale.read_text(encoding="utf-8") != text  # --check never writes

    everything = tmp_path / "other.py"
    everything.write_text("\n".join(f"x{i} = {i}" for i in range(200)) + "\n", encoding="utf-8")
    code, out, _ = run([*target, str(everything), "--check"], capsys)
    assert code == 1 and "more diff lines" in out and len(out.splitlines()) < 50

    code, out, _ = run([*target, str(tmp_path / "missing.py"), "--check"], capsys)
    assert code == 1 and "missing" in out


def test_a_target_with_several_workflows_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "two_flows.py").write_text(
        textwrap.dedent(
            """
            import stepswitch as ss
            a = ss.Agent(name="a", instructions="hi")
            one = ss.Workflow(name="one", entry=a)
            two = ss.Workflow(name="two", entry=a)
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["compile", "two_flows.py", "-o", "x.py"], capsys)
    assert code == 2
    assert "names 2 workflows" in err and "two_flows.py:one" in err
    assert not (tmp_path / "x.py").exists()


def test_an_unimportable_tool_is_a_clear_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lambda_flow.py").write_text(
        textwrap.dedent(
            """
            import stepswitch as ss

            def make():
                @ss.function_tool
                def inner(x: int) -> int:
                    "Inner."
                    return x
                return inner

            a = ss.Agent(name="a", instructions="hi", tools=[make()])
            flow = ss.Workflow(name="flow", entry=a)
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["compile", "lambda_flow.py:flow", "-o", "x.py"], capsys)
    assert code == 2
    assert "'lambda_flow:make.<locals>.inner'" in err
    assert "agent 'a' tool 'inner'" in err and "lambda_flow.py:5" in err
    assert "Traceback" not in err
    assert not (tmp_path / "x.py").exists()


def test_compile_as_a_subprocess(tmp_path: Path) -> None:
    out_file = tmp_path / "runner.py"
    done = subprocess.run(
        [sys.executable, "-m", "stepswitch", "compile", "graphs/support.py:support",
         "-o", str(out_file)],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert out_file.read_bytes() == (ROOT / "codegen" / "support.py").read_bytes()
    check = subprocess.run(
        [sys.executable, "-m", "stepswitch", "compile", "graphs/support.py:support",
         "-o", "codegen/support.py", "--check"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_workflow_with_errors_exits_1_listing_them_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flow = tmp_path / "dangling_qa.py"
    flow.write_text(
        "import stepswitch as ss\n"
        "a = ss.Agent(name='a', instructions='x', handoffs=['nobody'])\n"
        "wf = ss.Workflow(name='dangling', entry=a)\n"
    )
    out_file = tmp_path / "runner.py"
    for extra in ([], ["--check"]):
        code, _, err = run(["compile", f"{flow}:wf", "-o", str(out_file), *extra], capsys)
        assert code == 1, extra  # findings, as `stepswitch check` exits on them
        assert err.startswith(f"stepswitch: error: {flow}:wf: workflow has 1 error(s)")
        assert f"{flow}:2:1: SW103" in err and "Traceback" not in err
        assert not out_file.exists()
