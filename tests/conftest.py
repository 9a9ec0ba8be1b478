"""Shared test set-up: the repo root is importable so `graphs.*` resolves."""

from __future__ import annotations

import sys

from tests._paths import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
