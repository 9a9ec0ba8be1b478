"""Write the trail code pages shipped in this package to ``docs/trail/``.

``python -m stepswitch.review.export_docs [DIR]`` (``make docs``). Like the diagnostic
pages, they live in the package so ``stepswitch explain TR101`` works from a wheel; the
copies under ``docs/`` are for browsing, and a test fails when they are stale.
"""

from __future__ import annotations

from stepswitch.analysis.export_docs import write_pages
from stepswitch.review.trail_codes import TRAIL_CODES, TRAIL_GROUPS, trail_code_doc

__all__ = ["index_page", "main", "pages"]


def index_page() -> str:
    lines = [
        "# Trail codes",
        "",
        "Generated from the registry (`make docs`); do not edit by hand.",
        "`stepswitch trail` reports them (every one fails the check, exit 1); "
        "`stepswitch explain CODE` prints a page. See [review.md](../review.md).",
        "",
        "| code | name | reports |",
        "|---|---|---|",
    ]
    group = ""
    for code in TRAIL_CODES.values():
        if code.code[:3] != group:
            group = code.code[:3]
            lines.append(f"| **{group}xx** | **{TRAIL_GROUPS[group]}** | |")
        summary = code.summary.replace("|", "\\|")
        lines.append(f"| [{code.code}]({code.code}.md) | {code.name} | {summary} |")
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name → content of every page, the index included."""
    out = {f"{code}.md": trail_code_doc(code) for code in TRAIL_CODES}
    out["README.md"] = index_page()
    return out


def main(argv: list[str] | None = None) -> int:
    return write_pages(argv, "docs/trail", pages())

if __name__ == "__main__":
    raise SystemExit(main())
