"""The run loop, written once: a sans-IO generator over the machine's tables.

:func:`run_loop` yields :mod:`effects <stepswitch.runtime.effects>` (call the model,
run these tools, run this nested agent, await this hook, emit these items) and
receives their outcomes. It returns a :class:`RunResult`; a run that stops at a
limit or on the model's misbehaviour raises with ``run_data`` holding the run so far.

One turn: build the request from the current state → call the model → append the
response's items in model order → run its function and agent tools (approvals
gate, validation first, concurrently, outputs in call order) → unknown-tool
outputs → handoffs (first with budget wins) → the state's step function maps the
outcome to Final / Handoff / Interruption / RunAgain.

Per turn the loop does work proportional to that turn's response, never to the
history: the model gets an O(1) :class:`HistoryView`, counters are kept, not
recounted.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch._json import loads
from stepswitch.errors import (
    ModelBehaviorError,
    StepswitchError,
    ToolTimeoutError,
    UserError,
)
from stepswitch.ir import HandoffTo, RunAgent, RunFunction, StateIR, ToolEntry
from stepswitch.runtime.approvals import lift
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import (
    CallJob,
    CallModel,
    Emit,
    Err,
    Job,
    NestedJob,
    Ok,
    Outcome,
    RunJobs,
)
from stepswitch.runtime.events import AgentUpdated
from stepswitch.runtime.finish import apply_decision, stop_at_max_turns
from stepswitch.runtime.guardrails import check_input_guardrails, input_guardrails
from stepswitch.runtime.handoffs import spent_handoffs, take_handoffs
from stepswitch.runtime.history import HistoryView
from stepswitch.runtime.items import (
    HandoffCallItem,
    MessageOutputItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from stepswitch.runtime.model import (
    Model,
    ModelRequest,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
)
from stepswitch.runtime.result import RunResult
from stepswitch.runtime.run import Run, call_hook, flush, keep_run, tool_context
from stepswitch.runtime.state import ApprovalDecision, PendingTurn, RunState
from stepswitch.runtime.steps import (
    InterruptionStep,
    RunAgain,
    ToolResult,
    TurnOutcome,
)
from stepswitch.runtime.tools import (
    REJECTED,
    ArgumentError,
    error_output,
    output_text,
    parse_arguments,
    parse_typed,
    result_text,
)

__all__ = ['run_loop']

Loop = Generator[Any, Any, RunResult]


# -- the loop ------------------------------------------------------------------------------


def run_loop(core: MachineCore, run: Run, config: RunConfig) -> Loop:
    """Drive ``run`` to a result, yielding effects. Errors carry ``run_data``."""
    try:
        return (yield from _loop(core, run, config))
    except StepswitchError as exc:
        # Every error of ours carries the run so far (UserError too, as in the SDK).
        if getattr(exc, "run_data", None) is None:
            exc.run_data = run.error_details()  # type: ignore[attr-defined]
        if (ev := flush(run)) is not None:
            yield ev  # a stream shows every item the error carries
        raise
    except GeneratorExit:
        raise
    except BaseException as exc:
        # Whatever else ends the run (a user hook's exception, Ctrl-C, a cancelled task)
        # carries it too; a nested run's data is replaced by its caller's on the way out.
        keep_run(exc, run)
        if isinstance(exc, Exception) and (ev := flush(run)) is not None:
            yield ev
        raise


def _loop(core: MachineCore, run: Run, config: RunConfig) -> Loop:
    if run.emit:
        yield Emit(AgentUpdated(run.current))
    parallel: tuple[Any, ...] = ()
    if run.fresh and core.states[run.current].input_guardrails:
        parallel = yield from input_guardrails(core, run)
    if run.pending is not None:
        pending, run.pending = run.pending, None
        state = core.state(pending.agent)
        turn = yield from _settle(
            core, run, config, state, pending.output, pending.start, resume=True
        )
        if (ev := flush(run)) is not None:
            yield ev
        decision = core.steps[state.agent](state, turn)
        if turn.interrupted and type(decision) is not InterruptionStep:
            raise _pause_dropped(state)
        if type(decision) is not RunAgain:
            done = yield from apply_decision(core, run, config, state, turn, decision, pending)
            if done is not None:
                return done
    while True:
        if run.max_turns is not None and run.turn >= run.max_turns:
            return (yield from stop_at_max_turns(core, run, config))
        state = core.state(run.current)
        instructions = state.instructions
        if state.instructions_fn is not None:
            instructions = yield from _instructions(core, run, state)
        request = _request(core, run, config, state, instructions)
        run.turn += 1
        agent_model = _model_for(core, state, run.model)
        if parallel:
            response, outcomes = yield CallModel(agent_model, request, parallel)
            check_input_guardrails(run, state, outcomes)
            parallel = ()
        else:
            response = yield CallModel(agent_model, request)
        run.responses.append(response)
        run.ctx.usage.add(response.usage)
        output, start = response.output, len(run.items)
        turn = yield from _settle(core, run, config, state, output, start, resume=False)
        if (ev := flush(run)) is not None:
            yield ev
        decision = core.steps[state.agent](state, turn)
        if turn.interrupted and type(decision) is not InterruptionStep:
            raise _pause_dropped(state)
        if type(decision) is RunAgain:
            continue
        here = PendingTurn(state.agent, tuple(output), start)
        done = yield from apply_decision(core, run, config, state, turn, decision, here)
        if done is not None:
            return done


def _pause_dropped(state: StateIR) -> StepswitchError:
    # A step function that ignores a pending approval would run on without it (or
    # end the run with a call that never got its output): fail loudly instead.
    return StepswitchError(
        f"agent {state.agent!r}: a call waits for approval, but the state's step switch "
        "has no Interruption case (its facts say it cannot pause); the machine's IR is "
        "wrong or stale: recompile the workflow, or regenerate the runner with "
        "`stepswitch compile TARGET -o FILE`"
    )


def _model_for(core: MachineCore, state: StateIR, model: Model | None) -> Model:
    if state.model_ref is not None:
        own: Model = core.obj(state.model_ref)
        return own
    if model is None:
        raise UserError(
            f"agent {state.agent!r} has no model of its own and the run was given none: "
            "pass model=... to run()"
        )
    return model


def _instructions(core: MachineCore, run: Run, state: StateIR) -> Generator[Any, Any, str | None]:
    fn = core.obj(state.instructions_fn or "")
    instructions = yield from call_hook(fn(run.ctx, state))
    if instructions is not None and not isinstance(instructions, str):
        raise UserError(
            f"agent {state.agent!r}: the instructions function returned "
            f"{type(instructions).__name__}, not a string"
        )
    return instructions


def _request(
    core: MachineCore, run: Run, config: RunConfig, state: StateIR, instructions: str | None
) -> ModelRequest:
    settings = core.settings[state.agent]
    if config.model_settings is not None:
        settings = settings.resolve(config.model_settings)
    if (
        config.reset_tool_choice
        and settings.tool_choice is not None
        and state.agent in run.used_tools
    ):
        settings = settings.model_copy(update={"tool_choice": None})
    hidden = spent_handoffs(core, run, state)
    return ModelRequest(
        state.agent,
        instructions,
        HistoryView(run.history),
        core.tool_definitions(state.agent, hidden),
        core.schemas[state.agent],
        settings,
        state.model,
    )


# -- one turn: settle the response's calls ------------------------------------------------


@dataclass(slots=True)
class _Slot:
    """One function or agent tool call of the turn and what becomes of it."""

    call: OutputFunctionCall
    entry: ToolEntry
    job: int = -1
    """Its index in the turn's ``RunJobs``, or -1 when nothing runs."""
    output: ToolCallOutputItem | None = None
    approval: bool = False
    """It waits for a human's decision."""


