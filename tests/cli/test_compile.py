"""``stepswitch compile``: writes the runner, ``--check`` gates CI, mistakes exit 2."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._paths import ROOT
from tests.cli.conftest import run_main, run_process


def test_compile_writes_the_checked_in_runner(
    in_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "deep" / "runner.py"
    code, out, _ = run_main(["compile", "graphs/support.py:support", "-o", str(out_file)], capsys)
    assert code == 0 and "wrote the runner of graphs/support.py:support" in out
    assert out_file.read_bytes() == (ROOT / "codegen" / "support.py").read_bytes()
    # by module name it is the same module
    code, out, _ = run_main(["compile", "graphs.support:support", "-o", str(out_file)], capsys)
    assert code == 0 and "up to date" in out


def test_check_exits_0_when_current_and_1_with_a_short_diff_when_stale(
    in_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ["compile", "graphs/support.py:support", "-o"]
    code, out, _ = run_main([*target, "codegen/support.py", "--check"], capsys)
    assert (code, out.strip()) == (0, "codegen/support.py: up to date")

    stale = tmp_path / "support.py"
    text = (ROOT / "codegen" / "support.py").read_text(encoding="utf-8")
    stale.write_text(text.replace("max_uses=2", "max_uses=5"), encoding="utf-8")
    code, out, _ = run_main([*target, str(stale), "--check"], capsys)
    assert code == 1
    assert '-                    action=HandoffTo(target="triage", max_uses=5),' in out
    assert '+                    action=HandoffTo(target="triage", max_uses=2),' in out
    # the command that regenerates it, not stepswitch's own `make codegen`
    assert out.splitlines()[-1] == (
        f"{stale}: stale; regenerate it with `stepswitch compile graphs/support.py:support "
        f"-o {stale}`")
    assert stale.read_text(encoding="utf-8") != text  # --check never writes

    everything = tmp_path / "other.py"
    everything.write_text("\n".join(f"x{i} = {i}" for i in range(200)) + "\n", encoding="utf-8")
    code, out, _ = run_main([*target, str(everything), "--check"], capsys)
    assert code == 1 and "more diff lines" in out and len(out.splitlines()) < 50

    code, out, _ = run_main([*target, str(tmp_path / "my runner.py"), "--check"], capsys)
    assert code == 1
    assert out == (f"{tmp_path}/my runner.py: missing; generate it with `stepswitch compile "
                   f"graphs/support.py:support -o '{tmp_path}/my runner.py'`\n")


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
    code, _, err = run_main(["compile", "two_flows.py", "-o", "x.py"], capsys)
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
    code, _, err = run_main(["compile", "lambda_flow.py:flow", "-o", "x.py"], capsys)
    assert code == 2
    assert "'lambda_flow:make.<locals>.inner'" in err
    assert "agent 'a' tool 'inner'" in err and "lambda_flow.py:6" in err
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
        code, _, err = run_main(["compile", f"{flow}:wf", "-o", str(out_file), *extra], capsys)
        assert code == 1, extra  # findings, as `stepswitch check` exits on them
        assert err.startswith(f"stepswitch: error: {flow}:wf: workflow has 1 error(s)")
        assert f"{flow}:2:1: SW103" in err and "Traceback" not in err
        assert not out_file.exists()


_APP = """
import stepswitch as ss

@ss.function_tool
def lookup(order_id: int) -> str:
    "Look up an order."
    return "ok"

a = ss.Agent(name="a", instructions="x", tools=[lookup])
wf = ss.Workflow(name="wf", entry=a)
"""


def test_a_runner_written_from_a_parent_folder_imports_the_module_from_where_it_lives(
    tmp_path: Path,
) -> None:
    # proj/app/flows.py (no __init__.py), compiled from proj's parent into proj/runner.py:
    # the runner must import the tool as app.flows (from proj/), not as `flows`, which
    # only imports with proj/app/ on sys.path
    app = tmp_path / "proj" / "app"
    app.mkdir(parents=True)
    (app / "flows.py").write_text(_APP, encoding="utf-8")
    done = run_process("compile", "proj/app/flows.py:wf", "-o", "proj/runner.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    runner = (tmp_path / "proj" / "runner.py").read_text(encoding="utf-8")
    assert 'ref="app.flows:lookup"' in runner
    use = "import runner; print(runner.MACHINE.name)"
    for how, cwd in ((["proj/runner.py"], tmp_path), (["-c", use], tmp_path / "proj")):
        ran = subprocess.run([sys.executable, *how], cwd=cwd, capture_output=True, text=True,
                             timeout=120)
        assert ran.returncode == 0, ran.stderr
    # a runner in the module's own folder imports it by its own name, as before
    done = run_process("compile", "flows.py:wf", "-o", "runner.py", cwd=app)
    assert done.returncode == 0 and 'ref="flows:lookup"' in (app / "runner.py").read_text()
    # `--check` from the parent agrees with the file written from there
    done = run_process("compile", "proj/app/flows.py:wf", "-o", "proj/runner.py", "--check",
                cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_runner_that_could_not_import_the_module_is_refused_clearly(
    tmp_path: Path,
) -> None:
    (tmp_path / "here").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "flows.py").write_text(_APP, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-I", "-c", "import sys; from stepswitch.cli.main import main; "
         "sys.exit(main(sys.argv[1:]))",
         "compile", str(tmp_path / "lib" / "flows.py:wf"), "-o", str(tmp_path / "out.py")],
        cwd=tmp_path / "here", capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot tell how a runner written to" in done.stderr
    assert "PYTHONPATH" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.py").exists()
    # sibling imports that only work from the module's own folder say so
    (tmp_path / "proj" / "app").mkdir(parents=True)
    (tmp_path / "proj" / "app" / "helpers.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "proj" / "app" / "flows.py").write_text("import helpers\n" + _APP,
                                                        encoding="utf-8")
    done = run_process("compile", "proj/app/flows.py:wf", "-o", "proj/runner.py", cwd=tmp_path)
    assert done.returncode == 2
    assert "No module named 'helpers'" in done.stderr
    assert "write the runner next to it to import it as 'flows'" in done.stderr


def test_a_runner_below_its_module_says_how_to_run_it(tmp_path: Path) -> None:
    """`-o out/runner.py` beside wf.py writes a runner that imports `flows` by that
    name, which `python out/runner.py` cannot: compile says how to run it, and the
    runner's own error says why, where a bare ModuleNotFoundError left users guessing."""
    (tmp_path / "flows.py").write_text(_APP, encoding="utf-8")
    done = run_process("compile", "flows.py:wf", "-o", "out/runner.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "note: out/runner.py imports 'flows' from the working directory" in done.stdout
    assert "`python -m out.runner`" in done.stdout, done.stdout
    ran = subprocess.run([sys.executable, "-m", "out.runner"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    ran = subprocess.run([sys.executable, "out/runner.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode != 0 and "where `stepswitch compile` ran" in ran.stderr, ran.stderr
    done = run_process("compile", "flows.py:wf", "-o", "runner.py", cwd=tmp_path)
    assert done.returncode == 0 and "note:" not in done.stdout  # beside it: python runner.py
