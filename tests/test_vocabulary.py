"""The tables' vocabularies are closed: a word no reader knows fails the same way in the
interpreter, in codegen and in a generated runner, before anything runs; and every
word the vocabularies hold is decided alike by the interpreter and generated code."""

from __future__ import annotations

import importlib
import itertools
from dataclasses import replace
from typing import Any

import pytest

from graphs.support import support
from stepswitch.compiler.codegen import codegen, load_source, plan_module, render
from stepswitch.errors import LoweringError, UserError
from stepswitch.ir import MachineIR, StateIR, StepCase
from stepswitch.runtime.machine import StateMachine
from stepswitch.runtime.steps import ToolResult, TurnOutcome, interpret_step
from stepswitch.vocabulary import STEP_THENS, STEP_WHENS


def _support() -> tuple[MachineIR, dict[str, object]]:
    machine = support.compile()
    return machine.ir, dict(machine._core.resolver)


def _with_row(ir: MachineIR, agent: str, index: int, **words: Any) -> MachineIR:
    states = []
    for state in ir.states:
        if state.agent == agent:
            rows = list(state.switch)
            rows[index] = replace(rows[index], **words)
            state = replace(state, switch=tuple(rows))
        states.append(state)
    return replace(ir, states=tuple(states))


def _both(ir: MachineIR, resolver: dict[str, object]) -> tuple[LoweringError, LoweringError]:
    with pytest.raises(LoweringError) as interpreted:
        StateMachine(ir, resolver)
    with pytest.raises(LoweringError) as generated:
        plan_module(ir)
    return interpreted.value, generated.value


@pytest.mark.parametrize("field", ["when", "then"])
def test_an_unknown_step_switch_word_is_the_same_located_error_in_both_readers(
    field: str,
) -> None:
    ir, resolver = _support()
    bad = _with_row(ir, "refund", 1, **{field: "frobnicate"})
    interpreted, generated = _both(bad, resolver)
    assert str(interpreted) == str(generated)
    assert interpreted.where == generated.where == f"states['refund'].switch[1].{field}"
    assert interpreted.word == "frobnicate"
    said = str(interpreted)
    assert "\n" not in said
    assert said.startswith(f"machine 'support', states['refund'].switch[1].{field}: "
                           "'frobnicate' is not a step switch row's")
    known = STEP_WHENS if field == "when" else STEP_THENS
    assert ", ".join(known) in said
    assert "stepswitch compile TARGET -o FILE" in said
    assert isinstance(interpreted, UserError)


def test_an_unknown_flow_exit_is_the_same_located_error_in_both_readers() -> None:
    from graphs.story import story

    machine = story.compile()
    ir = machine.ir
    assert ir.flow is not None
    node = next(n for n in ir.flow.nodes if n.exit is not None and n.exit.kind == "then")
    assert node.exit is not None
    nodes = tuple(
        replace(n, exit=replace(node.exit, kind="loop")) if n is node else n  # type: ignore[arg-type]
        for n in ir.flow.nodes
    )
    bad = replace(ir, flow=replace(ir.flow, nodes=nodes))
    interpreted, generated = _both(bad, dict(machine._core.resolver))
    assert str(interpreted) == str(generated)
    assert interpreted.where == f"flow.nodes[{node.name!r}].exit.kind"
    assert "'loop' is not a flow exit's kind (one of then, branch, route, fan_out)" in str(
        interpreted)


def test_a_generated_runner_with_an_edited_word_fails_on_import_with_the_same_error() -> None:
    ir, resolver = _support()
    source = codegen(support.compile(), source="graphs.support:support")
    row = 'StepCase(when="called", then="run_again")'
    assert row in source
    edited = source.replace(row, 'StepCase(when="called", then="rerun")', 1)
    with pytest.raises(LoweringError) as on_import:
        load_source(edited, "edited_support")
    first = next(
        (s.agent, i) for s in ir.states for i, c in enumerate(s.switch)
        if (c.when, c.then) == ("called", "run_again")
    )
    interpreted, _ = _both(_with_row(ir, first[0], first[1], then="rerun"), resolver)
    assert str(on_import.value) == str(interpreted)


def test_lower_refuses_a_word_it_wrote_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    lowering = importlib.import_module("stepswitch.compiler.lower")  # the module, not lower()

    def bogus(state: StateIR) -> tuple[StepCase, ...]:
        return (StepCase("otherwise", "final_answer"),)  # type: ignore[arg-type]

    monkeypatch.setattr(lowering, "step_switch", bogus)
    with pytest.raises(LoweringError, match=r"states\['triage'\]\.switch\[0\]\.then"):
        lowering.lower(support.build().spec)


# -- every word, decided alike -------------------------------------------------------------


def _turns() -> list[TurnOutcome]:
    results: list[tuple[ToolResult, ...]] = [
        (), (ToolResult("stop", "S", "S"),), (ToolResult("other", 1, "1"),),
        (ToolResult("other", 1, "1"), ToolResult("stop", 2, "2")),
    ]
    return [
        TurnOutcome(interrupted, handoff, r, called or bool(r) or handoff is not None, message)
        for interrupted, handoff, r, called, message in itertools.product(
            (False, True), (None, "elsewhere"), results, (False, True), (None, "", "text"),
        )
    ]


def _decides(step: Any, state: StateIR, turn: TurnOutcome) -> object:
    try:
        return step(state, turn)
    except (AssertionError, IndexError) as exc:  # the same failure counts as agreement
        return type(exc)


def test_every_pair_of_words_is_decided_alike_by_the_interpreter_and_generated_code() -> None:
    """Rows lower() never writes as well (any when with any then, a switch with no last
    row that always holds): generated code reads each row as the interpreter does."""
    tails: list[tuple[StepCase, ...]] = [(StepCase("otherwise", "final_message"),), ()]
    states: list[StateIR] = []
    for when, then, tail in itertools.product(STEP_WHENS, STEP_THENS, tails):
        row = StepCase(when, then, ("stop",) if then == "final_listed_tool" else ())
        states.append(StateIR(agent=f"s{len(states)}", switch=(row, *tail)))
    states.append(StateIR(agent="lower_tail",
                          switch=(StepCase("no_message", "run_again"),
                                  StepCase("otherwise", "final_message"))))
    ir = MachineIR(name="words", entry="s0", states=tuple(states))
    module = load_source(render(plan_module(ir)), "words_runner")
    checked = 0
    for state in states:
        for turn in _turns():
            ours = _decides(module.STEPS[state.agent], state, turn)
            assert ours == _decides(interpret_step, state, turn), (state.switch, turn)
            checked += 1
    assert checked == len(states) * len(_turns())
