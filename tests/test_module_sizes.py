"""Rooms a reader can hold in the head: no module of the package past 700 lines, and the
two that grew past it before (the CLI's run command, the flow runtime) under 600
(CONVENTIONS.md 1; DESIGN.md §2: past ~500 lines is a sign to split)."""

from __future__ import annotations

from tests._paths import ROOT

PACKAGE = ROOT / "src" / "stepswitch"
LIMIT = 700
TIGHTER = {"cli/run.py": 600, "runtime/flow.py": 600}


def _lines(rel: str) -> int:
    with open(PACKAGE / rel, encoding="utf-8") as f:
        return sum(1 for _ in f)  # as wc -l counts


def test_no_module_is_over_700_lines() -> None:
    modules = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))
    assert len(modules) > 100  # the walk found the package
    over = {m: n for m in modules if (n := _lines(m)) > LIMIT}
    assert over == {}, f"split these modules (lines): {over}"


def test_the_run_command_and_the_flow_runtime_stay_under_600_lines() -> None:
    over = {m: n for m, limit in TIGHTER.items() if (n := _lines(m)) >= limit}
    assert over == {}, f"split these modules (lines): {over}"
