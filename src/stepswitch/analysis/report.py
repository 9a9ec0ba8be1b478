"""``Report``: every diagnostic of one workflow's analysis, sorted, with summaries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import field

from stepswitch._dataclass import dataclass
from stepswitch.analysis.diagnostic import Diagnostic

__all__ = ["Report"]


@dataclass(frozen=True, slots=True)
class Report:
    """The analyzer's findings for one workflow.

    ``diagnostics`` is sorted by file, line, column and code. ``ok`` is True when there
    are no errors; warnings and info never make a report fail.
    """

    workflow: str
    diagnostics: tuple[Diagnostic, ...]
    model_call_bound: int | None = None
    """The worst-case number of model calls of a whole run (nested runs included), or
    None when it is unbounded or could not be computed (see SW203/SW202)."""
    _counts: Counter[str] = field(default_factory=Counter, repr=False, compare=False)

    @classmethod
    def of(
        cls, workflow: str, diagnostics: Iterable[Diagnostic], *, model_call_bound: int | None
    ) -> Report:
        items = tuple(sorted(set(diagnostics), key=Diagnostic.sort_key))
        counts: Counter[str] = Counter(d.severity for d in items)
        return cls(workflow, items, model_call_bound, counts)

    @property
    def ok(self) -> bool:
        """True when the workflow has no errors."""
        return not self._counts["error"]

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")

    @property
    def infos(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "info")

    def codes(self) -> tuple[str, ...]:
        """The distinct codes reported, sorted."""
        return tuple(sorted({d.code for d in self.diagnostics}))

    def by_path(self, path: str) -> tuple[Diagnostic, ...]:
        """The diagnostics about one spec element (``agents.triage.handoffs[0]``)."""
        return tuple(d for d in self.diagnostics if d.location.path == path)

    def summary(self) -> str:
        """``2 errors, 1 warning, 3 infos``."""
        parts = []
        for severity in ("error", "warning", "info"):
            n = self._counts[severity]
            parts.append(f"{n} {severity}{'' if n == 1 else 's'}")
        return ", ".join(parts)

    def __len__(self) -> int:
        return len(self.diagnostics)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.diagnostics)
