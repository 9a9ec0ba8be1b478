"""Replay a recorded run on the workflow as it is now, and say where it first diverges.

A recording (a saved ``RunState``, a Responses API item list, a session's history as
stepswitch item records, or a file written by ``RunConfig(record=PATH)``) is read into
a :class:`Recording`: the input each run of the conversation started with, the agent it
started at, and every model response with the tool outputs that answered it. The
compiled machine then runs for real, with a model that plays the recorded responses
back and tool calls answered with the recorded outputs (no tool runs, no model is
called); guardrails, approvals, budgets and output types are the workflow's own, as
they are today. The first place the run stops being the recorded one is a
:class:`Divergence` with a code of :data:`REPLAY_CODES` (each has an ``explain`` page).
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator, Sequence
from dataclasses import field
from importlib import resources
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.errors import (
    GuardrailTripwireTriggered,
    MaxTurnsExceeded,
    ModelBehaviorError,
    ReplayError,
    StateError,
)
from stepswitch.runtime.effects import CallJob, NestedJob, RunJobs
from stepswitch.runtime.model import (
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
)
from stepswitch.runtime.record import RECORD_FORMAT, record_doc, run_doc, write_doc
from stepswitch.runtime.tools import REJECTED

__all__ = [
    "REPLAY_CODES",
    "Divergence",
    "Recording",
    "ReplayCode",
    "ReplayError",
    "ReplayOutcome",
    "read_recording",
    "record_doc",
    "replay",
    "replay_code_doc",
    "replay_run",
]

_ROLES = ("user", "system", "developer", "assistant")


@dataclass(frozen=True, slots=True)
class ReplayCode:
    code: str
    name: str
    summary: str


_ALL = (
    ReplayCode("RP101", "tool-gone",
               "a recorded call names a tool the agent no longer has (renamed or removed)"),
    ReplayCode("RP102", "arguments-rejected",
               "the tool's schema now rejects a call's recorded arguments"),
    ReplayCode("RP103", "handoff-gone", "a recorded handoff is no longer offered"),
    ReplayCode("RP104", "budget-spent", "a turn budget (max_turns) is now spent before the "
               "recorded run ended"),
    ReplayCode("RP105", "approval-required", "a call that ran now waits for a human's "
               "approval"),
    ReplayCode("RP106", "guardrail-trips", "a guardrail now trips on the recorded run"),
    ReplayCode("RP107", "output-rejected", "the output type now rejects the recorded final "
               "output"),
    ReplayCode("RP108", "agent-changed", "a recorded turn is now taken by another agent"),
    ReplayCode("RP109", "ended-early", "the run now ends before the recorded run did"),
    ReplayCode("RP110", "goes-on", "the run now asks for a model turn the recording does "
               "not have"),
    ReplayCode("RP111", "run-error", "the replayed run raised an error the recorded run "
               "did not"),
    ReplayCode("RP112", "route-changed", "a flow route now leads elsewhere than the "
               "recorded run went"),
)

REPLAY_CODES: dict[str, ReplayCode] = {c.code: c for c in _ALL}
"""Every replay code, in order."""


def replay_code_doc(code: str) -> str:
    """The documentation page of a replay code (Markdown); ``KeyError`` when unknown."""
    if code not in REPLAY_CODES:
        raise KeyError(code)
    return (resources.files("stepswitch.review") / "docs" / f"{code}.md").read_text("utf-8")


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where the replay first left the recorded run."""

    code: str
    message: str
    turn: int
    """The model turn (1-based, across the whole recording) where it diverged."""
    where: str
    """The recorded item it points at (``[3]`` in a list, ``items[3]`` in a state)."""
    agent: str | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.code} {REPLAY_CODES[self.code].name}: {self.message}"


@dataclass(frozen=True, slots=True)
class Turn:
    """One recorded model response."""

    agent: str | None
    output: tuple[OutputItem, ...]
    where: tuple[str, ...]
    """Where each output item is in the file."""
    handoffs: frozenset[str]
    """Call ids of the calls the recording marks as handoffs."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One run of the conversation: its new input and the turns it made."""

    input: tuple[Any, ...]
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Recording:
    """A recorded conversation, ready to replay."""

    segments: tuple[Segment, ...]
    outputs: dict[str, tuple[str, bool, str]]
    """call id → (recorded output text, whether it was an error, where)."""
    start_agent: str | None = None
    source: str = "items"
    history: tuple[Any, ...] = ()
    """Items the first run was given before its own input (a session's earlier turns)."""
    approvals: frozenset[str] = frozenset()
    """Call ids the recorded run asked a human about."""
    decisions: dict[str, tuple[bool, str | None]] = field(default_factory=dict)
    """Call id → (approved, rejection message) as the human decided; a call asked about
    whose decision the recording lacks (an item list) is decided as its output shows."""

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.segments)


