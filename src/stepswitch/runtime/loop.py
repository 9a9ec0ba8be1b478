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
from typing import TYPE_CHECKING, Any

from stepswitch._dataclass import dataclass
from stepswitch._json import loads
from stepswitch.errors import ModelBehaviorError, StepswitchError, UserError
from stepswitch.ir import RunAgent, StateIR
from stepswitch.runtime import _lazy
from stepswitch.runtime import hooks as _hooks
from stepswitch.runtime._quick import quick_maker
from stepswitch.runtime.budgets import hidden_tools, spend
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import BoundFunction, MachineCore, StateTable, ToolRow
from stepswitch.runtime.cost import charge, price_of
from stepswitch.runtime.effects import (
    CallJob,
    CallModel,
    Emit,
    Job,
    NestedJob,
    Ok,
    Outcome,
    RunJobs,
)
from stepswitch.runtime.events import AgentUpdated
from stepswitch.runtime.finish import apply_decision, stop_at_max_turns
from stepswitch.runtime.guardrails import check_input_guardrails, input_guardrails
from stepswitch.runtime.handoffs import take_handoffs
from stepswitch.runtime.history import view_of
from stepswitch.runtime.items import (
    HandoffCallItem,
    MessageOutputItem,
    ResponsesItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from stepswitch.runtime.model import (
    HOSTED_CALLS,
    ModelRequest,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputResponsesItem,
)
from stepswitch.runtime.outcomes import (
    agent_outcome,
    call_id_reused,
    call_id_twice,
    function_error,
    parse_again,
    unknown_outputs,
)
from stepswitch.runtime.result import RunResult
from stepswitch.runtime.run import Run, call_hook, flush, keep_run, tool_context
from stepswitch.runtime.state import ApprovalDecision, PendingTurn, RunState
from stepswitch.runtime.steps import (
    HandoffStep,
    InterruptionStep,
    RunAgain,
    ToolResult,
    TurnOutcome,
)
from stepswitch.runtime.tools import (
    REJECTED,
    ArgumentError,
    output_text,
    parse_typed,
    result_text,
)

if TYPE_CHECKING:  # a pydantic model: the loop only passes it on
    from stepswitch.settings import ModelSettings

__all__ = ['run_loop']

Loop = Generator[Any, Any, RunResult]

# what every turn makes, made without the class's call (see quick_maker)
_request_of = quick_maker(ModelRequest)
_call_item = quick_maker(ToolCallItem)
_handoff_item = quick_maker(HandoffCallItem)
_output_item = quick_maker(ToolCallOutputItem)
_message_item = quick_maker(MessageOutputItem)
_call_job = quick_maker(CallJob)
_tool_result = quick_maker(ToolResult)


# -- the loop ------------------------------------------------------------------------------


def run_loop(core: MachineCore, run: Run, config: RunConfig) -> Loop:
    """Drive ``run`` to a result, yielding effects. Errors carry ``run_data``.

    One generator for the whole run: each turn's effects are yielded from here or from
    the turn's settling (:func:`_settle_fresh`, or :func:`_settle_resumed` for a turn
    that paused)."""
    try:
        if run.emit:
            yield Emit(AgentUpdated(run.current))
        parallel: tuple[Any, ...] = ()
        if run.fresh and core.states[run.current].input_guardrails:
            parallel = yield from input_guardrails(core, run)
        # an interrupted turn is settled first, without a new model call
        pending, run.pending = run.pending, None
        turns = core.turns
        steps = core.steps
        hooks = config.run_hooks
        starting = True  # on_agent_start is due (the run's first turn, or a handoff's)
        ask: CallModel | None = None  # the run's model-call effect, refilled every turn
        while True:
            if pending is None:
                if run.max_turns is not None and run.turn >= run.max_turns:
                    return (yield from stop_at_max_turns(core, run, config))
                table = turns[run.current]
                state = table.state
                own = table.hooks
                if starting and (hooks is not None or own is not None):
                    yield from _hooks.agent_start(run, hooks, own, state)
                starting = False
                disabled = table.off
                if table.gated:  # is_enabled functions decide what this turn offers
                    disabled = yield from _lazy.tool_guards.gates(core, run, table)
                instructions = state.instructions
                if state.instructions_fn is not None:
                    instructions = yield from _instructions(core, run, state)
                request = _request(core, run, config, table, instructions, disabled)
                run.turn += 1
                run.calls.n += 1
                model = table.model if table.model is not None else run.model
                if model is None:
                    raise _no_model(state)
                priced = None if config.max_cost_usd is None else price_of(config, model, request)
                if ask is None:
                    ask = CallModel(model, request, parallel)
                else:
                    ask.model, ask.request, ask.alongside = model, request, parallel
                if hooks is not None or own is not None:
                    yield from _hooks.llm_start(run, hooks, own, state, instructions,
                                                request.input)
                if parallel:
                    response, outcomes = yield ask
                    check_input_guardrails(run, state, outcomes)
                    parallel = ()
                else:
                    response = yield ask
                if hooks is not None or own is not None:
                    yield from _hooks.llm_end(run, hooks, own, state, response)
                run.responses.append(response)
                usage = run.ctx.usage
                usage.add(response.usage)
                if not response.usage.requests:
                    # a model of the user's that reports no usage: this was one call
                    usage.requests += 1
                if priced is not None:
                    charge(run.calls, config, priced, response.usage)
                output, start = response.output, len(run.items)
                turn = yield from _settle_fresh(core, run, config, table, output, start,
                                                disabled)
            else:
                table = turns[pending.agent]
                state = table.state
                output, start = pending.output, pending.start
                disabled = pending.disabled
                turn = yield from _settle_resumed(
                    core, run, config, table, output, start, _read_earlier(run, start),
                    disabled)
            if run.emit and (ev := flush(run)) is not None:
                yield ev
            decision = steps[state.agent](state, turn)
            if turn.interrupted and type(decision) is not InterruptionStep:
                raise _pause_dropped(state)
            if type(decision) is not RunAgain:
                here = pending  # what a pause saves: made only for a pause
                if here is None and type(decision) is InterruptionStep:
                    here = PendingTurn(state.agent, tuple(output), start, disabled)
                done = yield from apply_decision(core, run, config, state, turn, decision, here)
                if done is not None:
                    return done
                starting = type(decision) is HandoffStep
            pending = None
    except StepswitchError as exc:
        # Every error of ours carries the run so far (UserError too, as in the SDK).
        if getattr(exc, "run_data", None) is None:
            exc.run_data = run.error_details()  # type: ignore[attr-defined]
        if run.emit and (ev := flush(run)) is not None:
            yield ev  # a stream shows every item the error carries
        raise
    except GeneratorExit:
        raise
    except BaseException as exc:
        # Whatever else ends the run (a user hook's exception, Ctrl-C, a cancelled task)
        # carries it too; a nested run's data is replaced by its caller's on the way out.
        keep_run(exc, run)
        if isinstance(exc, Exception) and run.emit and (ev := flush(run)) is not None:
            yield ev
        raise


def _pause_dropped(state: StateIR) -> StepswitchError:
    # A step function that ignores a pending approval would run on without it (or
    # end the run with a call that never got its output): fail loudly instead.
    return StepswitchError(
        f"agent {state.agent!r}: a call waits for approval, but the state's step switch "
        "has no Interruption case (its facts say it cannot pause); the machine's IR is "
        "wrong or stale: recompile the workflow, or regenerate the runner with "
        "`stepswitch compile TARGET -o FILE`"
    )


def _no_model(state: StateIR) -> UserError:
    return UserError(
        f"agent {state.agent!r} has no model of its own and the run was given none: "
        "pass model=... to run()"
    )


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
    core: MachineCore, run: Run, config: RunConfig, table: StateTable, instructions: str | None,
    disabled: frozenset[str],
) -> ModelRequest:
    state = table.state
    settings = table.settings
    if config.model_settings is not None or table.settings_vary:
        settings = _settings(run, config, state, settings)
    tools = table.tools
    if table.budgeted:
        tools = core.tool_definitions(state.agent, hidden_tools(core, run, state) | disabled)
    elif table.gated:
        tools = core.tool_definitions(state.agent, disabled)
    return _request_of(
        state.agent,
        instructions,
        view_of(run.history),
        tools,
        table.schema,
        settings,
        state.model,
    )