Call = tuple[OutputFunctionCall, ToolEntry | None]
"""A function call of the response and its table row (None: the agent has no such tool)."""


@dataclass(slots=True)
class _Response:
    """A model response read against the agent's table."""

    calls: list[Call]
    items: list[RunItem]
    """The items it makes, in model order."""
    last_message: str | None = None
    had_calls: bool = False
    handoffs: bool = False
    unknown: bool = False


@dataclass(slots=True)
class _Earlier:
    """What a paused turn already did, read back from the items on resume."""

    outputs: dict[str, ToolCallOutputItem]
    approvals: set[str]
    """Call ids that asked for approval."""


_NOTHING_EARLIER = _Earlier({}, set())
"""A fresh turn's (read only)."""


def _settle(
    core: MachineCore,
    run: Run,
    config: RunConfig,
    state: StateIR,
    output: tuple[OutputItem, ...],
    start: int,
    *,
    resume: bool,
) -> Generator[Any, Any, TurnOutcome]:
    """Carry out one response's calls; on ``resume``, finish a paused turn instead.

    A fresh turn checks the response, records its items and runs its calls. A resumed
    turn's items are already recorded (from ``start`` on): calls with an output there
    stay done, calls that asked for approval run (or get their rejection) by the
    state's decisions, and paused nested runs resume.
    """
    response = _read(core, config, run, state, output, check=not resume)
    if resume:
        earlier = _read_earlier(run, start)
    else:
        earlier = _NOTHING_EARLIER
        if (ev := _record(run, response)) is not None:
            yield ev
    slots, jobs = yield from _plan(core, run, config, state, response.calls, earlier, resume)
    outcomes: tuple[Outcome, ...] = ()
    if jobs:
        outcomes = yield RunJobs(tuple(jobs), config.max_tool_concurrency)
    if slots:
        run.used_tools.add(state.agent)
    interrupted, results = yield from _collect(core, run, state, slots, outcomes, resume)
    if response.unknown and not resume:
        _unknown_outputs(run, state, response.calls)
    handoff: str | None = None
    if response.handoffs and not interrupted:
        handoff = yield from take_handoffs(core, run, config, state, response.calls, start)
    if resume:  # calls done before the pause count too, in call order
        results = _with_earlier(response.calls, results, earlier)
    return TurnOutcome(
        interrupted, handoff, tuple(results.values()), response.had_calls, response.last_message
    )


