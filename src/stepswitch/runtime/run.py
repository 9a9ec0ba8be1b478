"""The state of one run in progress, how it starts and resumes, and small helpers
the loop's parts share.

Only the loop touches a ``Run``; a ``RunState`` is its saved, inert form.
"""

from __future__ import annotations

import contextlib
import inspect
import uuid
from collections.abc import Generator
from dataclasses import field, replace
from typing import Any, Literal

from stepswitch._dataclass import dataclass
from stepswitch.context import RunContext
from stepswitch.errors import (
    StateError,
    UserError,
)
from stepswitch.ir import RunAgent
from stepswitch.runtime import _lazy
from stepswitch.runtime.approvals import own_approvals
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import (
    Await,
    Emit,
    RunJobs,
)
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    ResponsesItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import (
    InputItem,
    ModelResponse,
    OutputFunctionCall,
)
from stepswitch.runtime.result import GuardrailResult, RunErrorDetails, RunResult
from stepswitch.runtime.state import ApprovalDecision, PendingTurn, RunState, usage_tuple
from stepswitch.runtime.steps import TurnOutcome

__all__ = [
    "Calls", "Run", "call_hook", "check_state", "flush", "input_items", "keep_run", "tool_context",
    "visible",
]


def visible(item: RunItem) -> bool:
    return type(item) is not ToolApprovalItem