def _settings(
    run: Run, config: RunConfig, state: StateIR, settings: ModelSettings
) -> ModelSettings:
    """The agent's settings under the run's: the config's override them field by field,
    and ``tool_choice`` is dropped once the agent used tools (``reset_tool_choice``)."""
    if config.model_settings is not None:
        settings = settings.resolve(config.model_settings)
    if (
        config.reset_tool_choice
        and settings.tool_choice is not None
        and state.agent in run.used_tools
    ):
        settings = settings.model_copy(update={"tool_choice": None})
    return settings


# -- one turn: settle the response's calls ------------------------------------------------


Call = tuple[OutputFunctionCall, ToolRow | None]
"""A function call of the response and its table row (None: the agent has no such tool)."""

Slot = tuple[OutputFunctionCall, ToolRow, int, ToolCallOutputItem | None]
"""A function or agent tool call still to settle: the call, its row, its index in the
turn's ``RunJobs`` (-1: nothing runs) and its output when known before any job runs (a
rejection, invalid arguments). -1 with no output: it waits for a human's decision."""


@dataclass(slots=True)
class _Earlier:
    """What a paused turn already did, read back from the items on resume."""

    outputs: dict[str, ToolCallOutputItem]
    approvals: set[str]
    """Call ids that asked for approval."""


