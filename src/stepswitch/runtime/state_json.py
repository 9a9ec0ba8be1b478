"""``RunState`` ⇄ JSON: versioned, no pickle, no eval, fails closed.

The document is ``{"format": "stepswitch.run_state", "version": 1, "body": {...},
"digest": "sha256:…"}``. The digest covers the canonical JSON of the body (keys
sorted, no spaces); with a key it is an HMAC (``hmac-sha256:…``), so only holders of
the key can write a state the reader accepts. Without a key it still catches
truncation, edits and corruption. Every field is read with its type checked;
anything unknown or missing is a ``StateError`` that names the field.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from stepswitch._json import JSONTextError, dumps, loads
from stepswitch.errors import StateError
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    ResponsesItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import (
    InputItem,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputResponsesItem,
)
from stepswitch.runtime.state import (
    ApprovalDecision,
    FanState,
    FlowState,
    PendingAppend,
    PendingTurn,
    RunState,
    SessionPin,
)
from stepswitch.runtime.state_check import check_structure

__all__ = ["FORMAT", "STATE_VERSION", "dump_state", "item_from_json", "item_to_json", "load_state"]

FORMAT = "stepswitch.run_state"
STATE_VERSION = 1

_ITEM_FIELDS: dict[str, tuple[type[Any], tuple[str, ...]]] = {
    "user_input_item": (UserInputItem, ("content", "role")),
    "message_output_item": (MessageOutputItem, ("agent", "content", "refusal")),
    "tool_call_item": (ToolCallItem, ("agent", "name", "call_id", "arguments")),
    "tool_call_output_item": (
        ToolCallOutputItem,
        ("agent", "call_id", "output", "name", "is_error"),
    ),
    "handoff_call_item": (HandoffCallItem, ("agent", "name", "call_id", "arguments")),
    "handoff_output_item": (
        HandoffOutputItem,
        ("agent", "call_id", "output", "source_agent", "target_agent"),
    ),
    "tool_approval_item": (
        ToolApprovalItem,
        ("agent", "name", "call_id", "arguments", "run_path"),
    ),
    "responses_item": (ResponsesItem, ("agent", "item")),
}
_OPTIONAL = {"refusal"}
_PATHS = {"run_path"}
_OBJECTS = {"item"}


def dump_state(state: RunState, *, key: bytes | None = None, indent: int | None = None) -> str:
    body = _body(state)
    try:  # a lone surrogate is written as its escape and read back as itself
        doc = {
            "format": FORMAT,
            "version": STATE_VERSION,
            "body": body,
            "digest": _digest(body, key),
        }
        return dumps(doc, indent=indent, sort_keys=True)
    except JSONTextError as exc:
        raise StateError(f"the run cannot be saved: {exc}") from None


def load_state(text: str | bytes, *, key: bytes | None = None) -> RunState:
    if not isinstance(text, str | bytes | bytearray):
        hint = " (json.dumps it, or read the file's text)" if isinstance(text, dict) else ""
        raise StateError(f"a saved state is the JSON text to_json() wrote (str or bytes), "
                         f"got {type(text).__name__}{hint}")
    try:
        doc = loads(text)  # limits: a hand-edited file may nest deep or hold huge numbers
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StateError(
            f"the saved state is not valid JSON (truncated or corrupted?): {exc}"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StateError(f"not a stepswitch run state: expected format {FORMAT!r}")
    version = doc.get("version")
    if version != STATE_VERSION:
        raise StateError(
            f"unknown run state version {version!r}: this stepswitch reads version "
            f"{STATE_VERSION}"
        )
    body = doc.get("body")
    if not isinstance(body, dict):
        raise StateError("the saved state has no body")
    digest = doc.get("digest")
    if not isinstance(digest, str):
        raise StateError("the saved state has no digest")
    if key is None and digest.startswith("hmac-"):
        raise StateError("the saved state is signed: pass the key to read it")
    if not hmac.compare_digest(digest, _digest(body, key)):
        raise StateError(
            "the saved state's digest does not match its content: it was modified, "
            "truncated or signed with another key"
        )
    state = _state(body, "body")
    check_structure(state)
    return state


def _digest(body: dict[str, Any], key: bytes | None) -> str:
    canonical = dumps(body, sort_keys=True, separators=(",", ":"))
    data = canonical.encode("utf-8")
    if key is None:
        return "sha256:" + hashlib.sha256(data).hexdigest()
    return "hmac-sha256:" + hmac.new(key, data, hashlib.sha256).hexdigest()


# -- writing -------------------------------------------------------------------------------


def _pending(pending: PendingTurn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "agent": pending.agent,
        "start": pending.start,
        "output": [_output(o) for o in pending.output],
    }
    if pending.disabled:  # written only when a gate was shut: older states read the same
        out["disabled"] = sorted(pending.disabled)
    return out


def _body(state: RunState) -> dict[str, Any]:
    body: dict[str, Any] = {
        "workflow": state.workflow,
        "status": state.status,
        "input": [_item(i) for i in state.input],
        "items": [_item(i) for i in state.items],
        "current_agent": state.current_agent,
        "current_turn": state.current_turn,
        "max_turns": state.max_turns,
        "pending": None if state.pending is None else _pending(state.pending),
        "decisions": {
            k: {"approved": d.approved, "message": d.message}
            for k, d in sorted(state.decisions.items())
        },
        "always": _always(state.always),
        "nested": {k: _body(v) for k, v in sorted(state.nested.items())},
        "history": None if state.history is None else [_item(i) for i in state.history],
        "history_from": state.history_from,
        "depth": state.depth,
    }
    if state.trace_context is not None:  # only traced runs carry one
        body["trace_context"] = state.trace_context
    if state.run_id is not None:
        body["run_id"] = state.run_id
    if state.session is not None:  # only runs taken with a session carry a pin
        body["session"] = _pin(state.session)
    if state.flow is not None:  # only a flow's state has the key: others read as before
        body["flow"] = _flow(state.flow)
    if state.model_calls is not None:
        body["model_calls"] = state.model_calls
    if state.tool_uses:  # only a run whose budgeted tools ran carries the key
        body["tool_uses"] = dict(sorted(state.tool_uses.items()))
    if state.spent_usd:  # only a run priced under a cost ceiling carries the key
        body["spent_usd"] = state.spent_usd
    if any(state.usage):  # only a run that reported usage carries the key
        body["usage"] = list(state.usage)
    if state.resumed:  # only a state a run has taken carries the key
        body["resumed"] = True
    return body


def _pin(pin: SessionPin) -> dict[str, Any]:
    p = pin.pending
    return {
        "session_id": pin.session_id,
        "version": pin.version,
        "synced": pin.synced,
        "input_saved": pin.input_saved,
        "pending": None if p is None else {
            "operation_id": p.operation_id,
            "items": [_item(i) for i in p.items],
            "expected_version": p.expected_version,
            "current_agent": p.current_agent,
            "synced": p.synced,
        },
    }


def _read_pin(raw: Any, where: str, n_items: int) -> SessionPin:
    if not isinstance(raw, dict):
        raise StateError(f"the saved state's {where} is not an object")
    synced = _get(raw, "synced", int, where)
    if not 0 <= synced <= n_items:
        raise StateError(f"the saved state's {where}.synced {synced} is out of range "
                         f"(the state has {n_items} items)")
    version = _get(raw, "version", int, where)
    if version < 0:
        raise StateError(f"the saved state's {where}.version {version} is negative")
    pending = None
    p = raw.get("pending")
    if p is not None:
        w = f"{where}.pending"
        if not isinstance(p, dict):
            raise StateError(f"the saved state's {w} is not an object")
        expected = p.get("expected_version")
        if expected is not None and (not isinstance(expected, int) or isinstance(expected, bool)):
            raise StateError(f"the saved state's {w}.expected_version has the wrong type")
        agent = p.get("current_agent")
        if agent is not None and not isinstance(agent, str):
            raise StateError(f"the saved state's {w}.current_agent has the wrong type")
        upto = _get(p, "synced", int, w)
        if not synced <= upto <= n_items:
            raise StateError(f"the saved state's {w}.synced {upto} is out of range")
        pending = PendingAppend(
            operation_id=_get(p, "operation_id", str, w),
            items=tuple(_read_item(x, f"{w}.items[{i}]")
                        for i, x in enumerate(_get(p, "items", list, w))),
            expected_version=expected,
            current_agent=agent,
            synced=upto,
        )
    return SessionPin(
        session_id=_get(raw, "session_id", str, where),
        version=version,
        synced=synced,
        input_saved=_get(raw, "input_saved", bool, where),
        pending=pending,
    )


def _always(always: dict[tuple[str, str], bool]) -> dict[str, dict[str, bool]]:
    """``{agent: {tool: approved}}``: "always" decisions are per agent and tool."""
    out: dict[str, dict[str, bool]] = {}
    for (agent, tool), approved in sorted(always.items()):
        out.setdefault(agent, {})[tool] = approved
    return out


def _item(item: InputItem) -> dict[str, Any]:
    fields = _ITEM_FIELDS[item.type][1]
    out: dict[str, Any] = {"type": item.type}
    for name in fields:
        value = getattr(item, name)
        out[name] = list(value) if name in _PATHS else value
    if type(item) is UserInputItem and item.parts is not None:  # only multimodal input
        out["parts"] = list(item.parts)
    return out


def _output(item: OutputItem) -> dict[str, Any]:
    if type(item) is OutputFunctionCall:
        return {"type": "function_call", "name": item.name, "arguments": item.arguments,
                "call_id": item.call_id}
    if type(item) is OutputResponsesItem:
        return {"type": "responses_item", "item": item.item}
    assert type(item) is OutputMessage
    return {"type": "message", "content": item.content, "refusal": item.refusal}


# -- reading -------------------------------------------------------------------------------


def _get(d: dict[str, Any], name: str, tp: type | tuple[type, ...], where: str) -> Any:
    if name not in d:
        raise StateError(f"the saved state lacks {where}.{name}")
    value = d[name]
    if not isinstance(value, tp) or (isinstance(value, bool) and tp is int):
        raise StateError(f"the saved state's {where}.{name} has the wrong type")
    return value


def _flow(flow: FlowState) -> dict[str, Any]:
    fan = flow.fan
    body: dict[str, Any] = {
        "node": flow.node,
        "value": flow.value,
        "uses": dict(sorted(flow.uses.items())),
        "done": flow.done,
        "fan": None if fan is None else {
            "source": fan.source,
            "elements": list(fan.elements),
            "results": {str(i): v for i, v in sorted(fan.results.items())},
        },
    }
    if flow.spent is not None:  # only a stopped-at-a-budget state has the key
        body["spent"] = flow.spent
    return body


def _read_flow(raw: Any, where: str) -> FlowState:
    if not isinstance(raw, dict):
        raise StateError(f"the saved state's {where} is not an object")
    uses = _get(raw, "uses", dict, where)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
               for v in uses.values()):
        raise StateError(f"the saved state's {where}.uses has the wrong type")
    done = _get(raw, "done", int, where)
    if done < 0:
        raise StateError(f"the saved state's {where}.done is negative")
    fan_raw = raw.get("fan")
    fan = None
    if fan_raw is not None:
        w = f"{where}.fan"
        if not isinstance(fan_raw, dict):
            raise StateError(f"the saved state's {w} is not an object")
        results: dict[int, Any] = {}
        for k, v in _get(fan_raw, "results", dict, w).items():
            if not k.isdigit():
                raise StateError(f"the saved state's {w}.results has a branch index {k!r}")
            results[int(k)] = v
        fan = FanState(
            source=_get(fan_raw, "source", str, w),
            elements=list(_get(fan_raw, "elements", list, w)),
            results=results,
        )
    if "value" not in raw:
        raise StateError(f"the saved state lacks {where}.value")
    spent = raw.get("spent")
    if spent is not None and not isinstance(spent, str):
        raise StateError(f"the saved state's {where}.spent has the wrong type")
    return FlowState(
        node=_get(raw, "node", str, where),
        value=raw["value"],
        uses=dict(uses),
        done=done,
        fan=fan,
        spent=spent,
    )


def _state(body: Any, where: str) -> RunState:
    if not isinstance(body, dict):
        raise StateError(f"the saved state's {where} is not an object")
    status = _get(body, "status", str, where)
    if status not in ("interrupted", "stopped", "finished"):
        raise StateError(f"the saved state's {where}.status {status!r} is unknown")
    max_turns = body.get("max_turns")
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool)):
        raise StateError(f"the saved state's {where}.max_turns has the wrong type")
    pending_raw = body.get("pending")
    pending = None
    if pending_raw is not None:
        if not isinstance(pending_raw, dict):
            raise StateError(f"the saved state's {where}.pending is not an object")
        outputs = _get(pending_raw, "output", list, f"{where}.pending")
        pending = PendingTurn(
            agent=_get(pending_raw, "agent", str, f"{where}.pending"),
            output=tuple(_read_output(o, f"{where}.pending.output[{i}]")
                         for i, o in enumerate(outputs)),
            start=_get(pending_raw, "start", int, f"{where}.pending"),
            disabled=_disabled(pending_raw, f"{where}.pending"),
        )
    decisions: dict[str, ApprovalDecision] = {}
    for call_id, d in _get(body, "decisions", dict, where).items():
        w = f"{where}.decisions[{call_id!r}]"
        if not isinstance(d, dict):
            raise StateError(f"the saved state's {w} is not an object")
        message = d.get("message")
        if message is not None and not isinstance(message, str):
            raise StateError(f"the saved state's {w}.message has the wrong type")
        decisions[call_id] = ApprovalDecision(_get(d, "approved", bool, w), message)
    always: dict[tuple[str, str], bool] = {}
    for agent, tools in _get(body, "always", dict, where).items():
        if not isinstance(tools, dict) or not all(
            isinstance(t, str) and isinstance(v, bool) for t, v in tools.items()
        ):
            raise StateError(
                f"the saved state's {where}.always[{agent!r}] has the wrong type: expected "
                "{tool name: true/false} per agent"
            )
        always.update(((agent, t), v) for t, v in tools.items())
    nested = {
        k: _state(v, f"{where}.nested[{k!r}]")
        for k, v in _get(body, "nested", dict, where).items()
    }
    history_raw = body.get("history")
    history = None
    if history_raw is not None:
        if not isinstance(history_raw, list):
            raise StateError(f"the saved state's {where}.history has the wrong type")
        history = tuple(_read_item(x, f"{where}.history[{i}]") for i, x in enumerate(history_raw))
    items = [
        _read_item(x, f"{where}.items[{i}]")
        for i, x in enumerate(_get(body, "items", list, where))
    ]
    for i, item in enumerate(items):
        if type(item) is UserInputItem:
            raise StateError(f"the saved state's {where}.items[{i}] is an input item")
    run_id = body.get("run_id")
    if run_id is not None and not isinstance(run_id, str):
        raise StateError(f"the saved state's {where}.run_id has the wrong type")
    pin = None
    if body.get("session") is not None:
        pin = _read_pin(body["session"], f"{where}.session", len(items))
    flow_raw = body.get("flow")
    flow = None if flow_raw is None else _read_flow(flow_raw, f"{where}.flow")
    trace_context = body.get("trace_context")
    if trace_context is not None and not isinstance(trace_context, str):
        raise StateError(f"the saved state's {where}.trace_context has the wrong type")
    model_calls = None  # a state saved before the count was kept has no key
    if "model_calls" in body:
        model_calls = _get(body, "model_calls", int, where)
    tool_uses: dict[str, int] = {}
    if "tool_uses" in body:
        raw_uses = _get(body, "tool_uses", dict, where)
        for name, n in raw_uses.items():
            if type(n) is not int or n < 0:
                raise StateError(f"the saved state's {where}.tool_uses[{name!r}] is not a "
                                 "count (an int >= 0)")
            tool_uses[name] = n
    spent_usd = 0.0
    if "spent_usd" in body:
        spent_usd = _get(body, "spent_usd", (int, float), where)
        if isinstance(spent_usd, bool) or not 0 <= spent_usd < float("inf"):
            raise StateError(f"the saved state's {where}.spent_usd is not an amount (a "
                             "number >= 0)")
    usage = (0, 0, 0, 0)
    if "usage" in body:
        raw_usage = _get(body, "usage", list, where)
        if len(raw_usage) != 4 or any(type(n) is not int or n < 0 for n in raw_usage):
            raise StateError(f"the saved state's {where}.usage is not four counts (requests, "
                             "input, output and total tokens; ints >= 0)")
        usage = (raw_usage[0], raw_usage[1], raw_usage[2], raw_usage[3])
    resumed = False
    if "resumed" in body:
        resumed = _get(body, "resumed", bool, where)
    return RunState(
        workflow=_get(body, "workflow", str, where),
        input=tuple(
            _read_item(x, f"{where}.input[{i}]")
            for i, x in enumerate(_get(body, "input", list, where))
        ),
        items=items,  # type: ignore[arg-type]
        current_agent=_get(body, "current_agent", str, where),
        current_turn=_get(body, "current_turn", int, where),
        max_turns=max_turns,
        pending=pending,
        decisions=decisions,
        always=always,
        nested=nested,
        history=history,
        history_from=_get(body, "history_from", int, where),
        depth=_get(body, "depth", int, where),
        status=status,
        trace_context=trace_context,
        run_id=run_id,
        session=pin,
        flow=flow,
        model_calls=model_calls,
        tool_uses=tool_uses,
        spent_usd=float(spent_usd),
        usage=usage,
        resumed=resumed,
    )


def _read_item(raw: Any, where: str) -> InputItem:
    if not isinstance(raw, dict):
        raise StateError(f"the saved state's {where} is not an object")
    kind = raw.get("type")
    if kind not in _ITEM_FIELDS:
        raise StateError(f"the saved state's {where} has unknown item type {kind!r}")
    cls, fields = _ITEM_FIELDS[kind]
    kwargs: dict[str, Any] = {}
    for name in fields:
        if name in _OPTIONAL:
            value = raw.get(name)
            if value is not None and not isinstance(value, str):
                raise StateError(f"the saved state's {where}.{name} has the wrong type")
        elif name in _PATHS:
            path = raw.get(name, [])
            if not isinstance(path, list) or not all(isinstance(p, str) for p in path):
                raise StateError(
                    f"the saved state's {where}.{name} has the wrong type: expected a list "
                    "of call ids"
                )
            value = tuple(path)
        elif name in _OBJECTS:
            value = _responses_object(raw.get(name), f"{where}.{name}")
        else:
            value = _get(raw, name, bool if name == "is_error" else str, where)
        kwargs[name] = value
    if kind == "user_input_item" and kwargs["role"] not in (
        "user", "system", "developer", "assistant"
    ):
        raise StateError(f"the saved state's {where}.role is unknown")
    if kind == "user_input_item" and "parts" in raw:
        kwargs["parts"] = _parts(raw["parts"], f"{where}.parts")
    item: InputItem = cls(**kwargs)
    return item


def _responses_object(value: Any, where: str) -> dict[str, Any]:
    """A Responses item kept verbatim: a JSON object with a string ``type``."""
    if type(value) is not dict or not isinstance(value.get("type"), str):
        raise StateError(
            f"the saved state's {where} has the wrong type: expected a Responses item "
            "(an object with a string type)"
        )
    return value


def _parts(value: Any, where: str) -> tuple[dict[str, Any], ...]:
    """A message's content parts: a list of objects, each with a string ``type``."""
    if not isinstance(value, list) or not all(
        type(p) is dict and isinstance(p.get("type"), str) for p in value
    ):
        raise StateError(
            f"the saved state's {where} has the wrong type: expected a list of content "
            "parts (objects with a string type)"
        )
    return tuple(value)


