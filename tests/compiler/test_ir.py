"""The IR is plain data: printable, and its repr rebuilds it."""

from __future__ import annotations

import stepswitch.ir as ir_module
from graphs.support import support
from stepswitch.compiler import MachineIR, lower


def _ir() -> MachineIR:
    return lower(support.build().spec)


def test_repr_is_a_literal_that_rebuilds_the_ir() -> None:
    ir = _ir()
    names = {n: getattr(ir_module, n) for n in ir_module.__all__}
    rebuilt = eval(repr(ir), {"__builtins__": {}}, names)  # the codegen contract
    assert rebuilt == ir


def test_refs_lists_every_bound_path_once() -> None:
    ir = _ir()
    assert ir.refs() == (
        "graphs.support:Findings",
        "graphs.support:lookup_order",
        "graphs.support:process_refund",
    )


def test_state_lookup() -> None:
    ir = _ir()
    triage = ir.state("triage")
    assert triage is not None
    assert ir.state("nobody") is None
    entry = triage.tool("transfer_to_refund")
    assert entry is not None and entry.action.kind == "handoff"
    assert triage.tool("process_refund") is None