def _read(
    core: MachineCore,
    config: RunConfig,
    run: Run,
    state: StateIR,
    output: tuple[OutputItem, ...],
    *,
    check: bool,
) -> _Response:
    """The response's calls and items; with ``check``, refuse a response nothing on the
    trusted side can act on (an unknown tool when the config says raise, a call id used
    twice in it or reused from an earlier call)."""
    table = core.tables[state.agent]
    agent = state.agent
    r = _Response([], [])
    for out in output:
        if type(out) is OutputFunctionCall:
            r.had_calls = True
            entry = table.get(out.name)
            if entry is None:
                r.unknown = True
            if check:
                _check_call(run, config, agent, out, entry, r.calls)
            r.calls.append((out, entry))
            if entry is not None and type(entry.action) is HandoffTo:
                r.handoffs = True
                r.items.append(HandoffCallItem(agent, out.name, out.call_id, out.arguments))
            else:
                r.items.append(ToolCallItem(agent, out.name, out.call_id, out.arguments))
        elif type(out) is OutputMessage:
            r.last_message = out.content
            r.items.append(MessageOutputItem(agent, out.content, out.refusal))
    return r


def _check_call(
    run: Run,
    config: RunConfig,
    agent: str,
    out: OutputFunctionCall,
    entry: ToolEntry | None,
    calls: list[Call],
) -> None:
    if entry is None and config.unknown_tool == "raise":
        raise ModelBehaviorError(f"Tool {out.name} not found in agent {agent}")
    if calls and any(c.call_id == out.call_id for c, _ in calls):
        raise ModelBehaviorError(
            f"the model used call id {out.call_id!r} twice in one response "
            f"(tool {out.name}, agent {agent})"
        )
    if out.call_id in run.call_ids:
        # an earlier call's id: its decision or output must not carry over
        raise ModelBehaviorError(
            f"the model reused call id {out.call_id!r} of an earlier call "
            f"(tool {out.name}, agent {agent}); every call needs a new id"
        )


