"""A diagnostic: one finding of the analyzer, as a frozen value.

Analyzers return these; only the CLI's formatters print them. ``location.path`` is a
path into the spec (``agents.triage.handoffs[1]``) that renderers use to highlight the
element a diagnostic is about.
"""

from __future__ import annotations

from stepswitch._dataclass import dataclass

__all__ = ["Diagnostic", "DiagnosticLocation", "Severity", "TraceStep"]

from stepswitch._severity import Severity

"""Errors stop ``compile()``; warnings and info do not."""


@dataclass(frozen=True, slots=True)
class DiagnosticLocation:
    """Where a finding points: the declaration's file, 1-based line and column, and the
    element's path in the spec (``workflow``, ``agents.<name>``,
    ``agents.<name>.handoffs[i]``, ``agents.<name>.agent_tools[i]``,
    ``agents.<name>.tools[i]``, ``agents.<name>.output_type`` ...)."""

    file: str
    line: int
    column: int
    path: str


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One step of a counterexample: what the run does there (``agent 'triage'``,
    ``hands off to 'refund' (transfer_to_refund)``, ``calls process_refund``) and where
    that element is declared."""

    message: str
    location: DiagnosticLocation


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: a registered code, its severity, a message and where it points."""

    code: str
    severity: Severity
    message: str
    location: DiagnosticLocation
    help: str | None = None
    """What to do about it, one sentence; ``stepswitch explain CODE`` says more."""
    trace: tuple[TraceStep, ...] = ()
    """For a failing policy (SW8xx) or a cost path (SW206): the shortest run from the
    entry to the violation, step by step; () for every other finding."""

    def format_line(self) -> str:
        """``file:line:col: CODE message``, the way ruff prints a finding."""
        loc = self.location
        return f"{loc.file}:{loc.line}:{loc.column}: {self.code} {self.message}"

    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        loc = self.location
        return (loc.file, loc.line, loc.column, self.code, loc.path, self.message)
