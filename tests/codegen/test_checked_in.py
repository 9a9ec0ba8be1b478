"""The runners checked in under codegen/ are current and run like their workflows.

One module per workflow file in graphs/ (``graphs/x.py`` → ``codegen/x.py``). A stale
runner fails here with the command that regenerates it (``make codegen``). That they
(and the runners of tests/codegen/write_runners.py) pass ``mypy --strict`` and ruff is
checked by ``make typecheck``, in the same mypy run as ``src/``, and ``make lint``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.targets.load import load_targets
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests._paths import ROOT

GRAPHS = sorted(p for p in (ROOT / "graphs").glob("*.py") if p.name != "__init__.py")


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
    script: list[ScriptStep] = [
        [function_call("lookup_order", {"order_id": 7})],
        [assistant_message("Order 7 has shipped.")],
    ]
    ours = module.run_sync("where is 7?", model=ScriptedModel(script))
    from graphs.support import support

    theirs = support.compile().run_sync("where is 7?", model=ScriptedModel(script))
    assert ours.new_items == theirs.new_items
    assert ours.final_output == "Order 7 has shipped."