def _record(run: Run, response: _Response) -> Emit | None:
    """Append a fresh response's items: only once all of it is known to be actionable.
    The stream event of the new items, if the run is streamed."""
    for item in response.items:
        run.append(item)
    for call, _ in response.calls:
        run.call_ids.add(call.call_id)
    return flush(run)


def _read_earlier(run: Run, start: int) -> _Earlier:
    earlier = _Earlier({}, set())
    for item in run.items[start:]:
        if type(item) is ToolCallOutputItem:
            earlier.outputs[item.call_id] = item
        elif type(item) is ToolApprovalItem and not item.run_path:
            earlier.approvals.add(item.call_id)
    return earlier


def _plan(
    core: MachineCore,
    run: Run,
    config: RunConfig,
    state: StateIR,
    calls: list[Call],
    earlier: _Earlier,
    resume: bool,
) -> Generator[Any, Any, tuple[list[_Slot], list[Job]]]:
    """A slot per function or agent tool call still to settle, and the jobs to run:
    a paused nested run resumes; a gated call runs once approved, gets its rejection,
    or waits; any other call is validated and prepared."""
    slots: list[_Slot] = []
    jobs: list[Job] = []
    for call, entry in calls:
        if entry is None or call.call_id in earlier.outputs:
            continue
        action = entry.action
        if isinstance(action, HandoffTo):
            continue
        slot = _Slot(call, entry)
        slots.append(slot)
        if call.call_id in run.nested:
            child = run.nested.pop(call.call_id)  # its decisions are in its own state
            slot.job = len(jobs)
            jobs.append(NestedJob(
                _nested_resume(core, run, config, child), call.name, call.call_id,
                child.current_agent,
            ))
            continue
        if resume:
            gated = call.call_id in earlier.approvals
        elif action.approval == "never":
            gated = False
        else:
            gated = yield from _needs_approval(core, run, action, call)
        if gated and not _decide(run, state, slot):
            continue
        job = _prepare(core, run, config, state, slot)
        if job is not None:
            slot.job = len(jobs)
            jobs.append(job)
    return slots, jobs


def _decide(run: Run, state: StateIR, slot: _Slot) -> bool:
    """A gated call: True when it was approved and may run. Otherwise it waits
    (``slot.approval``) or holds its rejection as its output."""
    call = slot.call
    decision = run.decisions.get(call.call_id)
    if decision is None and (state.agent, call.name) in run.always:
        decision = ApprovalDecision(run.always[(state.agent, call.name)])
    if decision is None:
        slot.approval = True
        return False
    if not decision.approved:
        slot.output = ToolCallOutputItem(
            state.agent, call.call_id, decision.message or REJECTED, call.name
        )
        return False
    return True


def _collect(
    core: MachineCore,
    run: Run,
    state: StateIR,
    slots: list[_Slot],
    outcomes: tuple[Outcome, ...],
    resume: bool,
) -> Generator[Any, Any, tuple[bool, dict[str, ToolResult]]]:
    """Append each slot's output in call order; whether the turn is interrupted and
    the tool results by call id."""
    agent = state.agent
    interrupted = False
    results: dict[str, ToolResult] = {}
    for slot in slots:
        call = slot.call
        if slot.approval:
            interrupted = True
            if not resume:
                run.append(ToolApprovalItem(agent, call.name, call.call_id, call.arguments))
            continue
        if slot.job >= 0:
            outcome = outcomes[slot.job]
            if type(slot.entry.action) is RunAgent:
                paused = yield from _agent_outcome(core, run, state, slot, outcome)
                if paused:
                    interrupted = True
                    continue
            elif type(outcome) is Ok:
                text, failed = result_text(call.name, outcome.value)
                slot.output = ToolCallOutputItem(
                    agent, call.call_id, text, call.name, failed,
                    None if failed else outcome.value,
                )
            else:
                yield from _function_outcome(core, run, slot, outcome)
        done = slot.output
        assert done is not None
        run.append(done)
        # an error or a rejection is its text, as the SDK's tool result
        value = done.value if slot.job >= 0 and not done.is_error else done.output
        results[call.call_id] = ToolResult(call.name, value, done.output)
    return interrupted, results


