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

import inspect
import json
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from stepswitch.compiler.ir import HandOff, RunAgent, RunFunction, StateIR, ToolEntry
from stepswitch.context import RunContext
from stepswitch.errors import (
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    ModelBehaviorError,
    OutputGuardrailTripwireTriggered,
    StateError,
    StepswitchError,
    UserError,
)
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import (
    Await,
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
from stepswitch.runtime.history import HistoryView
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import (
    InputItem,
    Model,
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
)
from stepswitch.runtime.result import GuardrailResult, RunErrorDetails, RunResult
from stepswitch.runtime.state import Decision, PendingTurn, RunState
from stepswitch.runtime.steps import (
    AskToolUse,
    Final,
    FinalMessage,
    Handoff,
    Interruption,
    RunAgain,
    StepDecision,
    ToolResult,
    TurnOutcome,
)
from stepswitch.runtime.tools import (
    MULTIPLE_HANDOFFS,
    REJECTED,
    ArgumentError,
    error_output,
    output_text,
    parse_arguments,
    parse_typed,
    parse_typed_output,
)

__all__ = ["HandoffInputData", "Run", "ToolsToFinalOutputResult", "run_loop"]

Loop = Generator[Any, Any, RunResult]


@dataclass(frozen=True, slots=True)
class HandoffInputData:
    """What a handoff input filter gets and returns (the SDK's shape)."""

    input_history: tuple[InputItem, ...]
    pre_handoff_items: tuple[RunItem, ...]
    new_items: tuple[RunItem, ...]
    run_context: RunContext[Any] | None = None


@dataclass(frozen=True, slots=True)
class ToolsToFinalOutputResult:
    """What a ``tool_use_behavior`` function returns: stop with ``final_output``, or not."""

    is_final_output: bool
    final_output: Any = None


def _visible(item: RunItem) -> bool:
    return type(item) is not ToolApprovalItem


@dataclass(slots=True)
class Run:
    """The mutable state of one run in progress. Only the loop touches it."""

    workflow: str
    input: tuple[InputItem, ...]
    raw_input: Any
    current: str
    max_turns: int | None
    ctx: RunContext[Any]
    depth: int = 0
    fresh: bool = True
    items: list[RunItem] = field(default_factory=list)
    history: list[InputItem] = field(default_factory=list)
    history_filtered: bool = False
    history_from: int = 0
    turn: int = 0
    responses: list[ModelResponse] = field(default_factory=list)
    uses: dict[tuple[str, str], int] = field(default_factory=dict)
    used_tools: set[str] = field(default_factory=set)
    pending: PendingTurn | None = None
    decisions: dict[str, Decision] = field(default_factory=dict)
    always: dict[str, bool] = field(default_factory=dict)
    nested: dict[str, RunState] = field(default_factory=dict)
    input_guardrail_results: list[GuardrailResult] = field(default_factory=list)
    output_guardrail_results: list[GuardrailResult] = field(default_factory=list)
    emitted: int = 0
    model: Any = None
    """The run's model (never saved in a state)."""
    emit: bool = False
    """Yield ``Emit`` effects (set by the streaming driver; the items are the same)."""

    @classmethod
    def start(
        cls,
        workflow: str,
        entry: str,
        input: str | list[Any] | tuple[Any, ...],
        *,
        max_turns: int | None,
        ctx: RunContext[Any],
        depth: int = 0,
    ) -> Run:
        items = _input_items(input)
        return cls(
            workflow=workflow,
            input=items,
            raw_input=input,
            current=entry,
            max_turns=max_turns,
            ctx=ctx,
            depth=depth,
            history=list(items),
        )

    @classmethod
    def resume(
        cls, core: MachineCore, state: RunState, *, max_turns: int | None, ctx: RunContext[Any]
    ) -> Run:
        _check_state(core, state)
        run = cls(
            workflow=state.workflow,
            input=tuple(state.input),
            raw_input=list(state.input),
            current=state.current_agent,
            max_turns=max_turns,
            ctx=ctx,
            depth=state.depth,
            fresh=False,
            items=list(state.items),
            turn=state.current_turn,
            pending=state.pending,
            decisions=dict(state.decisions),
            always=dict(state.always),
            nested={k: v.copy() for k, v in state.nested.items()},
        )
        if state.history is None:
            run.history = list(run.input)
            run.history.extend(i for i in run.items if _visible(i))
        else:
            run.history = list(state.history)
            run.history.extend(i for i in run.items[state.history_from :] if _visible(i))
            run.history_filtered = True
            run.history_from = state.history_from
        names: dict[str, tuple[str, str]] = {}
        for item in run.items:
            if type(item) is HandoffCallItem:
                names[item.call_id] = (item.agent, item.name)
            elif type(item) is HandoffOutputItem and item.call_id in names:
                key = names[item.call_id]
                run.uses[key] = run.uses.get(key, 0) + 1
            elif type(item) is ToolCallItem:
                run.used_tools.add(item.agent)
        run.emitted = len(run.items)
        return run

    def append(self, item: RunItem) -> None:
        self.items.append(item)
        if type(item) is not ToolApprovalItem:
            self.history.append(item)

    def snapshot(self, *, pending: PendingTurn | None, status: str) -> RunState:
        return RunState(
            workflow=self.workflow,
            input=self.input,
            items=list(self.items),
            current_agent=self.current,
            current_turn=self.turn,
            max_turns=self.max_turns,
            pending=pending,
            decisions=dict(self.decisions),
            always=dict(self.always),
            nested={k: v.copy() for k, v in self.nested.items()},
            history=tuple(self.history[: self._history_prefix()]) if self.history_filtered
            else None,
            history_from=self.history_from,
            depth=self.depth,
            status="interrupted" if status == "interrupted" else "stopped",
        )

    def _history_prefix(self) -> int:
        visible_since = sum(1 for i in self.items[self.history_from :] if _visible(i))
        return len(self.history) - visible_since

    def error_details(self) -> RunErrorDetails:
        return RunErrorDetails(
            input=self.input,
            new_items=self.items,
            last_agent=self.current,
            raw_responses=self.responses,
            usage=self.ctx.usage,
            input_guardrail_results=self.input_guardrail_results,
            output_guardrail_results=self.output_guardrail_results,
            _state=lambda: self.snapshot(pending=None, status="stopped"),
        )

    def result(self, final: Any, interrupted: PendingTurn | None = None) -> RunResult:
        result = RunResult(
            input=self.input,
            new_items=self.items,
            final_output=final,
            last_agent=self.current,
            interruptions=[],
            raw_responses=self.responses,
            usage=self.ctx.usage,
            max_turns=self.max_turns,
            input_guardrail_results=self.input_guardrail_results,
            output_guardrail_results=self.output_guardrail_results,
            _state=lambda: self.snapshot(
                pending=interrupted, status="interrupted" if interrupted else "stopped"
            ),
        )
        if interrupted is not None:
            result.interruptions = self.snapshot(
                pending=interrupted, status="interrupted"
            ).interruptions
        return result


def _input_items(value: Any) -> tuple[InputItem, ...]:
    if isinstance(value, str):
        return (UserInputItem(value),)
    if not isinstance(value, list | tuple):
        raise UserError(
            f"run input: expected a string, a list of items or a RunState, got "
            f"{type(value).__name__}"
        )
    out: list[InputItem] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append(UserInputItem(item))
        elif isinstance(item, dict) and isinstance(item.get("content"), str):
            role = item.get("role", "user")
            if role not in ("user", "system", "developer", "assistant"):
                raise UserError(f"run input[{i}]: unknown role {role!r}")
            out.append(UserInputItem(item["content"], role))
        elif hasattr(item, "type") and hasattr(item, "__dataclass_fields__"):
            out.append(item)
        else:
            raise UserError(
                f"run input[{i}]: expected a string, a {{'role', 'content'}} dict or an item, "
                f"got {type(item).__name__}"
            )
    return tuple(out)


def _check_state(core: MachineCore, state: RunState) -> None:
    """A state resumes only on a machine that still has what it names."""
    if state.workflow != core.ir.name:
        raise StateError(
            f"the state belongs to workflow {state.workflow!r}, not {core.ir.name!r}"
        )
    agents = {state.current_agent}
    agents.update(i.agent for i in state.items)
    if state.pending is not None:
        agents.add(state.pending.agent)
    missing = sorted(a for a in agents if a not in core.states)
    if missing:
        raise StateError(
            f"the state refers to agent(s) {', '.join(map(repr, missing))}, which workflow "
            f"{core.ir.name!r} does not have"
        )
    approvals = {i.call_id for i in state.items if type(i) is ToolApprovalItem}
    for call_id in state.decisions:
        if call_id not in approvals:
            raise StateError(f"a decision names call id {call_id!r}, which awaits no approval")
    if state.pending is None:
        if state.nested:
            raise StateError("the state has paused nested runs but no interrupted turn")
        return
    table = core.tables[state.pending.agent]
    calls: dict[str, OutputFunctionCall] = {}
    for out in state.pending.output:
        if type(out) is OutputFunctionCall:
            calls[out.call_id] = out
            entry = table.get(out.name)
            if entry is None:
                raise StateError(
                    f"the interrupted turn calls {out.name!r}, which agent "
                    f"{state.pending.agent!r} no longer has"
                )
    recorded = {
        i.call_id: i.name for i in state.items if isinstance(i, ToolCallItem | HandoffCallItem)
    }
    for call_id, call in calls.items():
        if recorded.get(call_id) != call.name:
            raise StateError(
                f"call id {call_id!r} of the interrupted turn does not match the state's items"
            )
    for call_id in state.nested:
        entry = table.get(calls[call_id].name) if call_id in calls else None
        if entry is None or not isinstance(entry.action, RunAgent):
            raise StateError(
                f"a paused nested run is filed under call id {call_id!r}, which is no agent-tool "
                "call of the interrupted turn"
            )


# -- the loop ------------------------------------------------------------------------------


def run_loop(core: MachineCore, run: Run, config: RunConfig) -> Loop:
    """Drive ``run`` to a result, yielding effects. Errors carry ``run_data``."""
    try:
        return (yield from _loop(core, run, config))
    except StepswitchError as exc:
        # Every error of ours carries the run so far (UserError too, as in the SDK).
        if getattr(exc, "run_data", None) is None:
            exc.run_data = run.error_details()  # type: ignore[attr-defined]
        raise


def _loop(core: MachineCore, run: Run, config: RunConfig) -> Loop:
    if run.emit:
        yield Emit(AgentUpdated(run.current))
    parallel: tuple[Any, ...] = ()
    if run.fresh:
        parallel = yield from _input_guardrails(core, run)
    if run.pending is not None:
        pending, run.pending = run.pending, None
        state = core.state(pending.agent)
        turn = yield from _settle(
            core, run, config, state, pending.output, pending.start, resume=True
        )
        if (ev := _flush(run)) is not None:
            yield ev
        decision = core.steps[state.agent](state, turn)
        if type(decision) is not RunAgain:
            done = yield from _decide(core, run, config, state, turn, decision, pending)
            if done is not None:
                return done
    while True:
        if run.max_turns is not None and run.turn >= run.max_turns:
            return (yield from _max_turns(core, run, config))
        state = core.state(run.current)
        instructions = state.instructions
        if state.instructions_fn is not None:
            instructions = yield from _instructions(core, run, state)
        request = _request(core, run, config, state, instructions)
        run.turn += 1
        agent_model = _model_for(core, state, run.model)
        if parallel:
            response, outcomes = yield CallModel(agent_model, request, parallel)
            _check_input_guardrails(run, state, outcomes)
            parallel = ()
        else:
            response = yield CallModel(agent_model, request)
        run.responses.append(response)
        run.ctx.usage.add(response.usage)
        output, start = response.output, len(run.items)
        turn = yield from _settle(core, run, config, state, output, start, resume=False)
        if (ev := _flush(run)) is not None:
            yield ev
        decision = core.steps[state.agent](state, turn)
        if type(decision) is RunAgain:
            continue
        here = PendingTurn(state.agent, tuple(output), start)
        done = yield from _decide(core, run, config, state, turn, decision, here)
        if done is not None:
            return done


def _flush(run: Run) -> Emit | None:
    """The items made since the last flush, as a stream event (None: nothing to say)."""
    if not run.emit or len(run.items) == run.emitted:
        return None
    batch = tuple(run.items[run.emitted :])
    run.emitted = len(run.items)
    return Emit(batch)


def _call(value: Any) -> Generator[Any, Any, Any]:
    """The value of a user hook's return, awaited when it is awaitable."""
    if inspect.isawaitable(value):
        value = yield Await(value)
    return value


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
    instructions = yield from _call(fn(run.ctx, state))
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
    hidden = _spent_handoffs(core, run, state)
    return ModelRequest(
        agent=state.agent,
        instructions=instructions,
        input=HistoryView(run.history),
        tools=core.tool_definitions(state.agent, hidden),
        output_schema=core.schemas[state.agent],
        settings=settings,
        model=state.model,
    )


_NO_HIDDEN: frozenset[str] = frozenset()


def _spent_handoffs(core: MachineCore, run: Run, state: StateIR) -> frozenset[str]:
    if not run.uses:
        return _NO_HIDDEN
    spent = [
        name
        for (agent, name), n in run.uses.items()
        if agent == state.agent
        and isinstance(a := core.tables[agent][name].action, HandOff)
        and a.max_uses is not None
        and n >= a.max_uses
    ]
    return frozenset(spent) if spent else _NO_HIDDEN


# -- one turn: settle the response's calls ------------------------------------------------


@dataclass(slots=True)
class _Slot:
    call: OutputFunctionCall
    entry: ToolEntry
    job: int = -1
    output: ToolCallOutputItem | None = None
    approval: bool = False
    nested_resume: bool = False


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
    table = core.tables[state.agent]
    agent = state.agent
    last_message: str | None = None
    had_calls = False
    calls: list[tuple[OutputFunctionCall, ToolEntry | None]] = []
    made: list[RunItem] = []
    for out in output:
        if type(out) is OutputFunctionCall:
            had_calls = True
            entry = table.get(out.name)
            if entry is None and config.unknown_tool == "raise":
                raise ModelBehaviorError(f"Tool {out.name} not found in agent {agent}")
            calls.append((out, entry))
            if entry is not None and type(entry.action) is HandOff:
                made.append(HandoffCallItem(agent, out.name, out.call_id, out.arguments))
            else:
                made.append(ToolCallItem(agent, out.name, out.call_id, out.arguments))
        elif isinstance(out, OutputMessage):
            last_message = out.content
            made.append(MessageOutputItem(agent, out.content, out.refusal))
    if not resume:
        # appended only once the whole response is known to be actionable
        for item in made:
            run.append(item)
        if (ev := _flush(run)) is not None:
            yield ev

    earlier: dict[str, ToolCallOutputItem] = {}
    approvals: set[str] = set()
    if resume:
        for item in run.items[start:]:
            if type(item) is ToolCallOutputItem:
                earlier[item.call_id] = item
            elif type(item) is ToolApprovalItem:
                approvals.add(item.call_id)

    slots: list[_Slot] = []
    jobs: list[Job] = []
    for call, entry in calls:
        if entry is None or type(entry.action) is HandOff or call.call_id in earlier:
            continue
        slot = _Slot(call, entry)
        slots.append(slot)
        action = entry.action
        if call.call_id in run.nested:
            child = run.nested.pop(call.call_id)
            asked = {i.call_id for i in child.items if type(i) is ToolApprovalItem}
            child.decisions.update((k, d) for k, d in run.decisions.items() if k in asked)
            child.always.update(run.always)
            slot.job = len(jobs)
            jobs.append(NestedJob(_nested_resume(core, run, config, child)))
            continue
        if resume:
            gated = call.call_id in approvals
        elif not isinstance(action, HandOff) and action.approval == "never":
            gated = False
        else:
            gated = yield from _needs_approval(core, run, action, call)
        if gated:
            decision = run.decisions.get(call.call_id)
            if decision is None and call.name in run.always:
                decision = Decision(run.always[call.name])
            if decision is None:
                slot.approval = True
                continue
            if not decision.approved:
                slot.output = ToolCallOutputItem(
                    agent, call.call_id, decision.message or REJECTED, call.name
                )
                continue
        job = _prepare(core, run, config, state, slot)
        if job is not None:
            slot.job = len(jobs)
            jobs.append(job)

    outcomes: tuple[Outcome, ...] = ()
    if jobs:
        outcomes = yield RunJobs(tuple(jobs), config.max_tool_concurrency)
        run.used_tools.add(agent)
    elif slots:
        run.used_tools.add(agent)

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
                slot.output = ToolCallOutputItem(
                    agent, call.call_id, output_text(outcome.value), call.name, False,
                    outcome.value,
                )
            else:
                yield from _function_outcome(core, run, slot, outcome)
        done = slot.output
        assert done is not None
        run.append(done)
        results[call.call_id] = ToolResult(call.name, done.value, done.output)

    if not resume:
        for call, entry in calls:
            if entry is None:
                run.append(
                    ToolCallOutputItem(
                        agent, call.call_id, f"Tool '{call.name}' not found.", call.name, True
                    )
                )

    handoff: str | None = None
    if not interrupted:
        handoff = yield from _handoffs(core, run, config, state, calls, start)

    ordered: list[ToolResult] = []
    for call, entry in calls:
        if entry is None or type(entry.action) is HandOff:
            continue
        if call.call_id in results:
            ordered.append(results[call.call_id])
        elif call.call_id in earlier:
            prior = earlier[call.call_id]
            value = prior.value if prior.value is not None else prior.output
            ordered.append(ToolResult(call.name, value, prior.output))
    return TurnOutcome(
        interrupted=interrupted,
        handoff=handoff,
        tool_results=tuple(ordered),
        had_calls=had_calls,
        last_message=last_message,
    )


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
        params = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return False  # invalid arguments never run; the validation error is the output
    if not isinstance(params, dict):
        return False
    verdict = yield from _call(tool.needs_approval(run.ctx, params, call.call_id))
    return bool(verdict)


def _prepare(
    core: MachineCore, run: Run, config: RunConfig, state: StateIR, slot: _Slot
) -> Job | None:
    action = slot.entry.action
    call = slot.call
    if type(action) is RunFunction:
        tool = core.obj(action.ref)
        try:
            params = parse_arguments(tool, call.arguments)
        except ArgumentError as exc:
            if action.failure == "raise":
                raise ModelBehaviorError(str(exc)) from None
            slot.output = ToolCallOutputItem(state.agent, call.call_id, str(exc), call.name, True)
            return None
        args = (run.ctx,) if action.takes_context else ()
        kwargs = {name: getattr(params, name) for name in core.param_names(action.ref)}
        return CallJob(tool.fn, args, kwargs, action.is_async)
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
            data = json.loads(call.arguments or "{}") if call.arguments.strip() else {}
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
    return NestedJob(run_loop(core, child, config))


def _nested_resume(core: MachineCore, run: Run, config: RunConfig, child: RunState) -> Loop:
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
        slot.output = ToolCallOutputItem(
            agent, call.call_id, output_text(outcome.value), call.name, False, outcome.value
        )
        return
    assert type(outcome) is Err
    err = outcome.error
    if action.failure == "raise":
        raise UserError(f"Error running tool {call.name}: {err}") from err
    if action.failure == "custom":
        handler = core.obj(action.ref).failure_error_function
        text = yield from _call(handler(run.ctx, err))
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
        slot.output = ToolCallOutputItem(
            state.agent, call.call_id, error_output(outcome.error), call.name, True
        )
        return False
    assert type(outcome) is Ok
    result: RunResult = outcome.value
    if result.interruptions:
        run.nested[call.call_id] = result.to_state()
        known = {i.call_id for i in run.items if type(i) is ToolApprovalItem}
        for item in result.interruptions:
            if item.call_id not in known:
                run.append(item)
        return True
    if action.output_extractor is not None:
        value = yield from _call(core.obj(action.output_extractor)(result))
        text = output_text(value)
    else:
        value, text = _nested_output(result)
    slot.output = ToolCallOutputItem(state.agent, call.call_id, text, call.name, False, value)
    return False


def _nested_output(result: RunResult) -> tuple[Any, str]:
    final = result.final_output
    if final is not None and final != "":
        return final, output_text(final)
    for item in reversed(result.new_items):
        if type(item) is MessageOutputItem and item.content:
            return item.content, item.content
        if type(item) is ToolCallOutputItem and item.output:
            return item.output, item.output
    return "", ""


# -- handoffs ------------------------------------------------------------------------------


def _handoffs(
    core: MachineCore,
    run: Run,
    config: RunConfig,
    state: StateIR,
    calls: list[tuple[OutputFunctionCall, ToolEntry | None]],
    start: int,
) -> Generator[Any, Any, str | None]:
    agent = state.agent
    winner: tuple[OutputFunctionCall, HandOff, Any] | None = None
    for call, entry in calls:
        if entry is None or type(entry.action) is not HandOff:
            continue
        action = entry.action
        key = (agent, call.name)
        used = run.uses.get(key, 0)
        if action.max_uses is not None and used >= action.max_uses:
            message = (
                f"Handoff {call.name} is no longer available: it was already taken "
                f"{used} time(s), its max_uses. Continue without it."
            )
        elif winner is not None:
            message = MULTIPLE_HANDOFFS
        else:
            try:
                value = None
                if action.input_type is not None:
                    value = parse_typed(
                        f"handoff {call.name}", core.obj(action.input_type), call.arguments
                    )
                winner = (call, action, value)
                continue
            except ArgumentError as exc:
                message = str(exc)
        run.append(ToolCallOutputItem(agent, call.call_id, message, call.name, True))
    if winner is None:
        return None
    call, action, value = winner
    if action.on_handoff is not None:
        hook = core.obj(action.on_handoff)
        yield from _call(hook(run.ctx, value) if action.input_type is not None else hook(run.ctx))
    key = (agent, call.name)
    run.uses[key] = run.uses.get(key, 0) + 1
    run.append(
        HandoffOutputItem(
            agent, call.call_id, _transfer_text(action.target), agent, action.target
        )
    )
    flt = core.obj(action.input_filter) if action.input_filter is not None else None
    flt = flt or config.handoff_input_filter
    if flt is not None:
        data = HandoffInputData(
            input_history=run.input,
            pre_handoff_items=tuple(run.items[:start]),
            new_items=tuple(run.items[start:]),
            run_context=run.ctx,
        )
        filtered = yield from _call(flt(data))
        if not isinstance(filtered, HandoffInputData):
            raise UserError(
                f"handoff {call.name}: the input filter returned {type(filtered).__name__}, "
                "not HandoffInputData"
            )
        history: list[InputItem] = list(filtered.input_history)
        history.extend(i for i in filtered.pre_handoff_items if _visible(i))
        history.extend(i for i in filtered.new_items if _visible(i))
        run.history = history
        run.history_filtered = True
        run.history_from = len(run.items)
    return action.target


_TRANSFERS: dict[str, str] = {}


def _transfer_text(target: str) -> str:
    """The handoff output the model sees: ``{"assistant": "<target>"}`` (as the SDK)."""
    text = _TRANSFERS.get(target)
    if text is None:
        text = _TRANSFERS.setdefault(target, json.dumps({"assistant": target}))
    return text


# -- the step switch -----------------------------------------------------------------------


def _decide(
    core: MachineCore,
    run: Run,
    config: RunConfig,
    state: StateIR,
    turn: TurnOutcome,
    decision: StepDecision,
    pending: PendingTurn,
) -> Generator[Any, Any, RunResult | None]:
    if type(decision) is AskToolUse:
        fn = core.obj(state.step.function or "")
        verdict = yield from _call(fn(run.ctx, list(turn.tool_results)))
        if not isinstance(verdict, ToolsToFinalOutputResult):
            raise UserError(
                f"agent {state.agent!r}: tool_use_behavior function returned "
                f"{type(verdict).__name__}, not ToolsToFinalOutputResult"
            )
        decision = Final(verdict.final_output) if verdict.is_final_output else RunAgain()
    if type(decision) is RunAgain:
        return None
    if type(decision) is Handoff:
        run.current = decision.target
        if run.emit:
            yield Emit(AgentUpdated(decision.target))
        return None
    if type(decision) is Interruption:
        return run.result(None, interrupted=pending)
    if type(decision) is Final:
        output = decision.output
        if state.output.kind == "text" and output is not None and not isinstance(output, str):
            output = str(output)
        return (yield from _finish(core, run, state, output))
    if type(decision) is FinalMessage:
        output = yield from _parse_final(core, run, config, state, decision.text)
        return (yield from _finish(core, run, state, output))
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
        error = ModelBehaviorError(
            f"Invalid JSON when parsing model output of agent {state.agent!r} as "
            f"{rule.name or 'its output type'}: {exc}"
        )
        if config.on_invalid_output is not None:
            value = yield from _call(config.on_invalid_output(error, text))
            if value is not None:
                return value
        raise error from None


def _finish(
    core: MachineCore, run: Run, state: StateIR, output: Any
) -> Generator[Any, Any, RunResult]:
    for g in state.output_guardrails:
        verdict = yield from _call(core.obj(g.ref)(run.ctx, state, output))
        result = GuardrailResult(g.name, state.agent, verdict.output_info,
                                 bool(verdict.tripwire_triggered))
        run.output_guardrail_results.append(result)
        if result.tripwire_triggered:
            raise OutputGuardrailTripwireTriggered(
                f"output guardrail {g.name!r} of agent {state.agent!r} tripped",
                guardrail_result=result,
            )
    return run.result(output)


def _max_turns(core: MachineCore, run: Run, config: RunConfig) -> Generator[Any, Any, RunResult]:
    error = MaxTurnsExceeded(
        f"Max turns ({run.max_turns}) exceeded: the run made {run.turn} model call(s) "
        f"and agent {run.current!r} had not finished; resume exc.run_data.to_state() with a "
        "larger max_turns, or set RunConfig(on_max_turns=...)",
        run_data=run.error_details(),
    )
    if config.on_max_turns is None:
        raise error
    value = yield from _call(config.on_max_turns(error.run_data))
    if value is None:
        raise error
    state = core.state(run.current)
    run.append(MessageOutputItem(run.current, output_text(value)))
    if (ev := _flush(run)) is not None:
        yield ev
    return (yield from _finish(core, run, state, value))


# -- input guardrails ----------------------------------------------------------------------


def _input_guardrails(core: MachineCore, run: Run) -> Generator[Any, Any, tuple[Any, ...]]:
    """Blocking guardrails run now; parallel ones are returned to start with the call."""
    state = core.state(run.current)
    parallel: list[Any] = []
    for g in state.input_guardrails:
        fn = core.obj(g.ref)
        if g.run_in_parallel:
            parallel.append(_bind_guard(fn, run, state))
            continue
        verdict = yield from _call(fn(run.ctx, state, run.raw_input))
        _record_input(run, state, g.name, verdict)
    return tuple(parallel)


def _bind_guard(fn: Any, run: Run, state: StateIR) -> Any:
    return lambda: fn(run.ctx, state, run.raw_input)


def _check_input_guardrails(run: Run, state: StateIR, outcomes: tuple[Outcome, ...]) -> None:
    parallel = [g for g in state.input_guardrails if g.run_in_parallel]
    for g, outcome in zip(parallel, outcomes, strict=True):
        if type(outcome) is Err:
            raise outcome.error
        assert type(outcome) is Ok
        _record_input(run, state, g.name, outcome.value)


def _record_input(run: Run, state: StateIR, name: str, verdict: Any) -> None:
    result = GuardrailResult(name, state.agent, verdict.output_info,
                             bool(verdict.tripwire_triggered))
    run.input_guardrail_results.append(result)
    if result.tripwire_triggered:
        raise InputGuardrailTripwireTriggered(
            f"input guardrail {name!r} of agent {state.agent!r} tripped",
            guardrail_result=result,
        )