class Calls:
    """The model calls a whole run has made: one count its nested agent-tool runs and a
    flow's node runs share, so a saved state knows where a scripted transcript resumes."""

    __slots__ = ("n", "tools", "usd")

    def __init__(self, n: int = 0, tools: dict[str, int] | None = None, usd: float = 0.0,
                 ) -> None:
        self.n = n
        self.usd = usd
        """What the reported usage of these calls cost, priced when
        ``RunConfig(max_cost_usd=)`` is set (0.0 otherwise)."""
        self.tools: dict[str, int] = {} if tools is None else dict(tools)
        """How often each budgeted function tool (``max_uses``) has run in the whole run
        (:mod:`.budgets`)."""


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
    decisions: dict[str, ApprovalDecision] = field(default_factory=dict)
    always: dict[tuple[str, str], bool] = field(default_factory=dict)
    nested: dict[str, RunState] = field(default_factory=dict)
    call_ids: set[str] = field(default_factory=set)
    """Every call id the model has used in this run (a reuse is refused)."""
    input_guardrail_results: list[GuardrailResult] = field(default_factory=list)
    output_guardrail_results: list[GuardrailResult] = field(default_factory=list)
    tool_input_guardrail_results: list[Any] = field(default_factory=list)
    tool_output_guardrail_results: list[Any] = field(default_factory=list)
    emitted: int = 0
    model: Any = None
    """The run's model (never saved in a state)."""
    emit: bool = False
    """Yield ``Emit`` effects (set by the streaming driver; the items are the same)."""
    known_id: str | None = None
    """The run id, once made or read from a resumed state (see :attr:`run_id`)."""
    session: Any = None
    """The run's link to its session (:mod:`.conversation`), or None."""
    trace_context: str | None = None
    """The W3C traceparent of the run's first workflow span, kept in its states so a
    resumed run continues the same trace."""
    calls: Calls = field(default_factory=Calls)
    """The whole run's model calls (shared with the runs nested in it)."""
    jobs: RunJobs | None = None
    """The run's one ``RunJobs`` effect, refilled for each turn's tools (a driver is done
    with an effect once it answers it), as the loop refills its one ``CallModel``."""
    outcome: TurnOutcome | None = None
    """The run's one ``TurnOutcome``, refilled every turn: it lives for its turn (the
    step switch and the decision read it then; nothing keeps it)."""

    @property
    def run_id(self) -> str:
        """Stable across pause and resume: session operation ids and idempotency keys.
        Made on first use: a run that never saves a state nor calls a tool wanting an
        idempotency key skips the random bytes (a system call per run)."""
        if self.known_id is None:
            self.known_id = uuid.uuid4().hex
        return self.known_id

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
        calls: Calls | None = None,
    ) -> Run:
        items = input_items(input)
        return cls(
            workflow=workflow,
            input=items,
            raw_input=input,
            current=entry,
            max_turns=max_turns,
            ctx=ctx,
            depth=depth,
            history=list(items),
            calls=Calls() if calls is None else calls,
        )

    @classmethod
    def resume(
        cls, core: MachineCore, state: RunState, *, max_turns: int | None,
        ctx: RunContext[Any], calls: Calls | None = None,
    ) -> Run:
        """``calls``: the count of the run this one is nested in; a top run's count
        continues from the state's."""
        check_state(core, state)
        run = cls(
            workflow=state.workflow,
            input=tuple(state.input),
            raw_input=list(state.input),
            current=state.current_agent,
            max_turns=max_turns,
            ctx=ctx,
            depth=state.depth,
            # A state with nothing done yet (e.g. saved from an input-guardrail tripwire)
            # has not passed the entry agent's input guardrails: they run on resume.
            fresh=not state.items and state.pending is None,
            items=list(state.items),
            turn=state.current_turn,
            pending=state.pending,
            decisions=dict(state.decisions),
            always=dict(state.always),
            nested={k: v.copy() for k, v in state.nested.items()},
            trace_context=state.trace_context,
            calls=Calls(state.calls_made, state.tool_uses, state.spent_usd)
            if calls is None else calls,
        )
        run.known_id = state.run_id
        if state.history is None:
            run.history = list(run.input)
            run.history.extend(i for i in run.items if visible(i))
        else:
            run.history = list(state.history)
            run.history.extend(i for i in run.items[state.history_from :] if visible(i))
            run.history_filtered = True
            run.history_from = state.history_from
        names: dict[str, tuple[str, str]] = {}
        for item in run.items:
            if type(item) is HandoffCallItem:
                run.call_ids.add(item.call_id)
                names[item.call_id] = (item.agent, item.name)
            elif type(item) is HandoffOutputItem and item.call_id in names:
                key = names[item.call_id]
                run.uses[key] = run.uses.get(key, 0) + 1
            elif type(item) is ToolCallItem:
                run.call_ids.add(item.call_id)
                run.used_tools.add(item.agent)
        run.emitted = len(run.items)
        return run

    def append(self, item: RunItem) -> None:
        self.items.append(item)
        if type(item) is not ToolApprovalItem:
            self.history.append(item)

    def snapshot(
        self,
        *,
        pending: PendingTurn | None,
        status: Literal["interrupted", "stopped", "finished"],
    ) -> RunState:
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
            status=status,
            trace_context=self.trace_context,
            run_id=self.run_id,
            session=None if self.session is None else self.session.pin(),
            model_calls=self.calls.n,
            tool_uses=dict(self.calls.tools),
            spent_usd=self.calls.usd,
            usage=usage_tuple(self.ctx.usage),
        )

    def _history_prefix(self) -> int:
        visible_since = sum(1 for i in self.items[self.history_from :] if visible(i))
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
            tool_input_guardrail_results=self.tool_input_guardrail_results,
            tool_output_guardrail_results=self.tool_output_guardrail_results,
            # an error before the resumed turn was settled keeps that turn pending
            _state=lambda: self.snapshot(
                pending=self.pending, status="interrupted" if self.pending else "stopped"
            ),
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
            tool_input_guardrail_results=self.tool_input_guardrail_results,
            tool_output_guardrail_results=self.tool_output_guardrail_results,
            _state=lambda: self.snapshot(
                pending=interrupted, status="interrupted" if interrupted else "finished"
            ),
        )
        if interrupted is not None:
            result.interruptions = self.snapshot(
                pending=interrupted, status="interrupted"
            ).interruptions
        return result


def keep_run(exc: BaseException, run: Run) -> None:
    """Attach the run so far to an exception that ends it (as ``exc.run_data``)."""
    with contextlib.suppress(AttributeError, TypeError):  # a type without a __dict__
        exc.run_data = run.error_details()  # type: ignore[attr-defined]


