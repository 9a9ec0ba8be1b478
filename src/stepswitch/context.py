"""Values shared by declarations and runs: the run context handed to user code, and usage.

A tool, guardrail, ``on_handoff`` hook or instructions function that declares a first
parameter typed ``RunContext[T]`` receives one on every call. That parameter is never
part of a tool's JSON schema.
"""

from __future__ import annotations

from dataclasses import field
from typing import Generic, TypeVar

from stepswitch._dataclass import dataclass

__all__ = ["RunContext", "Usage"]

TContext = TypeVar("TContext")


@dataclass(slots=True)
class Usage:
    """Token and request totals of a run so far, nested agent-tool runs included."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def add(self, other: Usage) -> None:
        """Add another usage record into this one."""
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.total_tokens += other.total_tokens


@dataclass(slots=True)
class RunContext(Generic[TContext]):
    """What user code sees of a run: the caller's context object and the usage so far."""

    context: TContext
    usage: Usage = field(default_factory=Usage)
    idempotency_key: str | None = None
    """In a tool call: a key stable across retries and resumes of this call (derived
    from the run id and the call id), to deduplicate external effects. None elsewhere."""