def _settle_fresh(
    core: MachineCore,
    run: Run,
    config: RunConfig,
    table: StateTable,
    output: tuple[OutputItem, ...],
    start: int,
    disabled: frozenset[str],
) -> Generator[Any, Any, TurnOutcome]:
    """Carry out a new response's calls: check it, record its items, run its calls.

    The response is read against the table and checked whole before any of it is
    recorded: nothing on the trusted side can act on an unknown tool when the config
    says raise, nor on a call id used twice in it or reused from earlier. A call of a
    name in ``disabled`` (``is_enabled`` said no this turn) is a call of an unknown tool."""
    state = table.state
    agent = state.agent
    rows = table.rows
    hooked = config.run_hooks is not None or table.hooks is not None
    calls: list[Call] = []
    made: list[RunItem] = []
    last_message: str | None = None
    had_calls = handoffs = unknown = hosted = False
    for out in output:
        if type(out) is OutputFunctionCall:
            had_calls = True
            row = rows.get(out.name)
            if disabled and out.name in disabled:
                row = None  # not offered this turn: as the SDK, an unknown tool
            if row is None and config.unknown_tool == "raise":
                raise ModelBehaviorError(f"Tool {out.name} not found in agent {agent}")
            if calls and any(c.call_id == out.call_id for c, _ in calls):
                raise call_id_twice(out, agent)
            if out.call_id in run.call_ids:
                raise call_id_reused(out, agent)
            calls.append((out, row))
            if row is None:
                unknown = True
            elif row.handoff:
                handoffs = True
                made.append(_handoff_item(agent, out.name, out.call_id, out.arguments))
                continue
            made.append(_call_item(agent, out.name, out.call_id, out.arguments))
        elif type(out) is OutputMessage:
            last_message = out.content
            made.append(_message_item(agent, out.content, out.refusal))
        elif type(out) is OutputResponsesItem:  # to be sent back next turn
            made.append(ResponsesItem(agent, out.item))
            if out.item.get("type") in HOSTED_CALLS:
                hosted = True
    if hosted and last_message is None:
        had_calls = True  # a hosted tool ran and nothing was said: run again, as the SDK
    run.items.extend(made)  # calls and messages: every one model-visible
    run.history.extend(made)
    for call, _ in calls:
        run.call_ids.add(call.call_id)
    if run.emit and (ev := flush(run)) is not None:
        yield ev
    # a call's id is new (checked above), so no paused nested run is filed under it
    slots: list[Slot] = []
    jobs: list[Job] = []
    for call, row in calls:
        if row is None or row.handoff:
            continue
        gated = row.approval != "never" and (
            yield from _needs_approval(core, run, row.action, call))
        _plan(core, run, config, agent, call, row, gated, slots, jobs)
        if row.in_guards or hooked:
            yield from _before(core, run, config, table, call, row, slots, jobs)
    interrupted, results = yield from _carry_out(core, run, config, table, slots, jobs, True)
    if unknown:
        unknown_outputs(run, agent, calls)
    handoff: str | None = None
    if handoffs and not interrupted:
        handoff = yield from take_handoffs(core, run, config, state, calls, start, table.hooks)
    return _outcome(run, interrupted, handoff, tuple(results.values()), had_calls, last_message)


