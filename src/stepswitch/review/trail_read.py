"""Reading a trail: a saved ``RunState``, a ``record=`` file (``run --record``; a recorded
case is read for the recording it holds) or a JSON list of items, as a frozen
:class:`Trail` (see :mod:`stepswitch.review.trail`, which checks it).

A list holds items in the Responses API input format (what the Agents SDK's
``result.to_input_list()`` gives; :func:`responses_items` writes one from stepswitch
items), or stepswitch's own item records (``{"type": "tool_call_item", "agent": …}``),
which name the agent of each item. Anything that is not a trail is a
:class:`TrailError` with a one-line cause naming the first bad item.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Literal, NamedTuple

from stepswitch._dataclass import dataclass
from stepswitch.errors import StateError, TrailError
from stepswitch.review.file_kinds import not_a_run, read_run_doc
from stepswitch.runtime.record import RECORD_FORMAT

__all__ = [
    "ItemKind",
    "Trail",
    "TrailError",
    "TrailItem",
    "read_trail",
    "responses_items",
    "trail_from_state",
]

ItemKind = Literal["input", "message", "call", "output", "approval", "reasoning", "other"]


class TrailItem(NamedTuple):
    """One item of a trail, reduced to what the checks read (an immutable tuple: a
    100,000-item trail builds 100,000 of them, and a tuple is the cheapest frozen
    value)."""

    position: int
    """Position in the trail (a state's input items first, then its items)."""
    where: str
    """How to find it in the file: ``[12]`` in a list, ``items[3]`` in a state."""
    kind: ItemKind
    call_id: str | None = None
    name: str | None = None
    """The tool a call or approval names."""
    agent: str | None = None
    """The agent whose turn made it, when the format records it."""
    handoff: bool = False
    """A handoff call or a handoff's output, when the format says so."""
    target: str | None = None
    """For the output of a handoff that was taken: the agent it moved to."""
    is_error: bool | None = None
    """For an output: whether it reports an error (None when the format cannot say)."""
    item_id: str | None = None
    output: str | None = None
    run_path: tuple[str, ...] = ()
    """For an approval copied from a nested run: the agent-tool calls leading to it."""


@dataclass(frozen=True, slots=True)
class Trail:
    """A recorded run, read from a file."""

    source: Literal["items", "state", "recording"]
    items: tuple[TrailItem, ...]
    pending_start: int | None = None
    """For an interrupted state: the trail index where the pending turn begins."""
    pending_calls: tuple[str, ...] = ()
    """For an interrupted state: the call ids of the pending turn's response."""
    decisions: tuple[str, ...] = ()
    """Call ids that a human decided on (a state's ``decisions``)."""
    max_turns: int | None = None
    """A state's own turn budget (it may differ from the workflow's after a resume)."""
    current_agent: str | None = None
    workflow: str | None = None
    status: str | None = None
    nested: tuple[tuple[str, Trail], ...] = ()
    """Paused nested runs of agent tools, by the outer call id."""
    prefix: str = ""
    """Where this trail sits in the file (``nested['call_3'].`` for a nested run)."""
    refused: str | None = None
    """Why the runtime refuses to resume this state, when it does (TR110)."""
    start_agent: str | None = None
    """For a state: the agent the run started at (the agent of its first item; with no
    item yet, where it is). A run on a session starts where the conversation stood,
    which need not be the entry."""


# -- reading -------------------------------------------------------------------------------

_STATE_FORMAT = "stepswitch.run_state"
_CALLS = {"function_call", "custom_tool_call", "computer_call", "local_shell_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output", "computer_call_output",
            "local_shell_call_output"}
_OTHER = frozenset({
    "file_search_call", "web_search_call", "image_generation_call", "code_interpreter_call",
    "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "item_reference", "compaction", "shell_call", "shell_call_output", "apply_patch_call",
    "apply_patch_call_output", "tool_search_call", "tool_search_output",
})
_ROLES = frozenset({"user", "system", "developer", "assistant"})


def read_trail(text: str | bytes, *, key: bytes | None = None) -> Trail:
    """A trail from a saved ``RunState`` (JSON), a ``record=`` file (``run --record
    FILE``), a recorded case holding one of them, or a JSON list of items."""
    try:
        doc, text = read_run_doc(text)
    except ValueError as exc:
        raise TrailError(str(exc)) from None
    if isinstance(doc, dict) and doc.get("format") == _STATE_FORMAT:
        from stepswitch.runtime.state_json import load_state

        try:
            return trail_from_state(load_state(text, key=key))
        except StateError as exc:
            refused = str(exc)
        # The digest holds but the runtime's structural check refuses the state: read it
        # without that check, so the pins say where it went wrong (TR110 keeps the verdict).
        state = _unchecked_state(doc, key)
        if state is None:
            raise TrailError(f"not a readable run state: {refused}")
        trail = trail_from_state(state)
        return replace(trail, refused=refused)
    if isinstance(doc, dict) and doc.get("format") == RECORD_FORMAT:
        return _trail_from_record(doc)
    if not isinstance(doc, list):
        raise TrailError(not_a_run(doc))
    return Trail("items", tuple(_list_item(i, raw) for i, raw in enumerate(doc)))


def _trail_from_record(doc: dict[str, Any]) -> Trail:
    """The trail of a ``record=`` file: what the run was given (a session's earlier turns
    included), then the items it made. The run finished, so nothing is pending."""
    given, made = doc.get("input", []), doc.get("items")
    workflow, start = doc.get("workflow"), doc.get("start_agent")
    if (not isinstance(given, list) or not isinstance(made, list)
            or not (workflow is None or isinstance(workflow, str))
            or not (start is None or isinstance(start, str))):
        raise TrailError("a recording needs input and items lists, and workflow and "
                         "start_agent strings")
    items = [_list_item(i, raw, f"input[{i}]") for i, raw in enumerate(given)]
    base = len(items)
    items += [_list_item(base + i, raw, f"items[{i}]") for i, raw in enumerate(made)]
    return Trail("recording", tuple(items), workflow=workflow, start_agent=start)


def _unchecked_state(doc: dict[str, Any], key: bytes | None) -> Any:
    """The state of a document whose envelope and digest are sound, read without the
    runtime's structural check; None when even that fails."""
    from stepswitch.runtime import state_json

    body, digest = doc.get("body"), doc.get("digest")
    if doc.get("version") != state_json.STATE_VERSION or not isinstance(body, dict):
        return None
    if not isinstance(digest, str) or (key is None and digest.startswith("hmac-")):
        return None
    if not hmac.compare_digest(digest, state_json._digest(body, key)):
        return None
    try:
        return state_json._state(body, "body")
    except StateError:
        return None


def _str(raw: dict[str, Any], name: str, where: str, kind: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str):
        what = "missing" if value is None else f"not a string ({type(value).__name__})"
        raise TrailError(f"item {where}: {kind} item's {name} is {what}")
    return value


def _opt_str(raw: dict[str, Any], name: str) -> str | None:
    value = raw.get(name)
    return value if isinstance(value, str) else None


def _output_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _list_item(i: int, raw: Any, where: str | None = None) -> TrailItem:
    where = f"[{i}]" if where is None else where
    if not isinstance(raw, dict):
        raise TrailError(f"item {where}: expected an object, got {type(raw).__name__}")
    kind = raw.get("type")
    item_id = _opt_str(raw, "id")
    if kind is None or kind == "message":
        role = raw.get("role")
        if role not in _ROLES:
            raise TrailError(f"item {where}: neither a known item type nor a message with a "
                             f"role (got type {kind!r}, role {role!r})")
        # A model's message has a list of output parts; text given as input is a string.
        if role == "assistant" and isinstance(raw.get("content"), list):
            return TrailItem(i, where, "message", item_id=item_id)
        return TrailItem(i, where, "input", item_id=item_id)
    if not isinstance(kind, str):
        raise TrailError(f"item {where}: type is not a string")
    if kind in _CALLS:
        name = _opt_str(raw, "name") or kind.removesuffix("_call")
        namespace = _opt_str(raw, "namespace")
        if namespace:  # a tool of a tool_namespace (or a loaded deferred one), as we name it
            name = f"{namespace}.{name}"
        return TrailItem(i, where, "call", _str(raw, "call_id", where, kind), name,
                         item_id=item_id)
    if kind in _OUTPUTS:
        return TrailItem(i, where, "output", _str(raw, "call_id", where, kind),
                         output=_output_text(raw.get("output")), item_id=item_id)
    if kind == "reasoning":
        return TrailItem(i, where, "reasoning", item_id=item_id)
    if kind in _OTHER:
        return TrailItem(i, where, "other", item_id=item_id)
    if kind in _STEPSWITCH_KINDS:
        return _stepswitch_item(i, where, kind, raw)
    raise TrailError(f"item {where}: unknown item type {kind!r}")


_STEPSWITCH_KINDS = frozenset({
    "user_input_item", "message_output_item", "tool_call_item", "tool_call_output_item",
    "handoff_call_item", "handoff_output_item", "tool_approval_item", "responses_item",
})


def _stepswitch_item(i: int, where: str, kind: str, raw: dict[str, Any]) -> TrailItem:
    """An item as stepswitch writes it in a state (``tool_call_item`` …)."""
    if kind == "user_input_item":
        return TrailItem(i, where, "input")
    agent = _str(raw, "agent", where, kind)
    if kind == "responses_item":  # a Responses item kept verbatim (a reasoning item)
        inner = raw.get("item")
        inner = inner if isinstance(inner, dict) else {}
        what: ItemKind = "reasoning" if inner.get("type") == "reasoning" else "other"
        return TrailItem(i, where, what, agent=agent, item_id=_opt_str(inner, "id"))
    if kind == "message_output_item":
        return TrailItem(i, where, "message", agent=agent)
    call_id = _str(raw, "call_id", where, kind)
    if kind in ("tool_call_item", "handoff_call_item"):
        return TrailItem(i, where, "call", call_id, _str(raw, "name", where, kind), agent,
                         handoff=kind == "handoff_call_item")
    if kind == "tool_approval_item":
        path = raw.get("run_path") or ()
        return TrailItem(i, where, "approval", call_id, _str(raw, "name", where, kind), agent,
                         run_path=tuple(str(p) for p in path))
    if kind == "handoff_output_item":
        return TrailItem(i, where, "output", call_id, agent=agent, handoff=True,
                         target=_str(raw, "target_agent", where, kind), is_error=False,
                         output=_opt_str(raw, "output"))
    return TrailItem(i, where, "output", call_id, _opt_str(raw, "name"), agent,
                     is_error=raw.get("is_error") is True, output=_opt_str(raw, "output"))


def trail_from_state(state: Any, prefix: str = "") -> Trail:
    """The trail of a ``RunState`` (its nested runs' trails beside it)."""
    from stepswitch.runtime.state_json import _item

    items: list[TrailItem] = []
    for i, raw in enumerate(state.input):
        items.append(_stepswitch_item(len(items), f"{prefix}input[{i}]", raw.type, _item(raw)))
    base = len(items)
    own = state.items
    flow = state.flow
    if flow is not None and 0 <= flow.done <= len(own):
        # a flow's items past ``done`` are its paused node runs' (approvals lifted), each
        # checked as its nested trail, where its pending turn is known as pending
        own = own[: flow.done]
    for i, raw in enumerate(own):
        items.append(_stepswitch_item(len(items), f"{prefix}items[{i}]", raw.type, _item(raw)))
    pending_start = None
    pending_calls: tuple[str, ...] = ()
    if state.pending is not None:
        pending_start = base + state.pending.start
        pending_calls = tuple(o.call_id for o in state.pending.output
                              if getattr(o, "call_id", None) is not None)
    nested = tuple(
        (call_id, trail_from_state(child, f"{prefix}nested[{call_id!r}]."))
        for call_id, child in sorted(state.nested.items())
    )
    first = next((item.agent for item in items[base:] if item.agent is not None), None)
    return Trail("state", tuple(items), pending_start, pending_calls,
                 tuple(sorted(state.decisions)), state.max_turns, state.current_agent,
                 state.workflow, state.status, nested, prefix,
                 start_agent=first if first is not None else state.current_agent)


def responses_items(items: Iterable[Any]) -> list[dict[str, Any]]:
    """stepswitch items (``result.to_input_list()``) in the Responses API input format,
    one dict per item, order kept; approval requests are left out, as the SDK does."""
    out: list[dict[str, Any]] = []
    for item in items:
        kind = item.type
        if kind == "user_input_item":
            content = item.content if item.parts is None else [dict(p) for p in item.parts]
            out.append({"role": item.role, "content": content})
        elif kind == "responses_item":
            out.append(dict(item.item))
        elif kind == "message_output_item":
            part = ({"type": "refusal", "refusal": item.refusal} if item.refusal is not None
                    else {"type": "output_text", "text": item.content, "annotations": []})
            out.append({"type": "message", "role": "assistant", "content": [part]})
        elif kind in ("tool_call_item", "handoff_call_item"):
            out.append({"type": "function_call", "call_id": item.call_id, "name": item.name,
                        "arguments": item.arguments})
        elif kind in ("tool_call_output_item", "handoff_output_item"):
            out.append({"type": "function_call_output", "call_id": item.call_id,
                        "output": item.output})
        elif kind != "tool_approval_item":
            raise TypeError(f"not a stepswitch item: {item!r}")
    return out


