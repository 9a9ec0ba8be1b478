"""The runners checked in under codegen/ are current, typed and lint-clean.

One module per workflow file in graphs/ (``graphs/x.py`` → ``codegen/x.py``). A stale
runner fails here with the command that regenerates it (``make codegen``).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.cli.targets import load_targets
from stepswitch.testing import ScriptedModel, assistant_message, function_call

ROOT = Path(__file__).resolve().parents[2]
GRAPHS = sorted(p for p in (ROOT / "graphs").glob("*.py") if p.name != "__init__.py")
BIN = Path(sys.executable).parent


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda p: p.stem)
def test_each_graph_has_a_current_runner(graph: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    loaded = load_targets([_rel(graph)])
    assert len(loaded) == 1, f"{_rel(graph)}: one workflow per file in graphs/"
    wf = loaded[0]
    runner = ROOT / "codegen" / graph.name
    assert runner.exists(), f"{_rel(runner)} is missing: run `make codegen`"
    expected = ss.codegen(wf.workflow.compile(), source=f"{wf.module}:{wf.attribute}")
    assert runner.read_text(encoding="utf-8") == expected, (
        f"{_rel(runner)} is stale: run `make codegen`"
    )


def test_no_runner_without_a_graph() -> None:
    runners = {p.name for p in (ROOT / "codegen").glob("*.py")}
    assert runners == {g.name for g in GRAPHS}


def test_the_support_runner_runs_like_the_workflow() -> None:
    module = importlib.import_module("codegen.support")
    script = [
        [function_call("lookup_order", {"order_id": 7})],
        [assistant_message("Order 7 has shipped.")],
    ]
    ours = module.run_sync("where is 7?", model=ScriptedModel(script))
    from graphs.support import support

    theirs = support.compile().run_sync("where is 7?", model=ScriptedModel(script))
    assert ours.new_items == theirs.new_items
    assert ours.final_output == "Order 7 has shipped."


def test_the_runners_pass_ruff_and_mypy_strict(tmp_path: Path) -> None:
    """The checked-in runners, the hostile fixture's runner, and a runner of the step-rule
    grid (every tool-use rule, typed and text outputs, a stop list too long for a line)."""
    from stepswitch.compiler.codegen import plan_module, render
    from stepswitch.ir import MachineIR
    from tests.compiler import hostile
    from tests.compiler.test_codegen import _states

    extra = tmp_path / "hostile_runner.py"
    extra.write_text(ss.codegen(hostile.machine()), encoding="utf-8")
    grid = tmp_path / "grid_runner.py"
    ir = MachineIR(name="grid", entry="long", states=tuple(_states()))
    grid.write_text(render(plan_module(ir)), encoding="utf-8")
    files = [_rel(ROOT / "codegen" / g.name) for g in GRAPHS] + [str(extra), str(grid)]
    ruff = shutil.which("ruff", path=str(BIN)) or "ruff"
    lint = subprocess.run(
        [ruff, "check", "--no-cache", "--config", "pyproject.toml", *files],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    typed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *files],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert typed.returncode == 0, typed.stdout + typed.stderr