def _settle_resumed(
    core: MachineCore,
    run: Run,
    config: RunConfig,
    table: StateTable,
    output: tuple[OutputItem, ...],
    start: int,
    earlier: _Earlier,
    disabled: frozenset[str],
) -> Generator[Any, Any, TurnOutcome]:
    """Finish a paused turn. Its items are already recorded (from ``start`` on): calls
    with an output there stay done (``earlier``), calls that asked for approval run (or
    get their rejection) by the state's decisions, and paused nested runs resume."""
    state = table.state
    agent = state.agent
    rows = table.rows
    hooked = config.run_hooks is not None or table.hooks is not None
    calls: list[Call] = []
    last_message: str | None = None
    had_calls = handoffs = False
    for out in output:
        if type(out) is OutputFunctionCall:
            had_calls = True
            row = rows.get(out.name)
            if disabled and out.name in disabled:
                row = None  # it was not offered that turn: it stays an unknown tool
            calls.append((out, row))
            if row is not None and row.handoff:
                handoffs = True
        elif type(out) is OutputMessage:
            last_message = out.content
    slots: list[Slot] = []
    jobs: list[Job] = []
    for call, row in calls:
        if row is None or row.handoff or call.call_id in earlier.outputs:
            continue
        if call.call_id in run.nested:
            child = run.nested.pop(call.call_id)  # its decisions are in its own state
            slots.append((call, row, len(jobs), None))
            jobs.append(NestedJob(
                _nested_resume(core, run, config, child), call.name, call.call_id,
                child.current_agent, call.arguments,
            ))
            continue
        gated = call.call_id in earlier.approvals
        _plan(core, run, config, agent, call, row, gated, slots, jobs)
        if row.in_guards or hooked:
            yield from _before(core, run, config, table, call, row, slots, jobs)
    interrupted, results = yield from _carry_out(core, run, config, table, slots, jobs, False)
    handoff: str | None = None
    if handoffs and not interrupted:
        handoff = yield from take_handoffs(core, run, config, state, calls, start, table.hooks)
    # calls done before the pause count too, in call order
    results = _with_earlier(calls, results, earlier)
    return _outcome(run, interrupted, handoff, tuple(results.values()), had_calls, last_message)


def _outcome(
    run: Run, interrupted: bool, handoff: str | None, tool_results: tuple[ToolResult, ...],
    had_calls: bool, last_message: str | None,
) -> TurnOutcome:
    """The turn's outcome, in the run's one ``TurnOutcome`` (refilled every turn)."""
    outcome = run.outcome
    if outcome is None:
        outcome = run.outcome = TurnOutcome(
            interrupted, handoff, tool_results, had_calls, last_message)
        return outcome
    outcome.interrupted = interrupted
    outcome.handoff = handoff
    outcome.tool_results = tool_results
    outcome.had_calls = had_calls
    outcome.last_message = last_message
    return outcome


