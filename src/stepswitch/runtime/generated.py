"""The names a generated runner module may import, and nothing else.

A module written by ``stepswitch.codegen`` embeds the machine IR as a literal (the
``repr`` of :class:`MachineIR` is valid Python over the IR classes listed here),
defines one explicit step function per agent state, resolves the user's objects by
import path with :func:`import_objects`, and builds a :class:`StateMachine` with
its own step table::

    from stepswitch.runtime.generated import (
        FinalMessage, Handoff, Interruption, MachineIR, RunAgain, StateIR,
        StateMachine, TurnOutcome, import_objects, ...
    )

    IR = MachineIR(name='support', entry='triage', states=(StateIR(...), ...))

    def step_triage(state: StateIR, turn: TurnOutcome) -> StepDecision:
        if turn.interrupted:
            return Interruption()
        if turn.handoff is not None:
            return Handoff(turn.handoff)
        if turn.tool_results or turn.had_calls:
            return RunAgain()
        return FinalMessage(turn.last_message or "")

    MACHINE = StateMachine(IR, import_objects(IR.refs()), steps={"triage": step_triage})

Each step function is the state's step switch (``state.switch``, the rows
``lower()`` computed) printed as code, so it decides exactly as
:func:`interpret_step` does reading those rows (the differential tests compare item
traces); the loop does the rest, so a generated machine and the interpreter produce
the same items in the same order.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping

from stepswitch.errors import UserError
from stepswitch.flow_ir import FlowExit, FlowIR, FlowNode
from stepswitch.ir import (
    IR_VERSION,
    GuardrailIR,
    HandOff,
    MachineIR,
    OutputRule,
    PausePoint,
    RunAgent,
    RunFunction,
    StateFacts,
    StateIR,
    StepCase,
    StepRule,
    ToolEntry,
)
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.flow import FlowStep, no_route, predicate_of, route_key
from stepswitch.runtime.machine import RunResultStreaming, StateMachine
from stepswitch.runtime.model import Model
from stepswitch.runtime.result import RunResult
from stepswitch.runtime.state import RunState
from stepswitch.runtime.steps import (
    AskToolUse,
    Final,
    FinalMessage,
    Handoff,
    Interruption,
    RunAgain,
    StepDecision,
    StepFunction,
    ToolResult,
    ToolsToFinalOutputResult,
    TurnOutcome,
    interpret_step,
)

__all__ = [
    "IR_VERSION",
    "AskToolUse",
    "Final",
    "FinalMessage",
    "FlowExit",
    "FlowIR",
    "FlowNode",
    "FlowStep",
    "GuardrailIR",
    "HandOff",
    "Handoff",
    "Interruption",
    "MachineIR",
    "Model",
    "OutputRule",
    "PausePoint",
    "RunAgain",
    "RunAgent",
    "RunConfig",
    "RunFunction",
    "RunResult",
    "RunResultStreaming",
    "RunState",
    "StateFacts",
    "StateIR",
    "StateMachine",
    "StepCase",
    "StepDecision",
    "StepFunction",
    "StepRule",
    "ToolEntry",
    "ToolResult",
    "ToolsToFinalOutputResult",
    "TurnOutcome",
    "check_ir_version",
    "import_objects",
    "interpret_step",
    "no_route",
    "predicate_of",
    "route_key",
]


def check_ir_version(ir: MachineIR) -> None:
    """Refuse an IR literal written for another IR version than this runtime reads."""
    if ir.version != IR_VERSION:
        raise UserError(
            f"the generated runner of workflow {ir.name!r} holds IR version {ir.version}, "
            f"but this stepswitch reads version {IR_VERSION}: regenerate it with "
            "`stepswitch compile TARGET -o FILE`"
        )


def bound_objects(machine: StateMachine) -> Mapping[str, object]:
    """The objects ``machine`` runs, by import path. For codegen, which checks that each
    imports by its path; not one of the names a generated module imports."""
    return machine._core.resolver


def import_objects(paths: Iterable[str]) -> dict[str, object]:
    """Import every ``module:qualname`` path; ``UserError`` names the one that fails."""
    out: dict[str, object] = {}
    for path in paths:
        module_name, sep, qualname = path.partition(":")
        if not sep or not module_name or not qualname or "<" in qualname:
            raise UserError(f"cannot import {path!r}: not a module:qualname path")
        try:
            obj: object = importlib.import_module(module_name)
        except ImportError as exc:
            raise UserError(f"cannot import {path!r}: {exc}") from None
        for part in qualname.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise UserError(
                    f"cannot import {path!r}: {module_name} has no attribute {qualname!r}"
                ) from None
        out[path] = obj
    return out
