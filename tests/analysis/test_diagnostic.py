from __future__ import annotations

import dataclasses

import pytest

from stepswitch.analysis import Diagnostic, DiagnosticLocation
from stepswitch.errors import CompileError
from tests.analysis._cases import a, wf


def _diag() -> Diagnostic:
    loc = DiagnosticLocation("graphs/x.py", 12, 5, "agents.triage.handoffs[1]")
    return Diagnostic("SW201", "error", "handoff cycle a → b → a", loc, help="budget it")


def test_format_line_is_ruff_style() -> None:
    assert _diag().format_line() == "graphs/x.py:12:5: SW201 handoff cycle a → b → a"


def test_diagnostics_are_frozen_and_hashable() -> None:
    d = _diag()
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.code = "SW101"  # type: ignore[misc]
    assert len({d, _diag()}) == 1


def test_compile_error_lists_every_error_of_a_report() -> None:
    report = wf("a", a(handoffs=["x", "y"])).check()
    err = CompileError(report)
    assert "2 error(s)" in str(err)
    assert all(d.format_line() in str(err) for d in report.errors)
