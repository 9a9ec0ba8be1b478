"""What a generated module does: IR from its repr, objects by import, explicit steps."""

from __future__ import annotations

import pytest

import stepswitch as ss
import stepswitch.runtime.generated as gen
from graphs.support import support
from stepswitch.compiler import lower
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests.conformance.harness import run_all


def _plain_step(state: gen.StateIR, turn: gen.TurnOutcome) -> gen.StepDecision:
    if turn.interrupted:
        return gen.InterruptionStep()
    if turn.handoff is not None:
        return gen.HandoffStep(turn.handoff)
    if turn.tool_results or turn.had_calls:
        return gen.RunAgain()
    if turn.last_message is None and state.output.kind == "typed":
        return gen.RunAgain()
    return gen.FinalMessage(turn.last_message or "")


def _generated_machine() -> gen.StateMachine:
    ir_text = repr(lower(support.build().spec))
    names = {n: getattr(gen, n) for n in gen.__all__}
    ir = eval(ir_text, {"__builtins__": {}}, names)
    steps = {s.agent: _plain_step for s in ir.states}
    return gen.StateMachine(ir, gen.import_objects(ir.refs()), steps=steps)


SCRIPT: list[ScriptStep] = [
    [function_call("lookup_order", {"order_id": 42}),
     function_call("research", {"input": "policy?"})],
    [assistant_message('{"summary": "refunds ok"}')],
    [function_call("transfer_to_refund", {})],
    [function_call("process_refund", {"order_id": 42})],
]


def test_generated_and_interpreted_machines_make_the_same_items() -> None:
    generated = run_all(_generated_machine(), "refund 42", SCRIPT)
    interpreted = run_all(support.compile(), "refund 42", SCRIPT)
    assert generated.observed() == interpreted.observed()
    assert generated.result.interruptions[0].name == "process_refund"


def test_a_step_table_decides() -> None:
    def always_final(state: gen.StateIR, turn: gen.TurnOutcome) -> gen.StepDecision:
        return gen.Final("stopped by the table")

    ir = lower(support.build().spec)
    machine = gen.StateMachine(ir, gen.import_objects(ir.refs()), steps={"triage": always_final})
    result = machine.run_sync(
        "x", model=ScriptedModel([[function_call("lookup_order", {"order_id": 1})]])
    )
    assert result.final_output == "stopped by the table"
    with pytest.raises(ss.UserError, match="unknown agents"):
        gen.StateMachine(ir, gen.import_objects(ir.refs()), steps={"ghost": always_final})


def test_import_objects_errors_name_the_path() -> None:
    assert gen.import_objects(["graphs.support:lookup_order"])["graphs.support:lookup_order"] \
        is __import__("graphs.support").support.lookup_order
    for bad, fragment in [
        ("nope", "not a module:qualname"),
        ("no_such_module_xyz:f", "No module named"),
        ("graphs.support:missing", "has no attribute 'missing'"),
        ("graphs.support:<lambda>", "not a module:qualname"),
    ]:
        with pytest.raises(ss.UserError, match=fragment):
            gen.import_objects([bad])


def test_a_machine_refuses_unbound_paths() -> None:
    ir = lower(support.build().spec)
    with pytest.raises(ss.UserError, match=r"no object bound for 'graphs\.support:Findings'"):
        gen.StateMachine(ir, {p: object() for p in ir.refs() if "Findings" not in p})


def test_generated_names_resolve() -> None:
    assert gen.__all__ == sorted(gen.__all__, key=lambda n: (not n.isupper(), n))
    for name in gen.__all__:
        assert getattr(gen, name) is not None
