"""Moved to :mod:`stepswitch.ir` (a leaf module the runtime imports without loading the
compiler); this path re-exports it for code written against the old location."""

from stepswitch.ir import (
    IR_VERSION,
    Action,
    Approval,
    GuardrailIR,
    HandoffTo,
    MachineIR,
    OutputRule,
    RunAgent,
    RunFunction,
    StateIR,
    StepRule,
    ToolEntry,
)

__all__ = [
    "IR_VERSION",
    "Action",
    "Approval",
    "GuardrailIR",
    "HandoffTo",
    "MachineIR",
    "OutputRule",
    "RunAgent",
    "RunFunction",
    "StateIR",
    "StepRule",
    "ToolEntry",
]