# -- reading ---------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _norm(raw: Any, where: str) -> dict[str, Any]:
    """An item (a Responses dict or a stepswitch record) as a stepswitch record."""
    if not isinstance(raw, dict):
        raise ReplayError(f"item {where}: expected an object, got {type(raw).__name__}")
    kind = raw.get("type")
    if kind is None or kind == "message":
        role = raw.get("role")
        if role == "assistant":
            content = raw.get("content")
            refusal = None
            if isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "refusal":
                        refusal = str(part.get("refusal", ""))
            return {"type": "message_output_item", "agent": raw.get("agent"),
                    "content": _text_of(content), "refusal": refusal}
        if role not in ("user", "system", "developer"):
            raise ReplayError(f"item {where}: neither a known item type nor a message with a "
                              f"role (got type {kind!r}, role {role!r})")
        return {"type": "user_input_item", "role": role, "content": _text_of(raw.get("content"))}
    if kind == "function_call":
        return {"type": "tool_call_item", "agent": raw.get("agent"),
                "name": _need(raw, "name", where), "call_id": _need(raw, "call_id", where),
                "arguments": raw.get("arguments") or "{}"}
    if kind == "function_call_output":
        out = raw.get("output")
        return {"type": "tool_call_output_item", "call_id": _need(raw, "call_id", where),
                "output": out if isinstance(out, str) else json.dumps(out),
                "is_error": False}
    if kind in ("user_input_item", "message_output_item", "tool_call_item",
                "tool_call_output_item", "handoff_call_item", "handoff_output_item",
                "tool_approval_item", "reasoning"):
        if kind in ("tool_call_item", "handoff_call_item", "tool_call_output_item",
                    "handoff_output_item"):
            _need(raw, "call_id", where)
        if kind in ("tool_call_item", "handoff_call_item"):
            _need(raw, "name", where)
        return raw
    raise ReplayError(f"item {where}: unknown item type {kind!r}")


def _need(raw: dict[str, Any], name: str, where: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str):
        what = "missing" if value is None else f"not a string ({type(value).__name__})"
        raise ReplayError(f"item {where}: {raw.get('type')} item's {name} is {what}")
    return value


def _build(records: Sequence[tuple[dict[str, Any], str]], start_agent: str | None,
           source: str, history: tuple[Any, ...] = (),
           decisions: dict[str, tuple[bool, str | None]] | None = None) -> Recording:
    from stepswitch.runtime.items import UserInputItem

    segments: list[Segment] = []
    outputs: dict[str, tuple[str, bool, str]] = {}
    approvals: set[str] = set()
    inputs: list[Any] = []
    turns: list[Turn] = []
    cur: list[tuple[OutputItem, str, str | None, bool]] = []
    last = "start"

    def close_turn() -> None:
        if cur:
            agent = next((a for _, _, a, _ in cur if a is not None), None)
            turns.append(Turn(agent, tuple(o for o, _, _, _ in cur),
                              tuple(w for _, w, _, _ in cur),
                              frozenset(o.call_id for o, _, _, h in cur
                                        if h and type(o) is OutputFunctionCall)))
            cur.clear()

    for rec, where in records:
        kind = rec["type"]
        if kind == "user_input_item":
            close_turn()
            if last in ("assistant", "output"):
                segments.append(Segment(tuple(inputs), tuple(turns)))
                inputs, turns = [], []
            role = rec.get("role", "user")
            inputs.append(UserInputItem(str(rec.get("content", "")),
                                        role if role in _ROLES else "user"))
            last = "input"
        elif kind in ("message_output_item", "tool_call_item", "handoff_call_item"):
            agent = rec.get("agent") if isinstance(rec.get("agent"), str) else None
            if last != "assistant" or (cur and (
                    (agent is not None and cur[-1][2] is not None and cur[-1][2] != agent)
                    or (kind == "message_output_item" and type(cur[-1][0]) is OutputMessage))):
                # a new response: in a flow, the next node's agent, or a fan-out's next
                # branch (a response's text comes as one message, before its calls)
                close_turn()
            if kind == "message_output_item":
                item: OutputItem = OutputMessage(str(rec.get("content") or ""),
                                                 rec.get("refusal"))
            else:
                item = OutputFunctionCall(rec["name"], str(rec.get("arguments") or "{}"),
                                          rec["call_id"])
            cur.append((item, where, agent, kind == "handoff_call_item"))
            last = "assistant"
        elif kind in ("tool_call_output_item", "handoff_output_item"):
            close_turn()
            outputs.setdefault(rec["call_id"], (str(rec.get("output") or ""),
                                                rec.get("is_error") is True, where))
            last = "output"
        elif kind == "tool_approval_item" and not rec.get("run_path"):
            approvals.add(str(rec.get("call_id")))
        # reasoning carries nothing to replay
    close_turn()
    if inputs or turns:
        segments.append(Segment(tuple(inputs), tuple(turns)))
    if not segments or not any(s.turns for s in segments):
        raise ReplayError("the recording has no model turn to replay")
    if start_agent is None:
        start_agent = next((t.agent for s in segments for t in s.turns), None)
    return Recording(tuple(segments), outputs, start_agent, source, history,
                     frozenset(approvals), dict(decisions or {}))


