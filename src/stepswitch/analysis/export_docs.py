"""Write the diagnostic pages shipped in this package to ``docs/diagnostics/``.

``python -m stepswitch.analysis.export_docs [DIR]`` (``make docs``). The pages live in
the package so ``stepswitch explain`` works from an installed wheel; the copies under
``docs/`` are for browsing, and a test fails when they are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from stepswitch.analysis.codes import CODES, GROUPS, code_doc

__all__ = ["index_page", "main", "pages", "write_pages"]


def index_page() -> str:
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from the registry (`make docs`); do not edit by hand.",
        "`stepswitch explain CODE` prints a page; `--select`/`--ignore` take codes or prefixes.",
        "",
        "| code | name | severity | reports |",
        "|---|---|---|---|",
    ]
    group = ""
    for code in sorted(CODES.values(), key=lambda c: c.code):  # SW8xx before SW9xx
        if code.code[:3] != group:
            group = code.code[:3]
            lines.append(f"| **{group}xx** | **{GROUPS[group]}** | | |")
        summary = code.summary.replace("|", "\\|")
        lines.append(
            f"| [{code.code}]({code.code}.md) | {code.name} | {code.severity} | {summary} |"
        )
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name → content of every page, the index included."""
    out = {f"{code}.md": code_doc(code) for code in CODES}
    out["README.md"] = index_page()
    return out


def write_pages(argv: list[str] | None, default: str, wanted: dict[str, str]) -> int:
    """Write ``wanted`` (file name → content) to the folder ``argv[0]`` (else
    ``default``), removing pages no longer wanted; shared with the trail code pages."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0] if args else default)
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    for name, content in wanted.items():
        (target / name).write_text(content, encoding="utf-8")
    print(f"wrote {len(wanted)} pages to {target}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return write_pages(argv, "docs/diagnostics", pages())


if __name__ == "__main__":
    raise SystemExit(main())
