"""``RunConfig``: settings of one run that are not part of the workflow."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from stepswitch._dataclass import dataclass
from stepswitch.errors import UserError

if TYPE_CHECKING:  # a pydantic model: imported only when a run is given one
    from stepswitch.settings import ModelSettings

__all__ = ["RunConfig", "check_max_turns"]


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
    on_conflict: Literal["raise", "reload"] = "raise"
    """A session another writer changed while this run was going: ``SessionConflict``
    (default), or load its new version and append this turn after it (the turn stays
    whole; the model did not see the other writer's items)."""
    max_cost_usd: float | None = None
    """US dollars the whole run may spend (nested runs included): the usage each model
    call reports is priced from ``stepswitch/prices.json`` with ``prices`` over it; past
    the ceiling the run stops with ``CostLimitExceeded``, keeping it in ``run_data``.
    None: no limit."""
    prices: Mapping[str, tuple[float, float]] | None = None
    """Model -> (input, output) US dollars per million tokens, over the shipped table,
    for ``max_cost_usd`` (``stepswitch run --max-cost`` passes the project's
    ``[tool.stepswitch.prices]``, as ``check`` reads it for its bound)."""
    timeout: float | None = None
    """Seconds the whole run may take (nested runs included; a resumed run starts a new
    clock). Past it, what the run awaits is cancelled and ``RunTimeoutError`` ends the
    run, keeping it in ``run_data``. None: no limit."""
    mcp_drift: Literal["error", "allow"] = "error"
    """An MCP server whose listed tools differ from its lock: ``MCPServerError`` before
    any of its tools runs (default), or run them as listed."""

    record: str | os.PathLike[str] | None = None
    """Write the run (its input and new items) to this file when it ends, for
    ``stepswitch replay`` and ``stepswitch test``; None (default): nothing is kept."""
    hooks: Any = None
    """The run's ``ss.RunHooks`` (what ``run(..., hooks=)`` sets): called for every agent
    of the run, nested agent-tool runs and a flow's nodes included."""
    run_hooks: Any = field(default=None, init=False, repr=False, compare=False)
    """``hooks`` read once (:func:`stepswitch.runtime.hooks.hook_set`): what the loop
    calls; None without hooks."""

    def __post_init__(self) -> None:
        # checked here, not when a run trips over it mid-way with items to lose
        if self.model_settings is not None:
            from stepswitch.settings import ModelSettings

            if not isinstance(self.model_settings, ModelSettings):
                _bad("model_settings", "a ModelSettings or None", self.model_settings)
        if self.on_conflict not in ("raise", "reload"):
            _bad("on_conflict", '"raise" or "reload"', self.on_conflict)
        if self.mcp_drift not in ("error", "allow"):
            _bad("mcp_drift", '"error" or "allow"', self.mcp_drift)
        if self.unknown_tool not in ("raise", "return_error"):
            _bad("unknown_tool", '"raise" or "return_error"', self.unknown_tool)
        limit = self.max_tool_concurrency
        if limit is not None and (type(limit) is not int or limit < 1):
            _bad("max_tool_concurrency", "a positive integer or None", limit)
        for flag in ("reset_tool_choice", "trace_content"):
            if type(getattr(self, flag)) is not bool:
                _bad(flag, "True or False", getattr(self, flag))
        timeout = self.timeout
        if timeout is not None and (
            type(timeout) not in (int, float) or not 0 < timeout < float("inf")
        ):
            _bad("timeout", "a positive number of seconds or None", timeout)
        if self.record is not None and not isinstance(self.record, str | os.PathLike):
            _bad("record", "a file path or None", self.record)
        cap = self.max_cost_usd
        if cap is not None and (type(cap) not in (int, float) or not 0 < cap < float("inf")):
            _bad("max_cost_usd", "a positive number of US dollars or None", cap)
        if self.prices is not None and not (isinstance(self.prices, Mapping) and all(
            isinstance(k, str) and isinstance(v, tuple) and len(v) == 2
            and all(type(x) in (int, float) and 0 <= x < float("inf") for x in v)
            for k, v in self.prices.items()
        )):
            _bad("prices", "a mapping of model name to (input, output) USD per 1M tokens",
                 self.prices)
        if self.hooks is not None:
            from stepswitch.lifecycle import check_hooks
            from stepswitch.runtime.hooks import hook_set

            check_hooks(self.hooks, "run", "RunConfig")
            object.__setattr__(self, "run_hooks", hook_set(self.hooks, "run"))
        for name in ("on_max_turns", "on_invalid_output", "handoff_input_filter"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                _bad(name, "a function or None", value)


def _bad(field: str, expected: str, value: Any) -> None:
    raise UserError(f"RunConfig: {field} must be {expected}, got {_shown(value)}")


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:79] + "…"


def check_max_turns(value: Any, where: str) -> int:
    """``value`` if it is a positive integer; else a ``UserError`` naming ``where``."""
    if type(value) is not int or value < 1:
        raise UserError(f"{where} must be a positive integer, got {_shown(value)}")
    return value

