"""Stream events, in the SDK's shapes: raw model events, run items, agent changes.

Approval items are not streamed (as in the SDK): pending approvals are read from
the result's ``interruptions`` after the stream ends.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from stepswitch._dataclass import dataclass
from stepswitch.runtime.items import RunItem
from stepswitch.runtime.model import HOSTED_CALLS

__all__ = [
    "AgentUpdated",
    "AgentUpdatedStreamEvent",
    "FlowNodeStreamEvent",
    "RawResponsesStreamEvent",
    "RunItemStreamEvent",
    "StreamEvent",
    "item_event_name",
]


@dataclass(frozen=True, slots=True)
class AgentUpdated:
    """Loop-internal: the current agent became ``agent`` (start of run, or handoff)."""

    agent: str


@dataclass(frozen=True, slots=True)
class RawResponsesStreamEvent:
    """A provider event from a streaming model, passed through as it arrives."""

    data: Any
    type: Literal["raw_response_event"] = "raw_response_event"


@dataclass(frozen=True, slots=True)
class RunItemStreamEvent:
    """A new run item. ``name`` is the SDK's event name for its kind."""

    name: str
    item: RunItem
    type: Literal["run_item_stream_event"] = "run_item_stream_event"


@dataclass(frozen=True, slots=True)
class AgentUpdatedStreamEvent:
    """The current agent changed (first event of a run, then one per handoff)."""

    new_agent: str
    type: Literal["agent_updated_stream_event"] = "agent_updated_stream_event"


@dataclass(frozen=True, slots=True)
class FlowNodeStreamEvent:
    """A flow moved to ``node`` (an ``"agent"`` or a ``"step"``). A fan-out's branches
    are announced once, as ``each``, with ``count`` the number of elements."""

    node: str
    kind: Literal["agent", "step", "fan_out"]
    count: int | None = None
    type: Literal["flow_node_stream_event"] = "flow_node_stream_event"


StreamEvent: TypeAlias = (
    RawResponsesStreamEvent | RunItemStreamEvent | AgentUpdatedStreamEvent | FlowNodeStreamEvent
)

_NAMES = {
    "message_output_item": "message_output_created",
    "tool_call_item": "tool_called",
    "tool_call_output_item": "tool_output",
    "handoff_call_item": "handoff_requested",
    "handoff_output_item": "handoff_occured",
}


_VERBATIM = {
    "reasoning": "reasoning_item_created",
    "tool_search_call": "tool_search_called",
    "tool_search_output": "tool_search_output_created",
}
"""Verbatim Responses items the SDK streams under a name of their own; another hosted
tool's call (``web_search_call`` ...) is ``tool_called``, as in the SDK."""


def item_event_name(item: RunItem) -> str | None:
    """The SDK's event name for an item; None for items that are not streamed."""
    name = _NAMES.get(item.type)
    if name is None and item.type == "responses_item":
        kind = item.item.get("type")
        name = _VERBATIM.get(kind) if isinstance(kind, str) else None
        if name is None and kind in HOSTED_CALLS:
            return "tool_called"
    return name
