"""Every index and reference of a ``RunState``, checked before anything trusts it.

An unsigned state's digest catches truncation and accidents, not an edit: whoever
edits the body can recompute it. The loop reads positions (where the interrupted
turn begins, where a filtered history ends) and references (which call an output,
an approval or a paused nested run belongs to) straight from the state, so a wrong
one could run a call nobody approved or run a finished call again. This module
checks them all, without the machine: :func:`check_structure` runs when a state is
read from JSON and again when it resumes. What needs the machine's tables (agents,
tools) is checked by :func:`stepswitch.runtime.run.check_state`.
"""

from __future__ import annotations

from stepswitch.errors import StateError
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    ResponsesItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from stepswitch.runtime.model import OutputFunctionCall, OutputResponsesItem
from stepswitch.runtime.state import RunState

__all__ = ["check_structure"]


def _fail(where: str, what: str) -> StateError:
    return StateError(f"the saved state's {where}{what}")


def check_structure(state: RunState, *, where: str = "body", depth: int | None = None) -> None:
    """Raise ``StateError`` naming the first index or reference of ``state`` (nested runs
    included) that is out of range. ``depth``: what the state's depth must be (a nested
    run's is its caller's plus one); None for a top state, whose depth is at least 0."""
    _check_calls(state, where)
    if state.flow is not None:
        _check_flow(state, where)
        return
    n = len(state.items)
    if depth is not None and state.depth != depth:
        raise _fail(where, f".depth {state.depth} is wrong: a run nested here has depth {depth}")
    if state.depth < 0:
        raise _fail(where, f".depth {state.depth} is negative")
    if state.current_turn < 0:
        raise _fail(where, f".current_turn {state.current_turn} is negative")
    if state.max_turns is not None and state.max_turns < 0:
        raise _fail(where, f".max_turns {state.max_turns} is negative")
    if not 0 <= state.history_from <= n:
        raise _fail(where, f".history_from {state.history_from} is out of range "
                           f"(the state has {n} items)")
    if state.history is None and state.history_from:
        raise _fail(where, ".history_from is set, but there is no filtered history")
    interrupted = state.pending is not None
    if (state.status == "interrupted") != interrupted:
        has = "an interrupted turn" if interrupted else "no interrupted turn"
        raise _fail(where, f".status {state.status!r} does not fit a state with {has}")
    calls = _check_items(state.items, where)
    own = {i.call_id for i in state.items if isinstance(i, ToolApprovalItem) and not i.run_path}
    for call_id in state.decisions:
        if call_id not in own:
            raise _fail(where, f".decisions names call id {call_id!r}, which awaits no "
                               "approval in this run")
    if state.pending is None:
        if state.nested:
            raise _fail(where, ".nested holds paused runs, but no turn is interrupted")
        return
    _check_pending(state, calls, where)
    for call_id, child in state.nested.items():
        w = f"{where}.nested[{call_id!r}]"
        if child.workflow != state.workflow:
            raise _fail(w, f".workflow {child.workflow!r} is not {state.workflow!r}")
        if child.pending is None:
            raise _fail(w, " is no paused run")
        check_structure(child, where=w, depth=state.depth + 1)


def _check_calls(state: RunState, where: str) -> None:
    """The model-call count covers the run's own turns and is never less than a paused
    nested run's (which counted the same run's calls, earlier). A count below either
    was edited or corrupted: a scripted transcript would replay calls already made."""
    made = state.model_calls
    if made is None:
        return
    if made < state.current_turn:
        raise _fail(where, f".model_calls {made} is less than its .current_turn "
                           f"{state.current_turn}")
    for key, child in state.nested.items():
        if child.model_calls is not None and child.model_calls > made:
            raise _fail(where, f".model_calls {made} is less than the "
                               f"{child.model_calls} of its paused run {key!r}")


def _check_flow(state: RunState, where: str) -> None:
    """A flow's state: its items are several node runs' (call ids may repeat across
    them), its paused runs are nested under ``flow:`` keys, each checked as a run."""
    flow = state.flow
    assert flow is not None
    if not 0 <= flow.done <= len(state.items):
        raise _fail(where, f".flow.done {flow.done} is out of range (the state has "
                           f"{len(state.items)} items)")
    if state.pending is not None or state.decisions:
        raise _fail(where, " is a flow's, which pauses in its nodes' runs, not at the top")
    paused = False
    for key, child in state.nested.items():
        w = f"{where}.nested[{key!r}]"
        if not key.startswith("flow:"):
            raise _fail(w, " is no run of a flow node")
        if child.workflow != state.workflow:
            raise _fail(w, f".workflow {child.workflow!r} is not {state.workflow!r}")
        check_structure(child, where=w, depth=0)
        paused = paused or child.pending is not None
    if (state.status == "interrupted") != paused:
        has = "a paused node run" if paused else "no paused node run"
        raise _fail(where, f".status {state.status!r} does not fit a state with {has}")


