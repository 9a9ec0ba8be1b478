"""Approval decisions: which paused call a decision is for, and which calls still wait.

A decision belongs to one call of one run. Call ids are unique within a run, not
across runs: a nested agent-tool run may reuse its caller's ids (servers that number
calls per response, ``call_0``, ``call_1``, do). So a decision is keyed by the pair
``(run_path, call_id)``: ``run_path`` is the chain of agent-tool call ids that leads
from the top run to the run holding the call (``()`` for the top run). The decision is
stored in that run's own state (its ``decisions``, by its own call id), so a nested
run never sees its caller's decisions, nor the other way round.

"Always" decisions are scoped to an agent's tool: ``(agent, tool name)``. They are
kept on the top state and handed down to nested runs, which check the same pair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepswitch.errors import StateError, UserError
from stepswitch.runtime.items import RunItem, ToolApprovalItem, ToolCallOutputItem

if TYPE_CHECKING:
    from stepswitch.runtime.state import RunState

__all__ = ["AlwaysKey", "find_approval", "lift", "open_approvals", "own_approvals", "owner_of"]

AlwaysKey = tuple[str, str]
"""``(agent, tool name)``: what ``approve(..., always=True)`` covers."""


def owner_of(state: RunState, path: tuple[str, ...]) -> RunState | None:
    """The (nested) run state that holds calls of ``path``; None when it has finished."""
    owner = state
    for call_id in path:
        child = owner.nested.get(call_id)
        if child is None:
            return None
        owner = child
    return owner


def _answered(state: RunState) -> set[str]:
    return {i.call_id for i in state.items if type(i) is ToolCallOutputItem}


def _waiting(state: RunState) -> set[str]:
    """Call ids of the paused turn's calls: only these can await a decision. A flow's
    node run sits under the same key each time a loop comes back to it (its fan-out
    branch under the same index), so an approval item an earlier round left, already
    decided, names the new round's paused run as its owner too."""
    if state.pending is None:
        return set()
    return {c.call_id for c in state.pending.output if c.type == "function_call"}


def open_approvals(state: RunState) -> list[ToolApprovalItem]:
    """Approval items of ``state`` (nested runs' included) that still await a decision."""
    if state.pending is None and (state.flow is None or not state.nested):
        return []  # a flow pauses in its nested runs (agent nodes, fan-out branches)
    done: dict[tuple[str, ...], set[str]] = {}
    waiting: dict[tuple[str, ...], set[str]] = {}
    out: dict[tuple[tuple[str, ...], str], ToolApprovalItem] = {}
    for item in state.items:
        if type(item) is not ToolApprovalItem:
            continue
        path = item.run_path
        owner = owner_of(state, path)
        if owner is None or owner.pending is None:
            continue  # its nested run has finished: nothing waits any more
        if path not in done:
            done[path] = _answered(owner)
            waiting[path] = _waiting(owner)
        answered = done[path]
        key = (item.agent, item.name)
        if (
            item.call_id in waiting[path]
            and item.call_id not in answered
            and item.call_id not in owner.decisions
            and key not in state.always
            and key not in owner.always
        ):
            # an earlier round's item of the same call id (ids numbered per response)
            # gives way to the paused turn's, listed last
            out.pop((path, item.call_id), None)
            out[(path, item.call_id)] = item
    return list(out.values())


def find_approval(
    state: RunState, item: ToolApprovalItem | str
) -> tuple[RunState, ToolApprovalItem]:
    """The run state that owns the call ``item`` names, and its approval item.

    An interruption item names its call exactly; a bare call id must name one pending
    call only (else ``UserError``: pass the item instead).
    """
    path: tuple[str, ...] | None = None
    if isinstance(item, str):
        call_id = item
    else:
        given, path = getattr(item, "call_id", None), getattr(item, "run_path", ())
        if isinstance(given, str) and isinstance(path, tuple):
            call_id = given
        else:
            raise UserError(
                "approve/reject take an interruption item (result.interruptions[i]) or its "
                f"call id, got {type(item).__name__} {item!r}"
            )
    found: dict[tuple[tuple[str, ...], str], tuple[RunState, ToolApprovalItem]] = {}
    for candidate in state.items:
        if (
            type(candidate) is ToolApprovalItem
            and candidate.call_id == call_id
            and (path is None or candidate.run_path == path)
        ):
            owner = owner_of(state, candidate.run_path)
            if owner is not None and call_id in _waiting(owner):
                found[(candidate.run_path, call_id)] = (owner, candidate)  # the latest
    if not found:
        pending = ", ".join(i.call_id for i in open_approvals(state)) or "none"
        raise StateError(f"no pending approval has call id {call_id!r} (pending: {pending})")
    if len(found) > 1:
        names = ", ".join(f"{a.name} of agent {a.agent!r}" for _, a in found.values())
        raise UserError(
            f"call id {call_id!r} names {len(found)} pending calls ({names}), made by "
            "different runs; pass the interruption item (state.interruptions[i]) to say which"
        )
    [target] = found.values()
    if not isinstance(item, str):
        _same_call(item, target[1])
    return target


def _same_call(given: ToolApprovalItem, pending: ToolApprovalItem) -> None:
    """Refuse an interruption item whose call id matches a pending call of this run but
    whose agent, tool or arguments do not: it came from another run (call ids such as
    ``call_2_2`` repeat across runs), and deciding on it would approve a call nobody saw."""
    for what in ("agent", "name", "arguments"):
        mine, theirs = getattr(given, what, None), getattr(pending, what)
        if mine != theirs:
            raise StateError(
                f"the interruption item for call id {pending.call_id!r} does not match this "
                f"run's pending call: its {what} is {mine!r}, the pending call's is "
                f"{theirs!r}; it belongs to another run (take the item from this state's "
                "interruptions)"
            )


def lift(item: ToolApprovalItem, call_id: str) -> ToolApprovalItem:
    """A nested run's approval item as its caller lists it: under the caller's call id."""
    return ToolApprovalItem(
        item.agent, item.name, item.call_id, item.arguments, (call_id, *item.run_path)
    )


def own_approvals(items: list[RunItem]) -> set[str]:
    """Call ids of the run's own calls (not nested runs') that asked for approval."""
    return {
        i.call_id for i in items if type(i) is ToolApprovalItem and not i.run_path
    }
