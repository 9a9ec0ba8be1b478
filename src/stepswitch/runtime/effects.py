"""What the run loop asks its driver to do, and what the driver sends back.

The loop is a generator that yields these effects and receives their outcomes; it
does no I/O itself. These values live for one step of the loop, so they are plain
(not frozen) slots dataclasses, built several times a turn (bench/README.md). A
driver is done with an effect once it sends back its outcome (the run loop refills
its one ``CallModel`` for its next model call). Every driver
(``run``, ``run_sync``, ``run_streamed``) performs them with
:class:`~stepswitch.runtime.pump.Pump` (which loads asyncio; this module does not)
except model calls while streaming and :class:`Emit`, which only the streaming driver
turns into events.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, Literal, TypeAlias

from stepswitch._dataclass import dataclass
from stepswitch.runtime.model import Model, ModelRequest

__all__ = [
    "Await",
    "CallJob",
    "CallModel",
    "Effect",
    "Emit",
    "Err",
    "Job",
    "NestedJob",
    "Ok",
    "Outcome",
    "RunJobs",
]


@dataclass(slots=True)
class CallModel:
    """Call ``model``. ``alongside`` are thunks (input guardrails run in parallel)
    started with the call; then the outcome is ``(response, outcomes)``."""

    model: Model
    request: ModelRequest
    alongside: tuple[Callable[[], Any], ...] = ()


@dataclass(slots=True)
class CallJob:
    """Call ``fn(*args, **kwargs)``; an async function is awaited, a sync one runs in a
    worker thread (so it cannot block other runs on the event loop). Past ``timeout``
    seconds the outcome is a ``ToolTimeoutError``."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    is_async: bool
    name: str = ""
    """The tool's name and the model's call id (for tracing; empty for hooks)."""
    call_id: str = ""
    timeout: float | None = None


@dataclass(slots=True)
class NestedJob:
    """Drive a nested run loop (an agent tool) to its end."""

    loop: Generator[Any, Any, Any]
    name: str = ""
    """The agent tool's name, the model's call id and the nested agent (for tracing)."""
    call_id: str = ""
    agent: str = ""
    arguments: str = ""
    """The model's arguments to the agent tool, as it sent them (for tracing)."""


Job: TypeAlias = CallJob | NestedJob


@dataclass(slots=True)
class RunJobs:
    """Run ``jobs`` concurrently (at most ``limit`` at once); outcomes in job order."""

    jobs: tuple[Job, ...]
    limit: int | None = None


@dataclass(slots=True)
class Await:
    """Await a value user code returned (an async hook, guardrail, filter …)."""

    awaitable: Awaitable[Any]


@dataclass(slots=True)
class Emit:
    """A stream event: ignored unless the run is streamed."""

    event: Any


Effect: TypeAlias = CallModel | RunJobs | Await | Emit


@dataclass(slots=True)
class Ok:
    value: Any
    kind: Literal["ok"] = "ok"


@dataclass(slots=True)
class Err:
    error: BaseException
    kind: Literal["err"] = "err"


Outcome: TypeAlias = Ok | Err
