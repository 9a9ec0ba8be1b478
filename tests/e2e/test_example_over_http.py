"""``examples/support_over_http.py`` (run by ``make demo``) works as shipped."""

from __future__ import annotations

import asyncio
import runpy

import pytest

from tests._paths import ROOT

EXAMPLE = ROOT / "examples" / "support_over_http.py"


def test_the_example_runs_both_apis_to_the_final_output(capsys: pytest.CaptureFixture[str]) -> None:
    module = runpy.run_path(str(EXAMPLE), run_name="example")
    asyncio.run(module["main"]())
    out = capsys.readouterr().out
    assert out.count("final output: Done: order 42 is refunded in full.") == 2
    assert "== responses API" in out and "== chat API" in out
    assert out.count("the first got a 429 and was retried") == 2
