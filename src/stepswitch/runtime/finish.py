"""After the step switch: apply a decision, parse a final output, run output
guardrails, and the max-turns stop.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from stepswitch.errors import (
    MaxTurnsExceeded,
    ModelBehaviorError,
    OutputGuardrailTripwireTriggered,
    UserError,
)
from stepswitch.ir import StateIR
from stepswitch.runtime import hooks as _hooks
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import (
    Emit,
)
from stepswitch.runtime.events import AgentUpdated
from stepswitch.runtime.guardrails import checked_verdict
from stepswitch.runtime.items import (
    MessageOutputItem,
)
from stepswitch.runtime.result import GuardrailResult, RunResult
from stepswitch.runtime.run import Run, call_hook, flush
from stepswitch.runtime.state import PendingTurn
from stepswitch.runtime.steps import (
    AskToolUse,
    Final,
    FinalMessage,
    HandoffStep,
    InterruptionStep,
    RunAgain,
    StepDecision,
    ToolsToFinalOutputResult,
    TurnOutcome,
)
from stepswitch.runtime.tools import (
    describe_invalid,
    output_text,
    parse_typed_output,
)

__all__ = ["apply_decision", "stop_at_max_turns"]


def apply_decision(
    core: MachineCore,
    run: Run,
    config: RunConfig,
    state: StateIR,
    turn: TurnOutcome,
    decision: StepDecision,
    pending: PendingTurn | None,
) -> Generator[Any, Any, RunResult | None]:
    """Carry out a turn's decision; the run's result when it ends or pauses. ``pending``
    is the turn a pause saves (given for an ``InterruptionStep`` decision)."""
    if type(decision) is AskToolUse:
        fn = core.obj(state.step.function or "")
        verdict = yield from call_hook(fn(run.ctx, list(turn.tool_results)))
        if not isinstance(verdict, ToolsToFinalOutputResult):
            raise UserError(
                f"agent {state.agent!r}: tool_use_behavior function returned "
                f"{type(verdict).__name__}, not ToolsToFinalOutputResult"
            )
        decision = Final(verdict.final_output) if verdict.is_final_output else RunAgain()
    if type(decision) is RunAgain:
        return None
    if type(decision) is HandoffStep:
        run.current = decision.target
        if run.emit:
            yield Emit(AgentUpdated(decision.target))
        return None
    if type(decision) is InterruptionStep:
        assert pending is not None, "a pause saves its turn"
        return run.result(None, interrupted=pending)
    if type(decision) is Final:
        # the tool's own value, as docs/codegen.md promises: a dict stays a dict
        # (the Agents SDK would hand back its str(); docs/migrating.md lists it)
        return (yield from _finish(core, run, config, state, decision.output))
    if type(decision) is FinalMessage:
        output = yield from _parse_final(core, run, config, state, decision.text)
        return (yield from _finish(core, run, config, state, output))
    raise AssertionError(f"unknown step decision {decision!r}")


def _parse_final(
    core: MachineCore, run: Run, config: RunConfig, state: StateIR, text: str
) -> Generator[Any, Any, Any]:
    rule = state.output
    if rule.kind == "text":
        return text
    try:
        return parse_typed_output(core.obj(rule.type_ref or ""), rule.wrapped, text)
    except ValueError as exc:  # pydantic's ValidationError and json's errors are ValueErrors
        from pydantic import ValidationError

        # pydantic's own text is many lines and a URL; one line per field, as tools say
        why = describe_invalid(exc) if isinstance(exc, ValidationError) else str(exc)
        error = ModelBehaviorError(
            f"Invalid JSON when parsing model output of agent {state.agent!r} as "
            f"{rule.name or 'its output type'}: {why}"
        )
        if config.on_invalid_output is not None:
            value = yield from call_hook(config.on_invalid_output(error, text))
            if value is not None:
                return value
        raise error from None


def _finish(
    core: MachineCore, run: Run, config: RunConfig, state: StateIR, output: Any
) -> Generator[Any, Any, RunResult]:
    for g in state.output_guardrails:
        verdict = yield from call_hook(core.obj(g.ref)(run.ctx, state, output))
        verdict = checked_verdict("output", g.name, state.agent, verdict)
        result = GuardrailResult(g.name, state.agent, verdict.output_info,
                                 bool(verdict.tripwire_triggered))
        run.output_guardrail_results.append(result)
        if result.tripwire_triggered:
            raise OutputGuardrailTripwireTriggered(
                f"output guardrail {g.name!r} of agent {state.agent!r} tripped",
                guardrail_result=result,
            )
    own = core.turns[state.agent].hooks
    if config.run_hooks is not None or own is not None:
        yield from _hooks.agent_end(run, config.run_hooks, own, state, output)
    return run.result(output)


def stop_at_max_turns(
    core: MachineCore, run: Run, config: RunConfig
) -> Generator[Any, Any, RunResult]:
    error = MaxTurnsExceeded(
        f"Max turns ({run.max_turns}) exceeded: the run made {run.turn} model call(s) "
        f"and agent {run.current!r} had not finished",
        hint="resume exc.run_data.to_state() with a larger max_turns, or set "
        "RunConfig(on_max_turns=...)",
        run_data=run.error_details(),
    )
    if config.on_max_turns is None:
        raise error
    value = yield from call_hook(config.on_max_turns(error.run_data))
    if value is None:
        raise error
    state = core.state(run.current)
    run.append(MessageOutputItem(run.current, output_text(value)))
    if (ev := flush(run)) is not None:
        yield ev
    return (yield from _finish(core, run, config, state, value))
