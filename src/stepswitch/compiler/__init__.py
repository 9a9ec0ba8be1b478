"""The compiler: lowering a workflow spec into the step-switch machine IR.

``ir`` is plain data and imports nothing from stepswitch; ``lower`` is a pure pass
from ``WorkflowSpec`` to ``MachineIR``.
"""

from stepswitch.compiler.ir import (
    IR_VERSION,
    Action,
    GuardrailIR,
    HandOff,
    MachineIR,
    OutputRule,
    RunAgent,
    RunFunction,
    StateIR,
    StepRule,
    ToolEntry,
)
from stepswitch.compiler.lower import lower

__all__ = [
    "IR_VERSION",
    "Action",
    "GuardrailIR",
    "HandOff",
    "MachineIR",
    "OutputRule",
    "RunAgent",
    "RunFunction",
    "StateIR",
    "StepRule",
    "ToolEntry",
    "lower",
]
