"""The Agents API's wire format as both sides of stepswitch speak it: the adapter
(:mod:`stepswitch.models.agents_api`) and the scripted server
(:mod:`stepswitch.models.agents_api_server`). Not public API.

Kept here once: the input events (``agent.session.input.tool_result``, ``…input.message``),
the pending-call race's 400 body, the idempotency key of a write-back, the SSE framing,
and the *pin*: the item a run records for each turn it took on a session, so that a
saved state, a Temporal history or a conversation session holds the session id, the
``(turn_id, call_id)`` pairs still to answer and the usage so far.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from stepswitch._agents_api import PIN_TYPE
from stepswitch._dataclass import dataclass

__all__ = [
    "BETA_HEADER",
    "PIN_TYPE",
    "Pin",
    "arguments_text",
    "digest",
    "input_key",
    "input_message",
    "is_pin",
    "race_message",
    "sse_frame",
    "tool_result",
    "write_back_key",
]

BETA_HEADER = {"OpenAI-Beta": "agents=v1"}
"""Every call of the API carries it (the client adds it itself)."""



def race_message(call_id: str) -> str:
    """The 400 a write-back gets when the server has not registered the pending call yet
    (the client's helper retries exactly this one, after 0.1/0.3/0.6 s)."""
    return f"Unknown pending tool call: {call_id}"


def write_back_key(session_id: str, turn_id: str, call_id: str) -> str:
    """The ``Idempotency-Key`` of one call's write-back: derived from the pair, so every
    retry of it, in this process or after a resume in another, sends the same key."""
    raw = f"{session_id}\x00{turn_id}\x00{call_id}".encode()
    return "stepswitch-" + hashlib.sha256(raw).hexdigest()[:40]


def input_key(session_id: str, after: str) -> str:
    """The ``Idempotency-Key`` of a user message sent after item ``after`` of a session."""
    raw = f"{session_id}\x00input\x00{after}".encode()
    return "stepswitch-" + hashlib.sha256(raw).hexdigest()[:40]


def digest(value: Any) -> str:
    """A short, stable digest of a JSON value (what a session's config was set to)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def tool_result(turn_id: str, call_id: str, output: str, failed: bool) -> dict[str, Any]:
    """The write-back of one call: ``success: false`` with the error text for a failure."""
    event: dict[str, Any] = {"type": "agent.session.input.tool_result", "turn_id": turn_id,
                             "call_id": call_id, "success": not failed}
    if failed:
        event["error"] = output
    else:
        event["output"] = output
    return event


def input_message(texts: Iterable[str | tuple[dict[str, Any], ...]]) -> dict[str, Any]:
    """User messages as one ``agent.session.input.message`` event; each message is a text
    or its content parts as given (``input_text``, ``input_image``)."""
    return {"type": "agent.session.input.message", "input": [
        {"role": "user", "type": "message",
         "content": [{"type": "input_text", "text": t}] if isinstance(t, str) else list(t)}
        for t in texts
    ]}


def arguments_text(arguments: Any) -> str:
    """A call's arguments as the loop takes them (raw text): the API sends a JSON object,
    written as ``json.dumps`` writes one; a string (a model's malformed output) as is."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments)


def sse_frame(event: Mapping[str, Any]) -> bytes:
    """One server-sent event: ``event: TYPE`` and ``data: JSON``."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def is_pin(item: Mapping[str, Any]) -> bool:
    return item.get("type") == PIN_TYPE


@dataclass(frozen=True, slots=True)
class Pin:
    """Where a run stands on a session after one of its turns.

    ``calls`` are the ``(turn_id, call_id)`` pairs the session asked for (read from its
    ``required_actions``, never from the item history); empty when the session went idle.
    ``after`` is the id of the last session item the turn saw: a resume reads what came
    later from there. ``config``, ``text`` and ``instructions`` are digests of what the
    session's agent was last set to (the part an update can change, the output format,
    the instructions); ``input_tokens``/``output_tokens`` the session's usage so far (each
    turn reports the difference)."""

    session_id: str
    agent: str
    calls: tuple[tuple[str, str], ...]
    after: str | None
    config: str
    text: str
    instructions: str
    input_tokens: int = 0
    output_tokens: int = 0

    def to_item(self) -> dict[str, Any]:
        return {
            "type": PIN_TYPE,
            "session_id": self.session_id,
            "agent": self.agent,
            "calls": [{"turn_id": t, "call_id": c} for t, c in self.calls],
            "after": self.after,
            "config": self.config,
            "text": self.text,
            "instructions": self.instructions,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Pin | None:
        """The pin an item records; None when it is not a well-formed pin."""
        try:
            calls = tuple((str(c["turn_id"]), str(c["call_id"])) for c in item["calls"])
            usage = item.get("usage") or {}
            after = item.get("after")
            return cls(
                str(item["session_id"]), str(item["agent"]), calls,
                after if isinstance(after, str) else None, str(item["config"]),
                str(item["text"]), str(item["instructions"]), int(usage.get("input_tokens", 0)),
                int(usage.get("output_tokens", 0)),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
