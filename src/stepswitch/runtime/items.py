"""Run items: the only state of a run (DESIGN §4, invariant 1).

Each item is a frozen value tagged by ``type``, as in the Agents SDK, and carries
``agent``: the name of the agent whose turn made it. Calls carry ``name``,
``call_id`` and ``arguments`` (the raw JSON text the model sent); outputs carry the
same ``call_id`` and ``output``, the text the model sees next turn. A
``ResponsesItem`` carries a Responses API item stepswitch does not model (a reasoning
item, a hosted-tool call, ...) verbatim, so the next request sends it back as it came.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal, TypeAlias

from stepswitch._dataclass import dataclass

__all__ = [
    "HandoffCallItem",
    "HandoffOutputItem",
    "MessageOutputItem",
    "ResponsesItem",
    "RunItem",
    "ToolApprovalItem",
    "ToolCallItem",
    "ToolCallOutputItem",
    "UserInputItem",
]


@dataclass(frozen=True, slots=True)
class UserInputItem:
    """A user message given as run input (not part of ``new_items``).

    ``content`` is its text. ``parts``, when not None, are the message's Responses
    content parts exactly as given (text, ``input_image``, ``input_file``, ...): what
    the model is sent instead of ``content``; ``content`` is then their text joined.
    """

    content: str
    role: Literal["user", "system", "developer", "assistant"] = "user"
    parts: tuple[dict[str, Any], ...] | None = None
    type: Literal["user_input_item"] = "user_input_item"


@dataclass(frozen=True, slots=True)
class MessageOutputItem:
    """Assistant text (or a refusal) produced by ``agent``'s turn."""

    agent: str
    content: str
    refusal: str | None = None
    type: Literal["message_output_item"] = "message_output_item"


@dataclass(frozen=True, slots=True)
class ToolCallItem:
    """The model proposed a call of a function tool or agent tool."""

    agent: str
    name: str
    call_id: str
    arguments: str
    type: Literal["tool_call_item"] = "tool_call_item"


@dataclass(frozen=True, slots=True)
class ToolCallOutputItem:
    """The trusted side's observation for ``call_id``: what the model sees next turn.

    ``output`` is the text sent to the model; ``value`` the Python value the tool
    returned (not compared, not saved in a ``RunState``).
    """

    agent: str
    call_id: str
    output: str
    name: str = ""
    is_error: bool = False
    value: Any = field(default=None, compare=False, repr=False)
    type: Literal["tool_call_output_item"] = "tool_call_output_item"


@dataclass(frozen=True, slots=True)
class HandoffCallItem:
    """The model called a handoff tool (``transfer_to_<agent>``)."""

    agent: str
    name: str
    call_id: str
    arguments: str
    type: Literal["handoff_call_item"] = "handoff_call_item"


@dataclass(frozen=True, slots=True)
class HandoffOutputItem:
    """The handoff took effect: ``output`` is ``{"assistant": "<target>"}``."""

    agent: str
    call_id: str
    output: str
    source_agent: str
    target_agent: str
    type: Literal["handoff_output_item"] = "handoff_output_item"


@dataclass(frozen=True, slots=True)
class ToolApprovalItem:
    """A call that waits for a human's yes or no before it may run.

    ``run_path`` says whose call it is: the call ids of the agent-tool calls whose
    nested runs hold it, outermost first; ``()`` for a call of the run itself. A
    decision is keyed by ``(run_path, call_id)``, so a nested run reusing a call id
    of its caller (servers that number calls per response do) never shares it.
    """

    agent: str
    name: str
    call_id: str
    arguments: str
    run_path: tuple[str, ...] = ()
    type: Literal["tool_approval_item"] = "tool_approval_item"


@dataclass(frozen=True, slots=True)
class ResponsesItem:
    """A Responses API item stepswitch does not model, kept verbatim: a reasoning item
    (with its ``id``, summary and ``encrypted_content``) the model returned in
    ``agent``'s turn, or an input item of that kind given to the run (``agent`` is then
    ``""``). The Responses adapter sends ``item`` back unchanged, in its place; the
    Chat Completions adapter leaves it out (that API has no such items). ``item`` is a
    JSON object: do not change it.
    """

    agent: str
    item: dict[str, Any]
    type: Literal["responses_item"] = "responses_item"


RunItem: TypeAlias = (
    MessageOutputItem
    | ToolCallItem
    | ToolCallOutputItem
    | HandoffCallItem
    | HandoffOutputItem
    | ToolApprovalItem
    | ResponsesItem
)
"""Every item a run can produce."""
