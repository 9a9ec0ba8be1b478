"""Golden files for the diagram text. ``STEPSWITCH_REGEN_GOLDEN=1`` (or
``make golden``) rewrites them from the current output; review the diff, then commit."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN_DIR = Path(__file__).parent / "golden"


def assert_golden(name: str, actual: str) -> None:
    path = GOLDEN_DIR / name
    if os.environ.get("STEPSWITCH_REGEN_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"no golden file {path}; run `make golden` to create it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{name} differs from its golden file; if the change is intended, run "
        "`make golden` and review the diff"
    )
