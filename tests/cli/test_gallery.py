"""``docs/diagrams.md`` shows the current Mermaid of every workflow in ``graphs/``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphs.support import support
from stepswitch.cli._gallery import BEGIN, END, main, refresh
from tests._paths import ROOT

PAGE = ROOT / "docs" / "diagrams.md"
TARGETS = ["graphs", "examples/broken_workflow.py"]  # as the Makefile's GALLERY


def test_docs_page_is_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    text = PAGE.read_text(encoding="utf-8")
    assert refresh(text, TARGETS) == text, "docs/diagrams.md is stale: run `make diagrams`"
    assert support.to_mermaid(report=support.check()) in text
    assert support.to_mermaid(view="machine") in text
    assert "SW201 error" in text  # the broken example's findings are listed and drawn


def test_refresh_replaces_only_the_generated_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    page = f"# Title\n\nlegend\n\n{BEGIN}\nold stuff\n{END}\n\ntail\n"
    new = refresh(page, TARGETS)
    assert new.startswith("# Title\n\nlegend\n\n" + BEGIN)
    assert new.endswith(END + "\n\ntail\n")
    assert "old stuff" not in new
    assert "```mermaid\n" + support.to_mermaid(report=support.check()) + "```" in new
    assert refresh(new, TARGETS) == new


def test_check_mode_reports_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    page = tmp_path / "d.md"
    page.write_text("# x\n")
    assert main(["--check", str(page), "graphs"]) == 1
    assert main([str(page), "graphs"]) == 0
    assert main(["--check", str(page), "graphs"]) == 0
    assert main(["--check", str(page)]) == 2
    assert os.path.getsize(page) > 100
