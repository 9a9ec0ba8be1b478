from __future__ import annotations

from pathlib import Path

from stepswitch.analysis import CODES
from stepswitch.analysis.export_docs import main, pages
from tests._paths import ROOT

DOCS = ROOT / "docs" / "diagnostics"


def test_docs_diagnostics_is_up_to_date() -> None:
    wanted = pages()
    present = {p.name: p.read_text("utf-8") for p in DOCS.glob("*.md")}
    assert present == wanted, "docs/diagnostics is stale: run `make docs`"


def test_export_writes_every_page_and_removes_stale_ones(tmp_path: Path) -> None:
    (tmp_path / "SW999.md").write_text("retired")
    assert main([str(tmp_path)]) == 0
    names = {p.name for p in tmp_path.glob("*.md")}
    assert names == {f"{c}.md" for c in CODES} | {"README.md"}
    assert all(f"[{c}]({c}.md)" in (tmp_path / "README.md").read_text() for c in CODES)