def _check_items(items: list[RunItem], where: str) -> dict[str, int]:
    """Each call id is used by one call; each output and approval follows its call;
    a call has at most one output. Returns call id → position of the call."""
    calls: dict[str, int] = {}
    answered: set[str] = set()
    asked: set[str] = set()
    for i, item in enumerate(items):
        w = f"{where}.items[{i}]"
        if isinstance(item, ToolCallItem | HandoffCallItem):
            if item.call_id in calls:
                raise _fail(w, f" reuses call id {item.call_id!r} of items[{calls[item.call_id]}]")
            calls[item.call_id] = i
        elif isinstance(item, ToolCallOutputItem | HandoffOutputItem):
            at = calls.get(item.call_id)
            if at is None:
                raise _fail(w, f" answers call id {item.call_id!r}, which no earlier call has")
            if type(item) is HandoffOutputItem and type(items[at]) is not HandoffCallItem:
                raise _fail(w, f" is a handoff output for call {item.call_id!r}, no handoff")
            if item.call_id in answered:
                raise _fail(w, f" is a second output for call {item.call_id!r}")
            answered.add(item.call_id)
        elif isinstance(item, ToolApprovalItem) and not item.run_path:
            at = calls.get(item.call_id)
            call = items[at] if at is not None else None
            if not isinstance(call, ToolCallItem) or call.name != item.name:
                raise _fail(w, f" asks approval for call id {item.call_id!r}, which no earlier "
                               f"call of {item.name!r} has")
            if item.call_id in asked:
                raise _fail(w, f" asks approval for call {item.call_id!r} a second time")
            asked.add(item.call_id)
    return calls


def _check_pending(state: RunState, calls: dict[str, int], where: str) -> None:
    """The interrupted turn: its items start at ``pending.start`` in the response's order,
    every call before it has its output, and every call of it that has no output waits
    for a decision or for a paused nested run."""
    pending = state.pending
    assert pending is not None
    items = state.items
    n = len(items)
    w = f"{where}.pending"
    if not 0 <= pending.start <= n:
        raise _fail(w, f".start {pending.start} is out of range (the state has {n} items)")
    if state.current_agent != pending.agent:
        raise StateError(
            f"the saved state's {where}.current_agent {state.current_agent!r} is not the agent "
            f"of its interrupted turn ({pending.agent!r})"
        )
    start = pending.start
    made = items[start : start + len(pending.output)]
    for k, out in enumerate(pending.output):
        if k >= len(made) or not _makes(out, made[k], pending.agent):
            what = (f"call {out.call_id!r} of {out.name!r}" if type(out) is OutputFunctionCall
                    else "a message")
            raise _fail(w, f": items[{start}:] does not begin with the interrupted turn's calls "
                           f"and messages (output[{k}], {what}, is not items[{start + k}])")
    turn_calls = {o.call_id for o in pending.output if type(o) is OutputFunctionCall}
    settled = {i.call_id for i in items[:start]
               if isinstance(i, ToolCallOutputItem | HandoffOutputItem)}
    for i, item in enumerate(items[:start]):
        if isinstance(item, ToolCallItem | HandoffCallItem) and item.call_id not in settled:
            raise _fail(f"{where}.items[{i}]", f": call {item.call_id!r} has no output, but "
                                               "it comes before the interrupted turn")
    answered: set[str] = set()
    asked: set[str] = set()
    for i, item in enumerate(items[start + len(made) :], start + len(made)):
        if isinstance(item, ToolApprovalItem):
            if not item.run_path:
                asked.add(item.call_id)
            continue
        if not isinstance(item, ToolCallOutputItem):
            raise _fail(f"{where}.items[{i}]", f" ({item.type}) follows the interrupted "
                                               "turn, where only outputs and approvals can")
        if item.call_id not in turn_calls:
            raise _fail(f"{where}.items[{i}]", f" answers call {item.call_id!r}, which is not "
                                               "a call of the interrupted turn")
        answered.add(item.call_id)
    for item in made:
        if not isinstance(item, ToolCallItem) or item.call_id in answered:
            continue
        if item.call_id not in asked and item.call_id not in state.nested:
            raise _fail(w, f": call {item.call_id!r} ({item.name}) of the interrupted turn has "
                           "neither an output, an approval request nor a paused nested run")
    for call_id in state.nested:
        at = calls.get(call_id)
        if at is None or at < start or type(items[at]) is not ToolCallItem or (
            call_id in answered
        ):
            raise _fail(f"{where}.nested", f"[{call_id!r}] is filed under no open agent-tool "
                                           "call of the interrupted turn")


def _makes(out: object, item: RunItem, agent: str) -> bool:
    """Whether ``item`` is what the loop appends for the response output ``out``."""
    if type(out) is OutputFunctionCall:
        return (
            (type(item) is ToolCallItem or type(item) is HandoffCallItem)
            and item.agent == agent
            and item.name == out.name
            and item.call_id == out.call_id
            and item.arguments == out.arguments
        )
    if type(out) is OutputResponsesItem:
        return type(item) is ResponsesItem and item.agent == agent and item.item == out.item
    return (
        type(item) is MessageOutputItem
        and item.agent == agent
        and item.content == getattr(out, "content", None)
        and item.refusal == getattr(out, "refusal", None)
    )
