"""docs/durable.md's Python example runs as written against a dev server: its query of
``interruptions`` right after ``start_workflow`` once answered ``[]`` and the example's
``pending[0]`` raised IndexError."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from tests._paths import ROOT
from tests.test_docs_examples import block


def test_durable_page_python_example_runs_as_written(
    dev_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = block("docs/durable.md", "asyncio.run(main())")
    assert '"127.0.0.1:7233"' in source
    path = tmp_path / "durable_doc.py"
    # the page's server, on the port this test's server listens on
    path.write_text(source.replace('"127.0.0.1:7233"', repr(dev_server)), encoding="utf-8")
    monkeypatch.chdir(ROOT)  # the page says: from the repository root
    monkeypatch.syspath_prepend(str(ROOT))
    runpy.run_path(str(path), run_name="durable_doc")
    assert capsys.readouterr().out == "refund Done: order 42 is refunded in full.\n"


def test_durable_page_flow_example_runs_as_written(
    dev_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = block("docs/durable.md", "asyncio.run(judge_on_temporal())")
    assert '"127.0.0.1:7233"' in source
    path = tmp_path / "durable_flow_doc.py"
    path.write_text(source.replace('"127.0.0.1:7233"', repr(dev_server)), encoding="utf-8")
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    runpy.run_path(str(path), run_name="durable_flow_doc")
    assert capsys.readouterr().out == (
        "final_outline A thief plans a heist to pay for her sister's surgery.\n")