def read_recording(text: str | bytes, *, key: bytes | None = None) -> Recording:
    """A recording from a saved state, an item list, or a ``record=`` file."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReplayError(f"not JSON: {exc}") from None
    if isinstance(doc, dict) and doc.get("format") == "stepswitch.run_state":
        from stepswitch.runtime.state_json import _item, load_state

        try:
            state = load_state(text, key=key)
        except StateError as exc:
            raise ReplayError(f"not a readable run state: {exc}") from None
        own = state.items
        if state.flow is not None and 0 <= state.flow.done <= len(own):
            own = own[: state.flow.done]  # past it: paused node runs' items
        records = [(_item(i), f"input[{n}]") for n, i in enumerate(state.input)]
        records += [(_item(i), f"items[{n}]") for n, i in enumerate(own)]
        own_decisions = {k: (d.approved, d.message) for k, d in state.decisions.items()}
        return _build(records, None, "state", decisions=own_decisions)
    if isinstance(doc, dict) and doc.get("format") == RECORD_FORMAT:
        given, items = doc.get("input"), doc.get("items")
        start = doc.get("start_agent")
        if (not isinstance(given, list) or not isinstance(items, list)
                or not (start is None or isinstance(start, str))):
            raise ReplayError("a recording needs input and items lists and a start_agent "
                              "string")
        history = tuple(_as_item(_norm(r, f"input[{n}]"), f"input[{n}]")
                        for n, r in enumerate(given))
        records = [(_norm(r, f"items[{n}]"), f"items[{n}]") for n, r in enumerate(items)]
        return _build(records, start, "record", history, _read_decisions(doc))
    if not isinstance(doc, list):
        kind = "an object" if isinstance(doc, dict) else type(doc).__name__
        raise ReplayError(f"expected a saved run state, a recording or a JSON list of items, "
                          f"got {kind}")
    return _build([(_norm(r, f"[{n}]"), f"[{n}]") for n, r in enumerate(doc)], None, "items")


def _read_decisions(doc: dict[str, Any]) -> dict[str, tuple[bool, str | None]]:
    """A record file's ``decisions`` (absent in files written before they were kept)."""
    raw = doc.get("decisions", {})
    if not isinstance(raw, dict):
        raise ReplayError("a recording's decisions must be an object")
    out: dict[str, tuple[bool, str | None]] = {}
    for call_id, d in raw.items():
        approved = d.get("approved") if isinstance(d, dict) else None
        message = d.get("message") if isinstance(d, dict) else None
        if not isinstance(approved, bool) or not (message is None or isinstance(message, str)):
            raise ReplayError(f"decisions[{call_id!r}]: needs approved (true or false) and "
                              "message (a string or null)")
        out[str(call_id)] = (approved, message)
    return out


def _as_item(rec: dict[str, Any], where: str) -> Any:
    """A stepswitch record as the item object a run takes as input."""
    from stepswitch.runtime.state_json import _ITEM_FIELDS

    if rec["type"] not in _ITEM_FIELDS:
        raise ReplayError(f"item {where}: a {rec['type']} item cannot be given as input")
    kind, fields = _ITEM_FIELDS[rec["type"]]
    try:
        return kind(**{f: (tuple(rec[f]) if f == "run_path" else rec[f])
                       for f in fields if f in rec})
    except TypeError as exc:
        raise ReplayError(f"item {where}: {rec['type']} item is incomplete ({exc})") from None


