"""The step switch: how one turn's outcome maps to Final / Handoff / Interruption /
RunAgain.

A step function takes the agent's :class:`~stepswitch.ir.StateIR` and the
:class:`TurnOutcome` (what the response asked for and what its tools produced) and
returns a :data:`StepDecision`. :func:`interpret_step` reads the state's step switch
(``state.switch``, rows computed once by ``lower()``); a generated module passes its
own explicit function per agent, those same rows printed as code. Either way the loop
does the same thing with the decision, so the items are the same.

Outcomes and decisions live for one turn, so they are slots dataclasses, not frozen
ones (several are built per turn; frozen construction costs about five times more).
Treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeAlias, assert_never

from stepswitch._dataclass import dataclass
from stepswitch.ir import StateIR

__all__ = [
    "AskToolUse",
    "Final",
    "FinalMessage",
    "HandoffStep",
    "InterruptionStep",
    "RunAgain",
    "StepDecision",
    "StepFunction",
    "ToolResult",
    "ToolsToFinalOutputResult",
    "TurnOutcome",
    "interpret_step",
]


@dataclass(slots=True)
class ToolResult:
    """A function or agent tool that ran this turn: its name and what it returned."""

    name: str
    value: Any
    output: str


@dataclass(slots=True)
class TurnOutcome:
    """What one response amounted to once its tools ran."""

    interrupted: bool
    """Some call waits for a human's decision."""
    handoff: str | None
    """The agent a handoff moves to, if a handoff took effect."""
    tool_results: tuple[ToolResult, ...]
    """Function and agent tools that ran, in call order."""
    had_calls: bool
    """The response called anything at all (tools, handoffs, unknown names)."""
    last_message: str | None
    """The text of the response's last message, if it had one."""


@dataclass(slots=True)
class Final:
    """The run ends with ``output`` (a tool's result, taken as is)."""

    output: Any
    kind: Literal["final"] = "final"


@dataclass(slots=True)
class FinalMessage:
    """The run ends with the last message, parsed by the state's output rule."""

    text: str
    kind: Literal["final_message"] = "final_message"


@dataclass(slots=True)
class HandoffStep:
    """The current agent becomes ``target``; the loop goes on."""

    target: str
    kind: Literal["handoff"] = "handoff"


@dataclass(slots=True)
class InterruptionStep:
    """The run pauses until every pending approval is decided."""

    kind: Literal["interruption"] = "interruption"


@dataclass(slots=True)
class RunAgain:
    """The model is called again (tool outputs feed back)."""

    kind: Literal["run_again"] = "run_again"


@dataclass(slots=True)
class AskToolUse:
    """The agent's ``tool_use_behavior`` function decides between Final and RunAgain."""

    kind: Literal["ask_tool_use"] = "ask_tool_use"


StepDecision: TypeAlias = (
    Final | FinalMessage | HandoffStep | InterruptionStep | RunAgain | AskToolUse
)
StepFunction: TypeAlias = Callable[[StateIR, TurnOutcome], StepDecision]


_RUN_AGAIN = RunAgain()
_INTERRUPTION = InterruptionStep()
_ASK = AskToolUse()


def interpret_step(state: StateIR, turn: TurnOutcome) -> StepDecision:
    """The generic step function: the first row of ``state.switch`` whose condition
    holds decides (codegen prints the same rows as code). Each vocabulary is matched
    whole; a machine's rows were read through :func:`stepswitch.vocabulary.check_words`
    when it was made, so no other word reaches here."""
    for case in state.switch:
        when = case.when
        match when:
            case "interrupted":
                if not turn.interrupted:
                    continue
            case "handoff":
                if turn.handoff is None:
                    continue
            case "tools_ran":
                if not turn.tool_results:
                    continue
            case "called":
                if not turn.had_calls:
                    continue
            case "no_message":
                if turn.last_message is not None:
                    continue
            case "otherwise":
                pass
            case _:
                assert_never(when)
        then = case.then
        match then:
            case "run_again":
                return _RUN_AGAIN
            case "final_message":
                return FinalMessage(turn.last_message or "")
            case "interruption":
                return _INTERRUPTION
            case "handoff":
                return HandoffStep(turn.handoff or "")
            case "final_first_tool":
                return Final(turn.tool_results[0].value)
            case "final_listed_tool":
                for result in turn.tool_results:
                    if result.name in case.tools:
                        return Final(result.value)
                return _RUN_AGAIN
            case "ask_tool_use":
                return _ASK
            case _:
                assert_never(then)
    raise AssertionError(f"state {state.agent!r}: its step switch decided nothing")


@dataclass(frozen=True, slots=True)
class ToolsToFinalOutputResult:
    """What a ``tool_use_behavior`` function returns: stop with ``final_output``, or not."""

    is_final_output: bool
    final_output: Any = None
