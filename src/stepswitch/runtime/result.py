"""``RunResult`` and the run data that errors carry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, TypeVar

from stepswitch._dataclass import dataclass
from stepswitch.context import Usage
from stepswitch.runtime.items import RunItem, ToolApprovalItem
from stepswitch.runtime.model import InputItem, ModelResponse

if TYPE_CHECKING:
    from stepswitch.runtime.state import RunState

__all__ = ["GuardrailResult", "RunErrorDetails", "RunResult"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class GuardrailResult:
    """One guardrail's verdict: its name, the agent, and what the function returned."""

    guardrail: str
    agent: str
    output_info: Any
    tripwire_triggered: bool


@dataclass(slots=True)
class RunResult:
    """The outcome of a run: its items, its final output (None when interrupted), the
    agent that ended it, pending approvals, raw responses and usage."""

    input: tuple[InputItem, ...]
    new_items: list[RunItem]
    final_output: Any
    last_agent: str
    interruptions: list[ToolApprovalItem]
    raw_responses: list[ModelResponse]
    usage: Usage
    max_turns: int | None
    input_guardrail_results: list[GuardrailResult] = field(default_factory=list)
    output_guardrail_results: list[GuardrailResult] = field(default_factory=list)
    tool_input_guardrail_results: list[Any] = field(default_factory=list)
    """``ToolInputGuardrailResult`` s, one per tool input guardrail run, in order."""
    tool_output_guardrail_results: list[Any] = field(default_factory=list)
    """``ToolOutputGuardrailResult`` s, one per tool output guardrail run, in order."""
    _state: Callable[[], RunState] | None = field(default=None, repr=False)

    def to_state(self) -> RunState:
        """A ``RunState`` to decide pending approvals on and resume from."""
        if self._state is None:
            raise RuntimeError("this result has no state")
        return self._state()

    def to_input_list(self) -> list[InputItem]:
        """The run's input followed by every new item (approval requests left out)."""
        items: list[InputItem] = list(self.input)
        items.extend(i for i in self.new_items if type(i) is not ToolApprovalItem)
        return items

    def final_output_as(self, cls: type[T], raise_if_incorrect_type: bool = False) -> T:
        """The final output typed as ``cls`` (checked when asked)."""
        if raise_if_incorrect_type and not isinstance(self.final_output, cls):
            raise TypeError(
                f"final output is {type(self.final_output).__name__}, not {cls.__name__}"
            )
        return self.final_output  # type: ignore[no-any-return]


@dataclass(slots=True)
class RunErrorDetails:
    """The run so far, carried by an error as ``exc.run_data``."""

    input: tuple[InputItem, ...]
    new_items: list[RunItem]
    last_agent: str
    raw_responses: list[ModelResponse]
    usage: Usage
    input_guardrail_results: list[GuardrailResult] = field(default_factory=list)
    output_guardrail_results: list[GuardrailResult] = field(default_factory=list)
    tool_input_guardrail_results: list[Any] = field(default_factory=list)
    """``ToolInputGuardrailResult`` s, one per tool input guardrail run, in order."""
    tool_output_guardrail_results: list[Any] = field(default_factory=list)
    """``ToolOutputGuardrailResult`` s, one per tool output guardrail run, in order."""
    _state: Callable[[], RunState] | None = field(default=None, repr=False)

    def to_state(self) -> RunState:
        """A state that resumes the run where it stopped (e.g. with a larger budget)."""
        if self._state is None:
            raise RuntimeError("this run cannot be resumed")
        return self._state()

    def as_result(self) -> RunResult:
        """The run so far as a :class:`RunResult` (no final output, nothing pending):
        what a streamed run cancelled between two events gives."""
        return RunResult(
            input=self.input, new_items=self.new_items, final_output=None,
            last_agent=self.last_agent, interruptions=[], raw_responses=self.raw_responses,
            usage=self.usage, max_turns=None,
            input_guardrail_results=self.input_guardrail_results,
            output_guardrail_results=self.output_guardrail_results,
            tool_input_guardrail_results=self.tool_input_guardrail_results,
            tool_output_guardrail_results=self.tool_output_guardrail_results,
            _state=self._state,
        )