def write_record(path: str | os.PathLike[str], result: Any, workflow: str,
                 case: str | None = None) -> None:
    """Write ``result``'s run (input and new items) to ``path``; with ``case`` (the
    workflow's TARGET) and a path named ``*.trail.json``, a recorded case that expects
    what the run did (see :mod:`stepswitch.review.cases`)."""
    doc = run_doc(result, workflow)
    if case is not None and os.fspath(path).endswith(".trail.json"):
        from pathlib import Path

        from stepswitch.review.cases import case_doc, relative_target

        target = relative_target(case, Path(os.fspath(path)).parent)
        doc = case_doc(target, doc, result)
    write_doc(path, doc)


# -- replaying -------------------------------------------------------------------------


class _Stop(Exception):
    """Raised inside the run to end it at a divergence."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.message)
        self.divergence = divergence


class _Player:
    """The recorded model and the recorded tools of one replay."""

    provider_name = "stepswitch.replay"

    def __init__(self, recording: Recording, flow: bool = False) -> None:
        self.rec = recording
        self.flow = flow
        self.used: set[int] = set()
        self.turns: list[Turn] = []
        self.pos = 0
        self.turn_no = 0
        self.ran: set[str] = set()
        self.seen: set[str] = set()  # call ids whose replayed output was compared
        self.last: Turn | None = None

    def start(self, turns: Sequence[Turn], turn_no: int) -> None:
        self.turns = list(turns)
        self.pos = 0
        self.used = set()
        self.turn_no = turn_no

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        self.compare_outputs(request.input)
        if self.pos >= len(self.turns):
            last = self.last
            raise _Stop(Divergence(
                "RP110", f"agent {request.agent!r} asks for model turn {self.turn_no + 1}, "
                "which the recording does not have", self.turn_no + 1,
                last.where[-1] if last is not None else "end", request.agent))
        index = self.pos
        if self.flow:  # fan-out branches may ask in another order: the agent's next turn
            index = next((i for i, t in enumerate(self.turns)
                          if i not in self.used and t.agent in (None, request.agent)), -1)
            if index < 0:
                ahead = self.next_turn()
                raise _Stop(Divergence(
                    "RP112", f"the flow now runs agent {request.agent!r}, which the recording "
                    f"does not have a turn of here"
                    + (f" (it goes on with {ahead.agent!r})" if ahead is not None else ""),
                    self.turn_no + 1, ahead.where[0] if ahead is not None else "end",
                    request.agent))
        self.used.add(index)
        turn = self.turns[index]
        self.pos += 1
        self.turn_no += 1
        self.last = turn
        if turn.agent is not None and turn.agent != request.agent:
            raise _Stop(Divergence(
                "RP108", f"recorded turn {self.turn_no} was made by agent {turn.agent!r}; the "
                f"run is now at {request.agent!r}", self.turn_no, turn.where[0], request.agent))
        offered = {t.name for t in request.tools}
        for item, where in zip(turn.output, turn.where, strict=True):
            if type(item) is OutputFunctionCall and item.name not in offered:
                shown = ", ".join(sorted(offered)) or "none"
                if item.call_id in turn.handoffs or item.name.startswith("transfer_to_"):
                    raise _Stop(Divergence(
                        "RP103", f"handoff {item.name!r} is no longer offered by agent "
                        f"{request.agent!r} (offered: {shown})", self.turn_no, where,
                        request.agent))
                raise _Stop(Divergence(
                    "RP101", f"call of {item.name!r}, which agent {request.agent!r} no longer "
                    f"has (tools: {shown})", self.turn_no, where, request.agent))
        return ModelResponse(turn.output, response_id=f"replay_{self.turn_no}")

    def next_turn(self) -> Turn | None:
        """The first recorded turn not played yet."""
        return next((t for i, t in enumerate(self.turns) if i not in self.used), None)

    def compare_outputs(self, history: Sequence[Any]) -> None:
        """Calls the tools did not run: did the workflow now answer them otherwise?"""
        last = self.last
        if last is None:
            return
        for item in history:
            call_id = getattr(item, "call_id", None)
            if (getattr(item, "type", None) != "tool_call_output_item" or call_id is None
                    or call_id in self.ran or call_id in self.seen):
                continue
            self.seen.add(call_id)
            recorded = self.rec.outputs.get(call_id)
            if recorded is None or recorded[0] == item.output:
                continue
            where = recorded[2]
            for out, w in zip(last.output, last.where, strict=True):
                if type(out) is OutputFunctionCall and out.call_id == call_id:
                    where = w
            raise _Stop(Divergence(
                "RP102", f"the arguments of call {call_id!r} of {item.name!r} are now rejected: "
                f"{item.output}", self.turn_no, where, item.agent))

    async def answer(self, call_id: str) -> str:
        return self.rec.outputs[call_id][0]

    def jobs(self, effect: RunJobs) -> RunJobs:
        jobs: list[Any] = []
        for job in effect.jobs:
            if type(job) is CallJob and job.call_id and job.call_id in self.rec.outputs:
                self.ran.add(job.call_id)
                jobs.append(CallJob(self.answer, (job.call_id,), {}, True, job.name,
                                    job.call_id))
            elif type(job) is NestedJob and job.call_id in self.rec.outputs:
                # an agent tool: its nested run answers with what it answered then
                job.loop.close()
                self.ran.add(job.call_id)
                jobs.append(NestedJob(_canned(self.rec.outputs[job.call_id][0]), job.name,
                                      job.call_id, job.agent))
            else:
                jobs.append(job)
        return RunJobs(tuple(jobs), effect.limit)


@dataclass(slots=True)
class _NestedAnswer:
    """What a replayed agent tool's nested run gives its caller: the recorded text."""

    final_output: str
    interruptions: tuple[Any, ...] = ()
    output_guardrail_results: tuple[Any, ...] = ()
    new_items: tuple[Any, ...] = ()


