"""Small frozen report objects that satisfy the renderer's report protocol, so the
highlighting can be tested without the analyzer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FakeLocation:
    path: str
    file: str = "graphs/x.py"
    line: int = 1


@dataclass(frozen=True)
class FakeDiagnostic:
    code: str
    severity: str
    message: str
    location: FakeLocation


@dataclass(frozen=True)
class FakeReport:
    diagnostics: tuple[FakeDiagnostic, ...]


def report(*items: tuple[str, str, str, str]) -> FakeReport:
    """``report(("SW101", "error", "message", "agents.x"), ...)``."""
    return FakeReport(
        tuple(FakeDiagnostic(code, sev, msg, FakeLocation(path)) for code, sev, msg, path in items)
    )