def _plan(
    core: MachineCore, run: Run, config: RunConfig, agent: str, call: OutputFunctionCall,
    row: ToolRow, gated: bool, slots: list[Slot], jobs: list[Job],
) -> None:
    """Plan one function or agent tool call: its slot, and its job when it runs.
    ``gated``: it waits for a human's decision (taken already, or not)."""
    if gated:
        decision = _decision(run, agent, call)
        if decision is None:
            slots.append((call, row, -1, None))  # it waits for a human's decision
            return
        if not decision.approved:
            slots.append((call, row, -1, ToolCallOutputItem(
                agent, call.call_id, decision.message or REJECTED, call.name
            )))
            return
    if row.function:
        if row.fn is None:
            core.bind(row)
        raw = call.arguments
        try:  # the common case in one pass; a failure is re-diagnosed for the model
            params = row.validator.validate_json(raw if raw else "{}")
        except ValueError:
            params = parse_again(core, row, call, agent)
            if type(params) is ToolCallOutputItem:
                slots.append((call, row, -1, params))
                return
        if row.max_uses is not None and (spent := spend(run, row, agent, call.call_id)):
            slots.append((call, row, -1, spent))  # its run budget is spent: it never runs
            return
        slots.append((call, row, len(jobs), None))
        jobs.append(_call_job(
            row.fn,
            (tool_context(run, call.call_id),) if row.takes_context else (),
            BoundFunction.keywords(params),
            row.is_async,
            call.name,
            call.call_id,
            row.timeout,
        ))
        return
    job = _agent_job(core, run, config, row, call, agent)
    if isinstance(job, ToolCallOutputItem):
        slots.append((call, row, -1, job))
    else:
        slots.append((call, row, len(jobs), None))
        jobs.append(job)


def _before(
    core: MachineCore, run: Run, config: RunConfig, table: StateTable,
    call: OutputFunctionCall, row: ToolRow, slots: list[Slot], jobs: list[Job],
) -> Generator[Any, Any, None]:
    """A call just planned to run (the last slot and job) passes its tool input
    guardrails and ``on_tool_start``; a rejection becomes its output, and it does not run."""
    if slots[-1][0] is not call or slots[-1][2] < 0:
        return  # it does not run (a rejection, invalid arguments, a wait for a human)
    blocked = yield from _lazy.tool_guards.before_call(core, run, table.state, row, call,
                                                    config.run_hooks, table.hooks)
    if blocked is not None:
        jobs.pop()
        slots[-1] = (call, row, -1, blocked)