def _canned(text: str) -> Generator[Any, Any, _NestedAnswer]:
    return _NestedAnswer(text)
    yield  # a generator: the pump drives it as a nested run loop


def _intercept(loop: Generator[Any, Any, Any], player: _Player) -> Generator[Any, Any, Any]:
    """``loop`` with each tool call answered by its recorded output."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = loop.throw(error) if error is not None else loop.send(send)
        except StopIteration as stop:
            return stop.value
        error = None
        if type(effect) is RunJobs:
            effect = player.jobs(effect)
        try:
            send = yield effect
        except BaseException as exc:  # the driver threw in: pass it on
            error = exc
            send = None


def replay(trail: Any, machine: Any, *, context: Any = None) -> Divergence | None:
    """Replay ``trail`` (a :class:`Recording`, a path, JSON text, a ``RunState`` or a
    list of items) on ``machine`` (a compiled ``StateMachine`` or a ``Workflow``); the
    first divergence, or None when the run goes the same way."""
    return replay_run(trail, machine, context=context).divergence


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    """A replay's verdict and what the replayed run did (for a case's expectations)."""

    divergence: Divergence | None
    results: tuple[Any, ...]
    """The ``RunResult`` of each run of the conversation that finished."""

    @property
    def last(self) -> Any:
        return self.results[-1] if self.results else None


def replay_run(trail: Any, machine: Any, *, context: Any = None) -> ReplayOutcome:
    """:func:`replay`, with the replayed runs' results."""
    from stepswitch.runtime.machine import _thread_loop

    recording = _as_recording(trail)
    if not hasattr(machine, "_start") and hasattr(machine, "compile"):
        kind = getattr(machine, "context_type", None)
        if context is None and isinstance(kind, type):
            try:  # as the CLI does: a context_type that builds with no arguments
                context = kind()
            except Exception as exc:
                raise ReplayError(f"workflow {machine.name!r} declares context_type="
                                  f"{kind.__name__}, which does not construct with no "
                                  f"arguments ({type(exc).__name__}); pass context=") from None
        machine = machine.compile()
    if context is None and machine.ir.context_type is not None:
        raise ReplayError(f"workflow {machine.ir.name!r} declares context_type="
                          f"{machine.ir.context_type}: pass context=")
    results: list[Any] = []
    found = _thread_loop().run_until_complete(_replay(recording, machine, context, results))
    return ReplayOutcome(found, tuple(results))


def _as_recording(trail: Any) -> Recording:
    if isinstance(trail, Recording):
        return trail
    if isinstance(trail, os.PathLike) or (isinstance(trail, str) and not
                                          trail.lstrip().startswith(("{", "["))):
        try:
            with open(trail, "rb") as f:
                return read_recording(f.read())
        except OSError as exc:
            raise ReplayError(f"{trail}: cannot read: {exc.strerror or exc}") from None
    if isinstance(trail, str | bytes):
        return read_recording(trail)
    from stepswitch.runtime.state import RunState
    from stepswitch.runtime.state_json import _item

    if isinstance(trail, RunState):
        return read_recording(trail.to_json())
    if isinstance(trail, list):
        return _build([(_norm(i if isinstance(i, dict) else _item(i), f"[{n}]"), f"[{n}]")
                       for n, i in enumerate(trail)], None, "items")
    raise ReplayError(f"not a recording: {type(trail).__name__}")


