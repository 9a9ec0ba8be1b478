"""Check a recorded run: do its pins line up, and is every step a move the machine allows?

A *trail* is a run's items in order: a saved ``RunState`` (its input, its items, its
pending turn and decisions, its paused nested runs), or a JSON list of items in the
Responses API input format (what the Agents SDK's ``result.to_input_list()`` gives;
:func:`responses_items` writes one from stepswitch items). :func:`read_trail` parses
either into a frozen :class:`Trail`; anything that is not a trail is a
:class:`TrailError` with a one-line cause.

:func:`check_trail` is pure. Pins (TR1xx): every function call has exactly one output
with its ``call_id``, after it; no output without a call; no call id or item id used
twice; calls of an interrupted turn that wait for a decision are kept apart from
history (no output yet) and every approval and decision names a call. With the compiled
machine (``MachineIR``, TR2xx): each call names a tool, agent tool or handoff of the
agent the machine is at; a handoff moves to the agent it declares, within its
``max_uses``; a run makes at most ``max_turns`` model turns; items that say which
agent made them agree with the machine. A saved state that the runtime's own check
refuses is reported too (TR110). Codes are documented in
:mod:`stepswitch.review.trail_codes`.
"""


from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from stepswitch._dataclass import dataclass
from stepswitch.ir import HandoffTo, MachineIR, RunAgent, StateIR
from stepswitch.review.trail_read import (
    ItemKind,
    Trail,
    TrailError,
    TrailItem,
    read_trail,
    responses_items,
    trail_from_state,
)

__all__ = [
    "Finding",
    "ItemKind",
    "Trail",
    "TrailError",
    "TrailItem",
    "TrailReport",
    "check_trail",
    "read_trail",
    "responses_items",
    "trail_from_state",
]

