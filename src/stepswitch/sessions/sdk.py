"""Sessions across the OpenAI Agents SDK boundary, both ways.

* :func:`to_sdk_session` wraps a stepswitch session as the SDK's ``Session``
  protocol, so ``agents.Runner.run(agent, input, session=...)`` reads and writes the
  same conversation a stepswitch run does. Items cross as Responses input items.
* :func:`from_sdk_session` wraps an SDK session (SQLite, Redis, SQLAlchemy, …) so a
  stepswitch run can use it. **At-least-once only**: SDK sessions keep no version
  and no operation id, so the version is the item count and the compare is a
  separate read before the write (two overlapping writers can still interleave),
  operation ids are remembered by this adapter object only (a retry from another
  process appends again), and the current agent is kept in this object, not in the
  store. Use a stepswitch backend where those guarantees matter.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from stepswitch.errors import SessionConflict, SessionError
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import InputItem
from stepswitch.sessions._base import SessionSnapshot, _as_items, check_session_id

__all__ = ["SDKSessionAdapter", "StepswitchFromSDK", "from_sdk_session", "to_sdk_session"]


def to_responses_item(item: InputItem) -> dict[str, Any]:
    """One of our items as a Responses API input item (what SDK sessions hold)."""
    if type(item) is UserInputItem:
        return {"role": item.role, "content": item.content}
    if type(item) is MessageOutputItem:
        return {"role": "assistant", "content": item.content or item.refusal or ""}
    if isinstance(item, ToolCallItem | HandoffCallItem):
        return {"type": "function_call", "call_id": item.call_id, "name": item.name,
                "arguments": item.arguments}
    if isinstance(item, ToolCallOutputItem | HandoffOutputItem):
        return {"type": "function_call_output", "call_id": item.call_id, "output": item.output}
    raise SessionError(f"cannot give {type(item).__name__} to an SDK session")


def from_responses_item(raw: Any, agent: str) -> InputItem:
    """A Responses input item (a dict or an SDK/openai model object) as our item;
    ``agent`` names the agent for assistant items, which do not say."""
    if hasattr(raw, "model_dump"):
        raw = raw.model_dump(exclude_none=True)
    if not isinstance(raw, dict):
        raise SessionError(f"cannot read an SDK session item of type {type(raw).__name__}")
    kind = raw.get("type", "message")
    if kind == "message":
        role = raw.get("role")
        text = _text(raw.get("content"))
        if role == "assistant":
            return MessageOutputItem(agent, text)
        if role in ("user", "system", "developer"):
            return UserInputItem(text, role)
        raise SessionError(f"cannot read an SDK session message with role {role!r}")
    if kind == "function_call":
        return ToolCallItem(agent, str(raw.get("name", "")), str(raw.get("call_id", "")),
                            str(raw.get("arguments", "")))
    if kind == "function_call_output":
        output = raw.get("output", "")
        return ToolCallOutputItem(agent, str(raw.get("call_id", "")),
                                  output if isinstance(output, str) else json.dumps(output))
    raise SessionError(f"cannot read an SDK session item of type {kind!r}")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and isinstance(part.get("refusal"), str):
                parts.append(part["refusal"])
        return "".join(parts)
    return ""


class SDKSessionAdapter:
    """A stepswitch session seen through the SDK's ``Session`` protocol."""

    session_settings: Any = None

    def __init__(self, session: Any, *, agent_name: str = "assistant") -> None:
        self.session = session
        self.session_id: str = session.session_id
        self.agent_name = agent_name

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items = await self.session.get_items(limit)
        return [to_responses_item(i) for i in items]

    async def add_items(self, items: list[Any]) -> None:
        await self.session.add_items([from_responses_item(i, self.agent_name) for i in items])

    async def pop_item(self) -> Any:
        item = await self.session.pop_item()
        return None if item is None else to_responses_item(item)

    async def clear_session(self) -> None:
        await self.session.clear_session()


class StepswitchFromSDK:
    """An SDK session used as a stepswitch session (at-least-once; see the module)."""

    def __init__(self, sdk_session: Any, *, agent_name: str = "assistant") -> None:
        for name in ("get_items", "add_items", "pop_item", "clear_session"):
            if not callable(getattr(sdk_session, name, None)):
                raise SessionError(
                    f"from_sdk_session: {type(sdk_session).__name__} has no {name}(); "
                    "expected an agents.memory.Session"
                )
        self.sdk = sdk_session
        self.session_id = check_session_id(sdk_session.session_id)
        self.agent_name = agent_name
        self.current_agent: str | None = None
        self._operations: dict[str, tuple[tuple[InputItem, ...], int]] = {}

    async def load(self, *, limit: int | None = None) -> SessionSnapshot:
        items = [from_responses_item(i, self.agent_name) for i in await self.sdk.get_items()]
        version = len(items)
        if limit is not None:
            items = items[len(items) - limit:] if limit else []
        return SessionSnapshot(tuple(items), version, self.current_agent)

    async def append(
        self,
        items: Sequence[Any],
        *,
        operation_id: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> int:
        ours = tuple(_as_items(items))
        done = self._operations.get(operation_id)
        if done is not None:
            if done[0] != ours:
                raise SessionError(
                    f"session {self.session_id!r}: operation {operation_id!r} was already "
                    "applied with other items; nothing was changed"
                )
            return done[1]
        version = len(await self.sdk.get_items())
        if expected_version is not None and expected_version != version:
            raise SessionConflict(
                f"session {self.session_id!r} holds {version} items, not the expected "
                f"{expected_version}: another writer changed it first; nothing was appended"
            )
        if ours:
            await self.sdk.add_items([to_responses_item(i) for i in ours])
        if current_agent is not None:
            self.current_agent = current_agent
        version += len(ours)
        self._operations[operation_id] = (ours, version)
        return version

    async def get_items(self, limit: int | None = None) -> list[InputItem]:
        return list((await self.load(limit=limit)).items)

    async def add_items(self, items: Sequence[Any]) -> None:
        await self.sdk.add_items([to_responses_item(i) for i in _as_items(items)])

    async def pop_item(self) -> InputItem | None:
        raw = await self.sdk.pop_item()
        return None if raw is None else from_responses_item(raw, self.agent_name)

    async def clear_session(self) -> None:
        await self.sdk.clear_session()
        self.current_agent = None


def to_sdk_session(session: Any, *, agent_name: str = "assistant") -> SDKSessionAdapter:
    """``session`` as an SDK ``Session`` (``agent_name`` labels assistant items the SDK
    writes, which do not name their agent)."""
    return SDKSessionAdapter(session, agent_name=agent_name)


def from_sdk_session(sdk_session: Any, *, agent_name: str = "assistant") -> StepswitchFromSDK:
    """An SDK session usable as ``machine.run(..., session=...)``: at-least-once, with
    the limits the module docs list."""
    return StepswitchFromSDK(sdk_session, agent_name=agent_name)