async def _replay(rec: Recording, machine: Any, context: Any,
                  results: list[Any]) -> Divergence | None:
    from stepswitch.runtime.pump import drive

    flow = machine.ir.flow is not None
    player = _Player(rec, flow)
    history: list[Any] = list(rec.history)
    agent = rec.start_agent
    if flow:
        agent = None  # a flow starts at its first node
        if len(rec.segments) > 1:
            raise ReplayError("a flow's recording holds one run; this one holds "
                              f"{len(rec.segments)}")
    elif agent is not None and agent not in machine.agents:
        first = rec.segments[0].turns[0] if rec.segments[0].turns else None
        return Divergence("RP108", f"the recording starts at agent {agent!r}, which workflow "
                          f"{machine.ir.name!r} no longer has", 1,
                          first.where[0] if first is not None else "start", agent)
    turn_no = 0
    for seg in rec.segments:
        player.start(seg.turns, turn_no)
        player.last = None
        history.extend(seg.input)
        try:
            if flow:  # a flow takes its first node's input as given
                given: Any = history[0].content if len(history) == 1 else list(history)
                loop = machine._start(given, player, context, machine.ir.max_turns, None)
            else:
                loop = machine._start(list(history), player, context, machine.ir.max_turns,
                                      None, starting_agent=agent)
            result = await drive(_intercept(loop, player))
            while result.interruptions and all(
                    i.call_id in rec.approvals for i in result.interruptions):
                # the recorded run asked a human here too: decide as the human did
                state = result.to_state()
                for item in result.interruptions:
                    text = rec.outputs.get(item.call_id, ("",))[0]
                    approved, message = rec.decisions.get(item.call_id,
                                                          (text != REJECTED, None))
                    if approved:
                        state.approve(item)
                    else:
                        state.reject(item, message=message)
                loop = machine._start(state, player, context, state.max_turns, None)
                result = await drive(_intercept(loop, player))
        except _Stop as stop:
            return stop.divergence
        except MaxTurnsExceeded as exc:
            return _at(player, "RP104", f"{exc}")
        except GuardrailTripwireTriggered as exc:
            return _at(player, "RP106", f"{type(exc).__name__}: {exc}")
        except ModelBehaviorError as exc:
            text = str(exc)
            code = "RP107" if "parsing model output" in text else "RP111"
            return _at(player, code, text)
        except Exception as exc:
            return _at(player, "RP111", f"{type(exc).__name__}: {exc}")
        if result.interruptions:
            pending = result.interruptions[0]
            where = player.last.where[-1] if player.last is not None else "end"
            if player.last is not None:
                for out, w in zip(player.last.output, player.last.where, strict=True):
                    if type(out) is OutputFunctionCall and out.call_id == pending.call_id:
                        where = w
            return Divergence("RP105", f"call {pending.call_id!r} of {pending.name!r} now waits "
                              "for approval; the recorded run ran it", player.turn_no, where,
                              pending.agent)
        if player.pos < len(player.turns):
            nxt = player.next_turn()
            assert nxt is not None
            if flow:
                return Divergence("RP112", f"the flow now ends after turn {player.turn_no}; "
                                  f"the recording goes on with agent {nxt.agent!r}",
                                  player.turn_no + 1, nxt.where[0], nxt.agent)
            return Divergence("RP109", f"the run now ends after turn {player.turn_no}; the "
                              f"recording goes on with {len(player.turns) - player.pos} more",
                              player.turn_no + 1, nxt.where[0], result.last_agent)
        results.append(result)
        turn_no = player.turn_no
        history = list(result.to_input_list())
        agent = result.last_agent
    return None


def _at(player: _Player, code: str, message: str) -> Divergence:
    last = player.last
    ahead = player.next_turn()
    if last is None and ahead is not None:  # before the turn's response
        return Divergence(code, message, player.turn_no + 1, ahead.where[0], ahead.agent)
    where = last.where[-1] if last is not None else "start"
    return Divergence(code, message, max(player.turn_no, 1), where,
                      last.agent if last is not None else None)
