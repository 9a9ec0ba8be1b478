"""The closed vocabularies of the machine's tables, and the one reader that enforces them.

A state's step switch is rows of two words, :data:`~stepswitch.ir.StepWhen` (what the
row tests in a turn's outcome) and :data:`~stepswitch.ir.StepThen` (what it decides); a
flow node's exit is a word of :data:`~stepswitch.flow_ir.ExitKind`. Two readers turn
those words into behaviour: the interpreter (:func:`stepswitch.runtime.steps.interpret_step`,
:func:`stepswitch.runtime.flow_core.next_node`) and codegen
(:mod:`stepswitch.compiler.codegen`), each with a ``match`` that ends in
``assert_never``, so the type checker proves every word is handled by both.

A word outside a vocabulary (an IR built by hand, edited in a generated runner, or
written by another stepswitch) must fail the same way in both readers and before
anything runs, never as a silent default in one and a ``KeyError`` in the other. So
both read a machine's IR through :func:`check_words` when they take it: the
interpreter when a machine is made (:class:`~stepswitch.runtime.core.MachineCore`),
codegen when it plans a module, and ``lower()`` on what it made. It raises
:class:`~stepswitch.errors.LoweringError` naming the row's path in the IR.

This module is a leaf beside :mod:`stepswitch.ir`: the runtime and the compiler both
import it, and it loads nothing of either (the flow's IR only for a machine that has
a flow).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, get_args

from stepswitch.errors import LoweringError
from stepswitch.ir import MachineIR, StepThen, StepWhen

if TYPE_CHECKING:
    from stepswitch.flow_ir import FlowIR

__all__ = ["STEP_THENS", "STEP_WHENS", "check_words"]

STEP_WHENS: tuple[StepWhen, ...] = get_args(StepWhen)
"""Every word a step switch row's ``when`` may be, in order."""
STEP_THENS: tuple[StepThen, ...] = get_args(StepThen)
"""Every word a step switch row's ``then`` may be, in order."""


def check_words(ir: MachineIR) -> None:
    """Raise :class:`LoweringError` at the first table word of ``ir`` that its
    vocabulary does not hold: each state's step switch rows in order, then each flow
    node's exit."""
    for state in ir.states:
        for i, case in enumerate(state.switch):
            row = f"states[{state.agent!r}].switch[{i}]"
            if case.when not in STEP_WHENS:
                raise _unknown(ir, f"{row}.when", case.when, "a step switch row's when",
                               STEP_WHENS)
            if case.then not in STEP_THENS:
                raise _unknown(ir, f"{row}.then", case.then, "a step switch row's then",
                               STEP_THENS)
    if ir.flow is not None:
        _check_flow(ir, ir.flow)


def _check_flow(ir: MachineIR, flow: FlowIR) -> None:
    from stepswitch.flow_ir import EXIT_KINDS  # loaded already: ``flow`` is made of it

    for node in flow.nodes:
        ex = node.exit
        if ex is not None and ex.kind not in EXIT_KINDS:
            raise _unknown(ir, f"flow.nodes[{node.name!r}].exit.kind", ex.kind,
                           "a flow exit's kind", EXIT_KINDS)


def _unknown(
    ir: MachineIR, where: str, word: object, what: str, known: tuple[str, ...]
) -> LoweringError:
    return LoweringError(
        f"machine {ir.name!r}, {where}: {word!r} is not {what} (one of "
        f"{', '.join(known)}); the machine's IR is wrong or stale: recompile the "
        "workflow, or regenerate the runner with `stepswitch compile TARGET -o FILE`",
        where=where,
        word=word,
    )
