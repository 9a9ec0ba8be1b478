"""Recordings: what ``stepswitch replay`` and ``stepswitch test`` play back, read.

A recording is a saved ``RunState``, a Responses API item list, a session's history as
stepswitch item records, or a file written by ``RunConfig(record=PATH)``
(:func:`write_record`), alone or inside the recorded case ``run --record
NAME.trail.json`` writes. :func:`read_recording` reads any of them into a
:class:`Recording`: the input each run of the conversation started with, the agent it
started at, and every model response with the tool outputs that answered it.
:mod:`stepswitch.review.replay` plays it on a workflow.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import field, replace
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.errors import ReplayError, StateError
from stepswitch.review.file_kinds import not_a_run, read_run_doc
from stepswitch.runtime.model import OutputFunctionCall, OutputItem, OutputMessage
from stepswitch.runtime.record import RECORD_FORMAT, record_doc, run_doc, write_doc

__all__ = [
    "RECORD_FORMAT",
    "Recording",
    "ReplayError",
    "as_recording",
    "read_recording",
    "record_doc",
    "write_record",
]

_ROLES = ("user", "system", "developer", "assistant")



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
    workflow: str | None = None
    """The name of the workflow that made the run (a saved state and a record file say;
    an item list does not)."""

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
                "arguments": _arguments(raw.get("arguments"))}
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


def _arguments(value: Any) -> Any:
    """A call's arguments as JSON text: the Agents API lists them as an object."""
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return value or "{}"


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
    """A recording from a saved state, an item list, a ``record=`` file, or a recorded
    case (``run --record NAME.trail.json``: the trail inside it)."""
    try:
        doc, text = read_run_doc(text)
    except ValueError as exc:
        raise ReplayError(str(exc)) from None
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
        return replace(_build(records, None, "state", decisions=own_decisions),
                       workflow=state.workflow)
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
        made_by = doc.get("workflow")
        return replace(_build(records, start, "record", history, _read_decisions(doc)),
                       workflow=made_by if isinstance(made_by, str) else None)
    if isinstance(doc, dict):
        from stepswitch.review.trail_agents import is_agents_trail

        if is_agents_trail(doc):  # a session dump or a cursor page: its items list
            doc = doc["items"] if "session" in doc else doc["data"]
    if not isinstance(doc, list):
        raise ReplayError(not_a_run(doc))
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


def as_recording(trail: Any) -> Recording:
    """``trail`` as a :class:`Recording`: one already, a path, JSON text, a ``RunState``
    or a list of items (records or item objects)."""
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
