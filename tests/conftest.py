"""Shared test set-up: the repo root is importable so `graphs.*` resolves."""

from __future__ import annotations

import os
import sys

# `stepswitch check` keeps answers in .stepswitch_cache/; tests that monkeypatch the
# package or rewrite files in place must see a fresh check. tests/cli/test_check_cache.py
# turns it back on for its own subprocesses.
os.environ["STEPSWITCH_NO_CACHE"] = "1"

from tests._paths import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
