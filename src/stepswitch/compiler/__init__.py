"""The compiler: lowering a workflow spec into the step-switch machine IR.

The IR is plain data in :mod:`stepswitch.ir` (re-exported here); ``lower`` is a pure
pass from ``WorkflowSpec`` to ``MachineIR``.
"""

from stepswitch.compiler.lower import lower
from stepswitch.ir import (
    IR_VERSION,
    Action,
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
    "GuardrailIR",
    "HandoffTo",
    "MachineIR",
    "OutputRule",
    "RunAgent",
    "RunFunction",
    "StateIR",
    "StepRule",
    "ToolEntry",
    "lower",
]