def _read_output(raw: Any, where: str) -> OutputItem:
    if not isinstance(raw, dict):
        raise StateError(f"the saved state's {where} is not an object")
    kind = raw.get("type")
    if kind == "function_call":
        return OutputFunctionCall(
            name=_get(raw, "name", str, where),
            arguments=_get(raw, "arguments", str, where),
            call_id=_get(raw, "call_id", str, where),
        )
    if kind == "message":
        refusal = raw.get("refusal")
        if refusal is not None and not isinstance(refusal, str):
            raise StateError(f"the saved state's {where}.refusal has the wrong type")
        return OutputMessage(content=_get(raw, "content", str, where), refusal=refusal)
    if kind == "responses_item":
        return OutputResponsesItem(_responses_object(raw.get("item"), f"{where}.item"))
    raise StateError(f"the saved state's {where} has unknown output type {kind!r}")


# -- single items (conversation stores keep each item as one of these objects) --------------


def item_to_json(item: InputItem) -> dict[str, Any]:
    """One item as the JSON object a ``RunState`` holds it as."""
    if getattr(item, "type", None) not in _ITEM_FIELDS:
        raise StateError(f"cannot store {type(item).__name__}: not a run item")
    return _item(item)


def item_from_json(raw: Any, where: str) -> InputItem:
    """The item of a JSON object written by :func:`item_to_json`; ``StateError`` names
    ``where`` when it does not parse."""
    return _read_item(raw, where)


def _disabled(raw: dict[str, Any], where: str) -> frozenset[str]:
    names = raw.get("disabled", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise StateError(f"the saved state's {where}.disabled is not a list of names")
    return frozenset(names)