def _carry_out(
    core: MachineCore, run: Run, config: RunConfig, table: StateTable, slots: list[Slot],
    jobs: list[Job], fresh: bool,
) -> Generator[Any, Any, tuple[bool, dict[str, ToolResult]]]:
    """Run the planned jobs, then record each slot's output in call order; whether some
    call waits for a decision, and the results of the calls that ran, by call id."""
    agent = table.state.agent
    hooks, own = config.run_hooks, table.hooks
    hooked = hooks is not None or own is not None
    outcomes: tuple[Outcome, ...] = ()
    if jobs:
        effect = run.jobs  # the run's one RunJobs, refilled (as run_loop's CallModel)
        if effect is None:
            effect = run.jobs = RunJobs(tuple(jobs), config.max_tool_concurrency)
        else:
            effect.jobs, effect.limit = tuple(jobs), config.max_tool_concurrency
        outcomes = yield effect
    if slots:
        run.used_tools.add(agent)
    interrupted = False
    results: dict[str, ToolResult] = {}
    items, history = run.items, run.history
    for call, row, index, done in slots:
        if index >= 0:
            outcome = outcomes[index]
            if not row.function:
                done = yield from agent_outcome(core, run, agent, call, row, outcome)
                if done is None:  # the nested run paused
                    interrupted = True
                    continue
            elif type(outcome) is Ok:
                value = outcome.value
                if type(value) is str:  # most tools return text: it is the output as is
                    text, failed = value, False
                else:
                    text, failed = result_text(call.name, value)
                done = _output_item(
                    agent, call.call_id, text, call.name, failed, None if failed else value
                )
            else:
                done = yield from function_error(core, run, agent, call, row, outcome)
            if row.out_guards or hooked:
                done = yield from _lazy.tool_guards.after_call(core, run, table.state, row, call,
                                                            done, hooks, own)
        elif done is None:
            interrupted = True
            if fresh:  # a resumed turn recorded its approval items when it paused
                items.append(ToolApprovalItem(agent, call.name, call.call_id, call.arguments))
            continue
        items.append(done)
        history.append(done)
        # an error or a rejection is its text, as the SDK's tool result
        value = done.value if index >= 0 and not done.is_error else done.output
        results[call.call_id] = _tool_result(call.name, value, done.output)
    return interrupted, results


def _read_earlier(run: Run, start: int) -> _Earlier:
    earlier = _Earlier({}, set())
    for item in run.items[start:]:
        if type(item) is ToolCallOutputItem:
            earlier.outputs[item.call_id] = item
        elif type(item) is ToolApprovalItem and not item.run_path:
            earlier.approvals.add(item.call_id)
    return earlier


def _decision(run: Run, agent: str, call: OutputFunctionCall) -> ApprovalDecision | None:
    """A gated call's decision, its own or the standing 'always' one; None: it waits."""
    decision = run.decisions.get(call.call_id)
    if decision is None and (agent, call.name) in run.always:
        decision = ApprovalDecision(run.always[(agent, call.name)])
    return decision


def _with_earlier(
    calls: list[Call], results: dict[str, ToolResult], earlier: _Earlier
) -> dict[str, ToolResult]:
    """A resumed turn's results: those of this settling and those done before the
    pause, in call order."""
    ordered: dict[str, ToolResult] = {}
    for call, row in calls:
        if row is None or row.handoff:
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


def _agent_job(
    core: MachineCore, run: Run, config: RunConfig, row: ToolRow, call: OutputFunctionCall,
    agent: str,
) -> NestedJob | ToolCallOutputItem:
    """An agent tool call's nested run, or its error output (depth limit, arguments)."""
    action = row.action
    assert type(action) is RunAgent
    limit = core.ir.max_depth
    if action.max_depth is not None:
        limit = min(limit, action.max_depth)
    if run.depth + 1 > limit:
        return ToolCallOutputItem(
            agent,
            call.call_id,
            f"Agent tool {call.name} cannot run: nesting depth limit {limit} reached.",
            call.name,
            True,
        )
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
        return ToolCallOutputItem(agent, call.call_id, message, call.name, True)
    max_turns = action.max_turns if action.max_turns is not None else core.ir.max_turns
    child = Run.start(
        run.workflow, action.target, nested_input, max_turns=max_turns, ctx=run.ctx,
        depth=run.depth + 1, calls=run.calls,
    )
    child.always = dict(run.always)
    child.model = run.model
    return NestedJob(
        run_loop(core, child, config), call.name, call.call_id, action.target, call.arguments
    )


def _nested_resume(core: MachineCore, run: Run, config: RunConfig, child: RunState) -> Loop:
    """Resume a paused nested run (its decisions are in its own state) with the
    caller's standing 'always' decisions."""
    child.always.update(run.always)
    child_run = Run.resume(core, child, max_turns=child.max_turns, ctx=run.ctx,
                           calls=run.calls)
    child_run.model = run.model
    return run_loop(core, child_run, config)