def _unknown_outputs(run: Run, state: StateIR, calls: list[Call]) -> None:
    for call, entry in calls:
        if entry is None:
            run.append(
                ToolCallOutputItem(
                    state.agent, call.call_id, f"Tool '{call.name}' not found.", call.name, True
                )
            )


def _with_earlier(
    calls: list[Call], results: dict[str, ToolResult], earlier: _Earlier
) -> dict[str, ToolResult]:
    """A resumed turn's results: those of this settling and those done before the
    pause, in call order."""
    ordered: dict[str, ToolResult] = {}
    for call, entry in calls:
        if entry is None or type(entry.action) is HandoffTo:
            continue
        if call.call_id in results:
            ordered[call.call_id] = results[call.call_id]
        elif call.call_id in earlier.outputs:
            prior = earlier.outputs[call.call_id]
            value = prior.value if prior.value is not None else prior.output
            ordered[call.call_id] = ToolResult(call.name, value, prior.output)
    return ordered


def _needs_approval(
    core: MachineCore, run: Run, action: Any, call: OutputFunctionCall
) -> Generator[Any, Any, bool]:
    mode = action.approval
    if mode == "never":
        return False
    if mode == "always":
        return True
    tool = core.obj(action.ref)
    try:
        params = loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return False  # invalid arguments never run; the validation error is the output
    if not isinstance(params, dict):
        return False
    verdict = yield from call_hook(tool.needs_approval(run.ctx, params, call.call_id))
    return bool(verdict)


def _prepare(
    core: MachineCore, run: Run, config: RunConfig, state: StateIR, slot: _Slot
) -> Job | None:
    action = slot.entry.action
    call = slot.call
    if type(action) is RunFunction:
        bound = core.function(action.ref)
        raw = call.arguments
        try:  # the common case in one pass; a failure is re-diagnosed for the model
            params = bound.validator.validate_json(raw if raw else "{}")
        except ValueError:
            try:
                params = parse_arguments(bound.tool, raw)
            except ArgumentError as exc:
                if action.failure == "raise":
                    raise ModelBehaviorError(str(exc)) from None
                slot.output = ToolCallOutputItem(
                    state.agent, call.call_id, str(exc), call.name, True
                )
                return None
        args = (tool_context(run, call.call_id),) if action.takes_context else ()
        return CallJob(bound.fn, args, bound.keywords(params), action.is_async, call.name,
                       call.call_id, action.timeout)
    assert type(action) is RunAgent
    limit = core.ir.max_depth
    if action.max_depth is not None:
        limit = min(limit, action.max_depth)
    if run.depth + 1 > limit:
        slot.output = ToolCallOutputItem(
            state.agent,
            call.call_id,
            f"Agent tool {call.name} cannot run: nesting depth limit {limit} reached.",
            call.name,
            True,
        )
        return None
    try:
        if action.parameters_type is None:
            data = loads(call.arguments) if call.arguments.strip() else {}
            if not isinstance(data, dict) or not isinstance(data.get("input"), str):
                raise ArgumentError(
                    f"Invalid arguments for tool {call.name}: expected an object "
                    '{"input": "<text>"}. Fix the arguments and call the tool again.'
                )
            nested_input: str = data["input"]
        else:
            value = parse_typed(
                f"tool {call.name}", core.obj(action.parameters_type), call.arguments
            )
            nested_input = output_text(value)
    except (ArgumentError, json.JSONDecodeError) as exc:
        message = str(exc)
        if isinstance(exc, json.JSONDecodeError):
            message = f"Invalid JSON input for tool {call.name}: {exc.msg}."
        slot.output = ToolCallOutputItem(state.agent, call.call_id, message, call.name, True)
        return None
    max_turns = action.max_turns if action.max_turns is not None else core.ir.max_turns
    child = Run.start(
        run.workflow, action.target, nested_input, max_turns=max_turns, ctx=run.ctx,
        depth=run.depth + 1,
    )
    child.always = dict(run.always)
    child.model = run.model
    return NestedJob(run_loop(core, child, config), call.name, call.call_id, action.target)