def input_items(value: Any) -> tuple[InputItem, ...]:
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
        elif isinstance(item, dict) and isinstance(item.get("content"), list) and item.get(
            "type", "message"
        ) == "message":
            role = item.get("role", "user")
            if role not in ("user", "system", "developer", "assistant"):
                raise UserError(f"run input[{i}]: unknown role {role!r}")
            text, parts = _parts_text(item["content"], i)
            out.append(UserInputItem(text, role, parts))
        elif isinstance(item, dict) and isinstance(item.get("type"), str) and item[
            "type"
        ] not in ("message", "function_call", "function_call_output"):
            out.append(ResponsesItem("", item))  # a reasoning item and the like: verbatim
        elif hasattr(item, "type") and hasattr(item, "__dataclass_fields__"):
            out.append(item)
        else:
            raise UserError(
                f"run input[{i}]: expected a string, a {{'role', 'content'}} dict, a "
                f"Responses item (a dict with a type) or an item, "
                f"got {type(item).__name__}"
            )
    return tuple(out)


_TEXT_PARTS = ("input_text", "output_text", "text")


def _parts_text(parts: list[Any], i: int) -> tuple[str, tuple[dict[str, Any], ...]]:
    """A message's content parts (kept as given) and their text joined."""
    texts: list[str] = []
    for k, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise UserError(f"run input[{i}].content[{k}]: a content part is an object "
                            "with a type")
        if part["type"] in _TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "".join(texts), tuple(parts)


def check_state(core: MachineCore, state: RunState) -> None:
    """A state resumes only on a machine that still has what it names, and only when
    its indices and references are in range (:mod:`.state_check`)."""
    _lazy.state_check.check_structure(state)  # loaded for a resume only
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
    approvals = own_approvals(state.items)
    for call_id in state.decisions:
        if call_id not in approvals:
            raise StateError(f"a decision names call id {call_id!r}, which awaits no approval")
    if state.pending is None:
        if state.nested:
            raise StateError("the state has paused nested runs but no interrupted turn")
        _check_settled(state)
        return
    table = core.tables[state.pending.agent]
    answered = {i.call_id for i in state.items[state.pending.start :]
                if type(i) is ToolCallOutputItem}
    calls: dict[str, OutputFunctionCall] = {}
    for out in state.pending.output:
        if type(out) is OutputFunctionCall:
            calls[out.call_id] = out
            entry = table.get(out.name)
            if entry is None and out.call_id not in answered:
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


def _check_settled(state: RunState) -> None:
    """Without an interrupted turn, every call must have its output: a run that failed in
    the middle of a turn (a tool declared to raise) left calls the model would be sent
    without outputs, and tools that ran without their outputs recorded."""
    answered = {
        i.call_id for i in state.items if isinstance(i, ToolCallOutputItem | HandoffOutputItem)
    }
    for item in state.items:
        if isinstance(item, ToolCallItem | HandoffCallItem) and item.call_id not in answered:
            decision = state.decisions.get(item.call_id)
            if decision is not None and decision.approved:
                # it was running when the run ended (a signal, a crash): it may have had
                # its effect, and it is never started again
                raise StateError(
                    f"the state stopped in the middle of a turn: approved call {item.name!r} "
                    f"({item.call_id!r}) of agent {item.agent!r} had started and has no "
                    "output: it may have run, so it is not run again (at most once); check "
                    "what it did, then start a new run"
                )
            raise StateError(
                f"the state stopped in the middle of a turn: call {item.name!r} "
                f"({item.call_id!r}) of agent {item.agent!r} has no output, so it cannot be "
                "resumed; resume a state saved before the error or start a new run"
            )


def flush(run: Run) -> Emit | None:
    """The items made since the last flush, as a stream event (None: nothing to say)."""
    if not run.emit or len(run.items) == run.emitted:
        return None
    batch = tuple(run.items[run.emitted :])
    run.emitted = len(run.items)
    return Emit(batch)


def tool_context(run: Run, call_id: str) -> RunContext[Any]:
    """The context a tool call sees: the run's, with the call's idempotency key."""
    return replace(run.ctx, idempotency_key=f"{run.run_id}:{call_id}")


def call_hook(value: Any) -> Generator[Any, Any, Any]:
    """The value of a user hook's return, awaited when it is awaitable."""
    if inspect.isawaitable(value):
        value = yield Await(value)
    return value