_ASSISTANT_SIDE = frozenset({"message", "call", "reasoning"})


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: a code of :mod:`~stepswitch.review.trail_codes`, a message, and the
    item it points at (``index`` in the trail, ``where`` in the file)."""

    code: str
    message: str
    index: int | None
    where: str


@dataclass(frozen=True, slots=True)
class TrailReport:
    """Every finding about a trail, in trail order."""

    findings: tuple[Finding, ...]
    items: int
    """How many items were checked (nested runs' included)."""
    machine: bool
    """Whether the steps were checked against a workflow."""

    @property
    def ok(self) -> bool:
        return not self.findings

    def codes(self) -> tuple[str, ...]:
        return tuple(sorted({f.code for f in self.findings}))


# -- checking ------------------------------------------------------------------------------


def check_trail(
    trail: Trail,
    machine: MachineIR | None = None,
    *,
    start: str | None = None,
    unknown_tool: Literal["raise", "return_error"] = "raise",
    max_turns: int | Literal["machine"] | None = "machine",
    on_max_turns: bool = False,
) -> TrailReport:
    """Every finding about ``trail``; with ``machine`` (``StateMachine.ir``), its steps
    are replayed on the machine's tables too (starting at ``start``, default where a
    saved state's run started, else the entry;
    a flow's runs are not replayed). ``max_turns`` is the budget the run was given
    (default: a saved state's own, else the machine's); ``on_max_turns`` says the run
    had a ``RunConfig(on_max_turns=...)`` handler, whose final message may follow the
    last turn. ``unknown_tool`` is the
    run's ``RunConfig(unknown_tool=...)``: with ``return_error`` a call of a tool the
    agent lacks is a move the machine allows (it answers with an error)."""
    findings: list[Finding] = []
    if trail.refused is not None:
        findings.append(Finding("TR110", f"the runtime refuses to resume this state: "
                                f"{trail.refused}", None, "body"))
    replay = machine is not None and machine.flow is None
    if start is None and trail.start_agent is not None and machine is not None \
            and machine.state(trail.start_agent) is not None:
        start = trail.start_agent  # a saved state says where its run started
    count = _check(trail, machine if replay else None, start, unknown_tool, findings,
                   max_turns, on_max_turns)
    return TrailReport(tuple(findings), count, replay)


def _check(
    trail: Trail,
    machine: MachineIR | None,
    start: str | None,
    unknown_tool: str,
    findings: list[Finding],
    max_turns: int | Literal["machine"] | None,
    on_max_turns: bool = False,
) -> int:
    _pins(trail, findings)
    if machine is not None:
        _Machine(trail, machine, start, unknown_tool, findings, max_turns, on_max_turns).run()
    count = len(trail.items)
    for call_id, child in trail.nested:
        tool = _agent_tool_called(trail, machine, call_id) if machine is not None else None
        count += _check(child, machine if tool is not None else None,
                        tool.target if tool is not None else None, unknown_tool, findings,
                        "machine")
    return count


def _agent_tool_called(trail: Trail, machine: MachineIR, call_id: str) -> RunAgent | None:
    """The agent tool whose call ``call_id`` started a paused nested run."""
    for item in trail.items:
        if item.kind == "call" and item.call_id == call_id and item.agent is not None:
            state = machine.state(item.agent)
            entry = state.tool(item.name or "") if state is not None else None
            if entry is not None and isinstance(entry.action, RunAgent):
                return entry.action
    return None


def _pins(trail: Trail, out: list[Finding]) -> None:
    calls: dict[str, TrailItem] = {}
    outputs: dict[str, list[TrailItem]] = {}
    orphans: list[TrailItem] = []
    approvals: dict[str, TrailItem] = {}
    ids: dict[str, TrailItem] = {}
    for item in trail.items:
        if item.item_id is not None:
            first = ids.get(item.item_id)
            if first is None:
                ids[item.item_id] = item
            else:
                out.append(Finding("TR106", f"item id {item.item_id!r} is used again (first "
                                   f"at {first.where})", item.position, item.where))
        kind = item.kind
        call_id = item.call_id
        if kind == "call":
            assert call_id is not None
            first = calls.get(call_id)
            if first is None:
                calls[call_id] = item
            else:
                out.append(Finding("TR105", f"call id {call_id!r} of {item.name!r} was already "
                                   f"used by the call of {first.name!r} at {first.where}",
                                   item.position, item.where))
        elif kind == "output":
            assert call_id is not None
            if call_id in calls:
                answered = outputs.setdefault(call_id, [])
                answered.append(item)
                if len(answered) > 1:
                    out.append(Finding(
                        "TR104", f"a second output for call {call_id!r} "
                        f"({calls[call_id].name!r}); the first is at {answered[0].where}",
                        item.position, item.where))
            else:
                orphans.append(item)
        elif kind == "approval" and not item.run_path:
            assert call_id is not None
            approvals.setdefault(call_id, item)
    for item in orphans:
        assert item.call_id is not None
        later = calls.get(item.call_id)
        if later is not None:
            out.append(Finding("TR103", f"output for call {item.call_id!r} comes before its "
                               f"call at {later.where}", item.position, item.where))
        else:
            out.append(Finding("TR102", f"output for call {item.call_id!r}, which no call "
                               "made", item.position, item.where))
    pending = _pending(trail, calls)
    last_turn = _last_turn_start(trail.items)
    early = {item.call_id for item in orphans}
    for call_id, call in calls.items():
        if call_id in outputs or call_id in pending or call_id in early:
            continue
        hint = ""
        if trail.source == "items" and call.position >= last_turn:
            hint = ("; if the run is paused, check its saved RunState, which keeps pending "
                    "calls apart")
        out.append(Finding("TR101", f"call {call_id!r} of {call.name!r} has no output{hint}",
                           call.position, call.where))
    if trail.source == "state":
        _state_pins(trail, calls, outputs, approvals, out)
    out.sort(key=lambda f: (f.index if f.index is not None else -1, f.code))


def _pending(trail: Trail, calls: dict[str, TrailItem]) -> set[str]:
    """Calls that may lack an output: those of an interrupted state's pending turn."""
    if trail.pending_start is None:
        return set()
    return {c for c, item in calls.items() if item.position >= trail.pending_start}


def _state_pins(
    trail: Trail,
    calls: dict[str, TrailItem],
    outputs: dict[str, list[TrailItem]],
    approvals: dict[str, TrailItem],
    out: list[Finding],
) -> None:
    prefix = trail.prefix
    start = trail.pending_start
    decided = set(trail.decisions)
    nested = {call_id for call_id, _ in trail.nested}
    if start is not None:
        if start > len(trail.items):
            out.append(Finding("TR109", f"the pending turn starts at item {start}, past the "
                               f"end of the trail ({len(trail.items)} items)", None,
                               f"{prefix}pending.start"))
        turn = {c for c, item in calls.items() if item.position >= start}
        for call_id in trail.pending_calls:
            if call_id not in turn:
                out.append(Finding("TR109", f"the pending turn's call {call_id!r} is not among "
                                   "the calls recorded from pending.start on", None,
                                   f"{prefix}pending.output"))
        for call_id, approval in approvals.items():
            if approval.position < start or call_id in decided:
                continue
            answered = outputs.get(call_id)
            if answered and call_id in turn:
                out.append(Finding(
                    "TR107", f"call {call_id!r} ({approval.name!r}) awaits approval, yet "
                    f"its output is recorded at {answered[0].where} as if it had run",
                    answered[0].position, answered[0].where))
        for call_id in nested:
            if call_id in outputs:
                first = outputs[call_id][0]
                out.append(Finding("TR107", f"agent-tool call {call_id!r} has a paused nested "
                                   f"run, yet its output is recorded at {first.where}",
                                   first.position, first.where))
    for call_id, approval in approvals.items():
        if call_id not in calls:
            out.append(Finding("TR108", f"approval request for call {call_id!r} "
                               f"({approval.name!r}), which no call made", approval.position,
                               approval.where))
    for call_id in trail.decisions:
        if call_id not in approvals:
            out.append(Finding("TR108", f"a decision for call {call_id!r}, for which no "
                               "approval was asked", None, f"{prefix}decisions[{call_id!r}]"))


def _last_turn_start(items: Sequence[TrailItem]) -> int:
    """The index where the last group of model-made items begins."""
    start = len(items)
    seen_call = False
    for item in reversed(items):
        if item.kind in _ASSISTANT_SIDE:
            start = item.position
            seen_call = True
        elif seen_call and item.kind in ("input", "output"):
            break
    return start


class _Machine:
    """Replays a trail on the workflow's step switch."""

    def __init__(
        self,
        trail: Trail,
        machine: MachineIR,
        start: str | None,
        unknown_tool: str,
        out: list[Finding],
        max_turns: int | Literal["machine"] | None,
        on_max_turns: bool = False,
    ) -> None:
        self.on_max_turns = on_max_turns
        self.trail = trail
        self.agents: dict[str, StateIR] = {}
        for state in machine.states:
            self.agents.setdefault(state.agent, state)
        self.tables: dict[str, dict[str, HandoffTo | None]] = {}
        self.current: str = start if start is not None else machine.entry
        if max_turns != "machine":
            self.max_turns = max_turns
        elif trail.source == "state":
            self.max_turns = trail.max_turns  # a nested run's state holds its tool's budget
        else:
            self.max_turns = machine.max_turns
        self.unknown_tool = unknown_tool
        self.out = out

    def table(self, agent: str) -> dict[str, HandoffTo | None]:
        """Tool name → its handoff (None for function and agent tools)."""
        table = self.tables.get(agent)
        if table is None:
            table = {}
            for entry in reversed(self.agents[agent].tools):
                action = entry.action
                table[entry.name] = action if isinstance(action, HandoffTo) else None
            self.tables[agent] = table
        return table

    def find(self, code: str, message: str, item: TrailItem) -> None:
        self.out.append(Finding(code, message, item.position, item.where))

    def run(self) -> None:
        items = self.trail.items
        calls: dict[str, tuple[str, str | None, HandoffTo | None]] = {}
        turns = 0
        uses: dict[tuple[str, str], int] = {}
        side = "start"  # what the last item that matters was: input, assistant, output
        over = False
        for item in items:
            kind = item.kind
            if kind in ("approval", "other"):
                continue
            if kind == "input":
                if side in ("assistant", "output"):  # a new run of the conversation
                    turns, uses, over = 0, {}, False
                side = "input"
                continue
            if item.agent is not None and item.agent != self.current:
                where = ("names no agent of the workflow" if item.agent not in self.agents
                         else f"the machine is at {self.current!r}")
                self.find("TR205", f"item made by agent {item.agent!r}, but {where}", item)
            if kind in _ASSISTANT_SIDE:
                if side != "assistant":  # a new model response
                    turns += 1
                    if (self.max_turns is not None and turns > self.max_turns and not over
                            and not (self.on_max_turns and _closing_message(items, item.position))):
                        over = True
                        self.find("TR204", f"model turn {turns} of a run whose max_turns is "
                                  f"{self.max_turns}", item)
                side = "assistant"
                if kind == "call":
                    self.call(item, calls)
                continue
            side = "output"
            self.output(item, calls, uses)
        if self.trail.source == "state" and self.trail.current_agent not in (None, self.current):
            self.out.append(Finding(
                "TR205", f"the state says the run is at {self.trail.current_agent!r}, but its "
                f"items leave the machine at {self.current!r}", None,
                f"{self.trail.prefix}current_agent"))

    def call(
        self, item: TrailItem, calls: dict[str, tuple[str, str | None, HandoffTo | None]]
    ) -> None:
        assert item.call_id is not None and item.name is not None
        agent = self.current
        if agent not in self.agents:
            calls.setdefault(item.call_id, (agent, item.name, None))
            return
        table = self.table(agent)
        if item.name not in table:
            calls.setdefault(item.call_id, (agent, None, None))
            if self.unknown_tool != "return_error":
                self.find("TR201", f"call of {item.name!r}, which agent {agent!r} does not "
                          f"have (tools: {', '.join(sorted(table)) or 'none'})", item)
            return
        calls.setdefault(item.call_id, (agent, item.name, table[item.name]))

    def output(
        self,
        item: TrailItem,
        calls: dict[str, tuple[str, str | None, HandoffTo | None]],
        uses: dict[tuple[str, str], int],
    ) -> None:
        assert item.call_id is not None
        made = calls.get(item.call_id)
        if made is None:
            return  # no call: a pin problem (TR102/TR103)
        agent, name, handoff = made
        if name is None and item.handoff:
            self.find("TR202", f"a handoff was taken by call {item.call_id!r}, which is no "
                      f"handoff of agent {agent!r}", item)
            return
        if handoff is None or name is None:
            return
        target = item.target if item.handoff else _transfer_target(item.output)
        if target is None or item.is_error:
            return  # refused (budget spent, bad input, another handoff won): allowed
        if target != handoff.target:
            self.find("TR202", f"handoff {name!r} of agent {agent!r} moved the run to "
                      f"{target!r}; it leads to {handoff.target!r}", item)
        key = (agent, name)
        uses[key] = uses.get(key, 0) + 1
        if handoff.max_uses is not None and uses[key] == handoff.max_uses + 1:
            self.find("TR203", f"handoff {name!r} of agent {agent!r} taken {uses[key]} times "
                      f"in one run; its max_uses is {handoff.max_uses}", item)
        self.current = target


def _closing_message(items: Sequence[TrailItem], pos: int) -> bool:
    """True when the turn at ``pos`` is messages only and the run ends with it (what an
    ``on_max_turns`` handler appends)."""
    j = pos
    while j < len(items) and items[j].kind in ("message", "reasoning", "approval", "other"):
        j += 1
    return j == len(items) or items[j].kind == "input"


_TRANSFER_HEAD = '{"assistant": "'


def _transfer_target(output: str | None) -> str | None:
    """The agent a handoff's output names (``{"assistant": "<agent>"}``), if it is one."""
    if not output or not output.startswith("{"):
        return None
    if output.startswith(_TRANSFER_HEAD) and output.endswith('"}'):
        name = output[len(_TRANSFER_HEAD):-2]
        if '"' not in name and "\\" not in name:  # the common case, without a parser
            return name
    try:
        value = json.loads(output)
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("assistant"), str):
        target: str = value["assistant"]
        return target
    return None