def _nested_resume(core: MachineCore, run: Run, config: RunConfig, child: RunState) -> Loop:
    """Resume a paused nested run (its decisions are in its own state) with the
    caller's standing 'always' decisions."""
    child.always.update(run.always)
    child_run = Run.resume(core, child, max_turns=child.max_turns, ctx=run.ctx)
    child_run.model = run.model
    return run_loop(core, child_run, config)


def _function_outcome(
    core: MachineCore, run: Run, slot: _Slot, outcome: Outcome
) -> Generator[Any, Any, None]:
    call = slot.call
    action = slot.entry.action
    assert type(action) is RunFunction
    agent = run.current  # a turn never changes the agent before its tools settle
    if type(outcome) is Ok:
        text, failed = result_text(call.name, outcome.value)
        slot.output = ToolCallOutputItem(
            agent, call.call_id, text, call.name, failed, None if failed else outcome.value
        )
        return
    assert type(outcome) is Err
    err = outcome.error
    if action.failure == "raise":
        if isinstance(err, ToolTimeoutError):
            raise err  # its own clear error; the run so far goes with it
        raise UserError(f"Error running tool {call.name}: {err}") from err
    if action.failure == "custom":
        handler = core.obj(action.ref).failure_error_function
        text = yield from call_hook(handler(run.ctx, err))
        message = str(text)
    else:
        message = error_output(err)
    slot.output = ToolCallOutputItem(agent, call.call_id, message, call.name, True)


def _agent_outcome(
    core: MachineCore, run: Run, state: StateIR, slot: _Slot, outcome: Outcome
) -> Generator[Any, Any, bool]:
    """The caller's tool output for a nested run; True when the nested run paused."""
    call = slot.call
    action = slot.entry.action
    assert type(action) is RunAgent
    if type(outcome) is Err:
        if isinstance(outcome.error, AssertionError):
            raise outcome.error  # a broken test (e.g. a script run dry) is never model output
        slot.output = ToolCallOutputItem(
            state.agent, call.call_id, error_output(outcome.error), call.name, True
        )
        return False
    assert type(outcome) is Ok
    result: RunResult = outcome.value
    if result.interruptions:
        run.nested[call.call_id] = result.to_state()
        known = {(i.run_path, i.call_id) for i in run.items if type(i) is ToolApprovalItem}
        for item in result.interruptions:
            lifted = lift(item, call.call_id)
            if (lifted.run_path, lifted.call_id) not in known:
                run.append(lifted)
        return True
    if action.output_extractor is not None:
        value = yield from call_hook(core.obj(action.output_extractor)(result))
        text, failed = result_text(call.name, value)
        if failed:
            slot.output = ToolCallOutputItem(state.agent, call.call_id, text, call.name, True)
            return False
    else:
        value, text = _nested_output(result)
    slot.output = ToolCallOutputItem(state.agent, call.call_id, text, call.name, False, value)
    return False


def _nested_output(result: RunResult) -> tuple[Any, str]:
    final = result.final_output
    if final is not None and final != "":
        return final, output_text(final)
    if result.output_guardrail_results:
        # the guardrails passed the (empty) final output, not the run's earlier items
        return final, "" if final is None else output_text(final)
    for item in reversed(result.new_items):
        if type(item) is MessageOutputItem and item.content:
            return item.content, item.content
        if type(item) is ToolCallOutputItem and item.output:
            return item.output, item.output
    return "", ""
