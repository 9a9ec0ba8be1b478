"""Input guardrails of a fresh run's entry agent: blocking ones before the first model
call, parallel ones beside it (checked before any tool of that response runs).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from stepswitch.errors import (
    InputGuardrailTripwireTriggered,
    UserError,
)
from stepswitch.ir import StateIR
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import (
    Err,
    Ok,
    Outcome,
)
from stepswitch.runtime.result import GuardrailResult
from stepswitch.runtime.run import Run, call_hook

__all__ = ["check_input_guardrails", "checked_verdict", "input_guardrails"]


def input_guardrails(core: MachineCore, run: Run) -> Generator[Any, Any, tuple[Any, ...]]:
    """Blocking guardrails run now; parallel ones are returned to start with the call."""
    state = core.state(run.current)
    parallel: list[Any] = []
    for g in state.input_guardrails:
        fn = core.obj(g.ref)
        if g.run_in_parallel:
            parallel.append(_bind_guard(fn, run, state))
            continue
        verdict = yield from call_hook(fn(run.ctx, state, run.raw_input))
        _record_input(run, state, g.name, verdict)
    return tuple(parallel)


def _bind_guard(fn: Any, run: Run, state: StateIR) -> Any:
    return lambda: fn(run.ctx, state, run.raw_input)


def check_input_guardrails(run: Run, state: StateIR, outcomes: tuple[Outcome, ...]) -> None:
    parallel = [g for g in state.input_guardrails if g.run_in_parallel]
    for g, outcome in zip(parallel, outcomes, strict=True):
        if type(outcome) is Err:
            raise outcome.error
        assert type(outcome) is Ok
        _record_input(run, state, g.name, outcome.value)


def checked_verdict(kind: str, name: str, agent: str, verdict: Any) -> Any:
    """``verdict`` if it has a guardrail result's shape, else a ``UserError`` that names
    the guardrail and what it returned (not an ``AttributeError`` deep in the loop)."""
    flag = getattr(verdict, "tripwire_triggered", None)
    if isinstance(flag, bool) and hasattr(verdict, "output_info"):
        return verdict
    shown = "None" if verdict is None else type(verdict).__name__
    raise UserError(
        f"{kind} guardrail {name!r} of agent {agent!r} returned {shown}; a guardrail must "
        "return GuardrailFunctionOutput(output_info=..., tripwire_triggered=True/False)"
    )


def _record_input(run: Run, state: StateIR, name: str, verdict: Any) -> None:
    verdict = checked_verdict("input", name, state.agent, verdict)
    result = GuardrailResult(name, state.agent, verdict.output_info,
                             bool(verdict.tripwire_triggered))
    run.input_guardrail_results.append(result)
    if result.tripwire_triggered:
        raise InputGuardrailTripwireTriggered(
            f"input guardrail {name!r} of agent {state.agent!r} tripped",
            guardrail_result=result,
        )
