"""``RunConfig``: settings of one run that are not part of the workflow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from stepswitch.settings import ModelSettings

__all__ = ["RunConfig"]


@dataclass(frozen=True, slots=True)
class RunConfig:
    """How one run behaves where the workflow leaves a choice.

    ``on_max_turns(run_data)`` and ``on_invalid_output(error, text)`` are recovery
    handlers: a return value other than ``None`` becomes the final output; ``None``
    re-raises. Either may be async.
    """

    model_settings: ModelSettings | None = None
    """Overrides every agent's settings field by field."""
    unknown_tool: Literal["raise", "return_error"] = "raise"
    """A call of a tool the agent does not have: ``ModelBehaviorError`` (default), or
    an error tool output the model sees."""
    max_tool_concurrency: int | None = None
    """At most this many tool calls of one response run at once (None: no limit)."""
    reset_tool_choice: bool = True
    """After an agent used tools, its next calls send ``tool_choice=None`` (as the SDK)."""
    on_max_turns: Callable[..., Any] | None = None
    on_invalid_output: Callable[..., Any] | None = None
    handoff_input_filter: Callable[..., Any] | None = None
    """Applied to handoffs that declare no ``input_filter`` of their own."""
    trace_content: bool = False
    """Record message content, tool arguments and tool results on the run's
    OpenTelemetry spans (off by default: they may hold personal data)."""
    tracer_provider: Any = None
    """The OpenTelemetry ``TracerProvider`` for this run's spans; None uses the global
    one (when ``opentelemetry`` is set up), else the run is not traced."""
