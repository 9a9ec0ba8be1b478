"""What tool guardrails see and return, in the Agents SDK's shapes.

A tool input guardrail (``@ss.tool_input_guardrail``) gets a
:class:`ToolInputGuardrailData` (``.context``: the :class:`ToolContext` of the call,
with ``tool_name``, ``tool_call_id`` and ``tool_arguments``, the JSON text the model
sent; ``.agent``: the agent whose turn made the call) and a tool output guardrail a
:class:`ToolOutputGuardrailData` (the same, and ``.output``: the tool's value). Each
returns a :class:`ToolGuardrailFunctionOutput`: ``allow()``, ``reject_content(message)``
(the model gets ``message`` as the tool's output; an input guardrail's call never runs)
or ``raise_exception()`` (the run ends with ``ToolInputGuardrailTripwireTriggered`` /
``ToolOutputGuardrailTripwireTriggered``, keeping ``run_data``).

A leaf module, like :mod:`stepswitch.context`: the DSL's decorators
(:mod:`stepswitch.dsl.tool_guardrails`) and the runtime both read it, and it loads only
for a workflow that has tool guardrails or hooks.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal, TypeVar

from stepswitch._dataclass import dataclass
from stepswitch.context import RunContext

__all__ = [
    "ToolContext",
    "ToolGuardrailBehavior",
    "ToolGuardrailFunctionOutput",
    "ToolInputGuardrailData",
    "ToolInputGuardrailResult",
    "ToolOutputGuardrailData",
    "ToolOutputGuardrailResult",
    "behavior_of",
]

TContext = TypeVar("TContext")

ToolGuardrailBehavior = Literal["allow", "reject_content", "raise_exception"]


@dataclass(slots=True)
class ToolContext(RunContext[TContext]):
    """The run context of one tool call (the SDK's ``ToolContext``)."""

    tool_name: str = ""
    tool_call_id: str = ""
    tool_arguments: str = ""
    """The arguments as the model sent them (JSON text)."""


@dataclass(slots=True)
class ToolGuardrailFunctionOutput:
    """What a tool guardrail returns: make it with :meth:`allow`, :meth:`reject_content`
    or :meth:`raise_exception`. ``behavior`` is the SDK's dict (``{"type": "allow"}``,
    ``{"type": "reject_content", "message": ...}``, ``{"type": "raise_exception"}``)."""

    output_info: Any = None
    behavior: dict[str, Any] = field(default_factory=lambda: {"type": "allow"})

    @classmethod
    def allow(cls, output_info: Any = None) -> ToolGuardrailFunctionOutput:
        """The call runs (input) or its output goes to the model (output) as it is."""
        return cls(output_info, {"type": "allow"})

    @classmethod
    def reject_content(cls, message: str, output_info: Any = None) -> ToolGuardrailFunctionOutput:
        """The model gets ``message`` as the tool's output; for an input guardrail the
        tool does not run. The run goes on."""
        return cls(output_info, {"type": "reject_content", "message": message})

    @classmethod
    def raise_exception(cls, output_info: Any = None) -> ToolGuardrailFunctionOutput:
        """The run ends with a tool-guardrail tripwire, keeping ``run_data``."""
        return cls(output_info, {"type": "raise_exception"})


@dataclass(slots=True)
class ToolInputGuardrailData:
    """What a tool input guardrail gets: the call's context and the agent (its state,
    whose ``.name`` is the agent's name)."""

    context: ToolContext[Any]
    agent: Any


@dataclass(slots=True)
class ToolOutputGuardrailData(ToolInputGuardrailData):
    """What a tool output guardrail gets: the call's context, the agent and the tool's
    value (``output``). A ``ToolInputGuardrailData`` too, as in the SDK."""

    output: Any


@dataclass(frozen=True, slots=True)
class ToolInputGuardrailResult:
    """One tool input guardrail's verdict on one call."""

    guardrail: str
    """The guardrail's name."""
    agent: str
    tool_name: str
    call_id: str
    output: Any
    """The ``ToolGuardrailFunctionOutput`` it returned."""


@dataclass(frozen=True, slots=True)
class ToolOutputGuardrailResult:
    """One tool output guardrail's verdict on one call's output."""

    guardrail: str
    agent: str
    tool_name: str
    call_id: str
    output: Any


_BEHAVIORS = frozenset({"allow", "reject_content", "raise_exception"})


def behavior_of(verdict: Any) -> tuple[ToolGuardrailBehavior, str] | None:
    """``(type, message)`` of a guardrail's verdict (ours or the Agents SDK's, which has
    the same ``behavior`` dict); None when ``verdict`` has no such shape."""
    behavior = getattr(verdict, "behavior", None)
    if not isinstance(behavior, dict) or not hasattr(verdict, "output_info"):
        return None
    kind = behavior.get("type")
    if kind not in _BEHAVIORS:
        return None
    if kind == "reject_content":
        message = behavior.get("message")
        if not isinstance(message, str):
            return None
        return "reject_content", message
    return kind, ""
