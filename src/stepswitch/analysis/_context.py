"""What every rule gets: the graph, and helpers to make located diagnostics.

Not API: rules are internal; ``analyze`` is the entry point.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.analysis._index import Index
from stepswitch.analysis.codes import CODES
from stepswitch.analysis.diagnostic import (
    Diagnostic,
    DiagnosticLocation,
    Severity,
    TraceStep,
)
from stepswitch.graph.spec import AgentSpec, Location
from stepswitch.graph.workflow_graph import Edge, WorkflowGraph

__all__ = ["Ctx", "agent_path"]


def agent_path(name: str) -> str:
    return f"agents.{name}"


def where(location: Location, path: str) -> DiagnosticLocation:
    return DiagnosticLocation(location.file, location.line, location.column, path)


@dataclass(frozen=True, slots=True)
class Ctx:
    """The analysis input plus the workflow-level limits in force."""

    graph: WorkflowGraph
    max_model_calls: int | None
    memo: dict[str, Any] = field(default_factory=dict)
    """Results several rules share (computed once per analysis)."""

    def index(self) -> Index:
        cached = self.memo.get("index")
        if cached is None:
            cached = self.memo["index"] = Index(self.graph)
        result: Index = cached
        return result

    def workflow_loc(self) -> DiagnosticLocation:
        return where(self.graph.spec.location, "workflow")

    def agent_loc(self, agent: AgentSpec) -> DiagnosticLocation:
        return where(agent.location, agent_path(agent.name))

    def edge_loc(self, edge: Edge) -> DiagnosticLocation:
        return where(edge.spec.location, edge.spec_path)

    def diag(
        self,
        code: str,
        message: str,
        location: DiagnosticLocation,
        help: str | None = None,
        severity: Severity | None = None,
        trace: tuple[TraceStep, ...] = (),
    ) -> Diagnostic:
        return Diagnostic(
            code=code,
            severity=severity or CODES[code].severity,
            message=message,
            location=location,
            help=help,
            trace=trace,
        )


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """" (did you mean 'x'?)" when a known name is close to ``name``, else ""."""
    import difflib  # only when a name is wrong: check's cold start does not pay for it

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
