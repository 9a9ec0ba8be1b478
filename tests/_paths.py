"""Where the repository is, for tests that read its files or run commands in it.

``ROOT`` is the checkout's top folder (the one with ``pyproject.toml``): run a command
with ``cwd=ROOT`` or ``monkeypatch.chdir(ROOT)`` to give it the paths a user types
(``graphs/support.py:support``), and read checked-in files as ``ROOT / "docs" / ...``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
