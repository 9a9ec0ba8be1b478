"""Sessions across the OpenAI Agents SDK boundary, both ways.

* :func:`to_sdk_session` wraps a stepswitch session as the SDK's ``Session``
  protocol, so ``agents.Runner.run(agent, input, session=...)`` reads and writes the
  same conversation a stepswitch run does. On a stepswitch backend (memory, SQLite,
  PostgreSQL, Redis) every item the SDK writes is stored as written and given back
  unchanged; items a stepswitch run wrote cross as Responses input items.
* :func:`from_sdk_session` wraps an SDK session (SQLite, Redis, SQLAlchemy, …) so a
  stepswitch run can use it. **At-least-once only**: SDK sessions keep no version
  and no operation id, so the version is the number of items the SDK session holds
  and the compare is a separate read before the write (two overlapping writers can
  still interleave), operation ids are remembered by this adapter object only (a
  retry from another process appends again), and the current agent is kept in this
  object, not in the store. Use a stepswitch backend where those guarantees matter.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from stepswitch.errors import SessionConflict, SessionError, StateError, UserError
from stepswitch.runtime.model import InputItem
from stepswitch.sessions._base import (
    ResponsesRow,
    SessionSnapshot,
    StoreSession,
    _as_items,
    check_session_id,
    encode_responses_items,
)
from stepswitch.sessions._responses import (
    plain_item,
    responses_item_types,
    responses_view,
    to_responses_item,
)

__all__ = ["SDKSessionAdapter", "StepswitchFromSDK", "from_sdk_session", "to_sdk_session"]


def _settings_limit(settings: Any) -> int | None:
    if settings is None:
        return None
    if isinstance(settings, dict):
        limit = settings.get("limit")
    else:
        limit = getattr(settings, "limit", None)
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
        raise TypeError(f"session_settings.limit must be an int or None, got {limit!r}")
    return limit


def _sdk_settings(settings: Any) -> Any:
    """``session_settings`` as the SDK's own sessions keep it: a ``SessionSettings`` (a dict
    is checked and converted, None is the default ``SessionSettings()``)."""
    try:
        from agents.memory.session_settings import SessionSettings, coerce_session_settings
    except ImportError:  # pragma: no cover - the SDK is not installed: keep it as given
        return settings
    if settings is None:
        return SessionSettings()
    return coerce_session_settings(settings)


class SDKSessionAdapter:
    """A stepswitch session seen through the SDK's ``Session`` protocol.

    On a stepswitch backend, ``add_items`` stores each item exactly as given and
    ``get_items``/``pop_item`` give it back unchanged (a copy), whatever its type.
    ``get_items(limit)`` follows the SDK's ``SQLiteSession``: ``limit=None`` uses
    ``session_settings.limit``; a negative limit means all items.
    """

    def __init__(self, session: Any, *, agent_name: str = "assistant",
                 session_settings: Any = None) -> None:
        self.session = session
        self.session_id: str = session.session_id
        self.agent_name = agent_name
        self.session_settings = _sdk_settings(session_settings)
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")

    def _limit(self, limit: int | None) -> int | None:
        if limit is None:
            limit = _settings_limit(self.session_settings)
        if limit is not None and limit < 0:
            return None
        return limit

    async def get_items(self, limit: int | None = None) -> list[Any]:
        self._check_open()
        n = self._limit(limit)
        if isinstance(self.session, StoreSession):
            return [_sdk_item(e) for e in await self.session._load_entries(n)]
        if isinstance(self.session, StepswitchFromSDK):
            return await self.session.sdk.get_items(n)  # type: ignore[no-any-return]
        return [to_responses_item(i) for i in await self.session.get_items(n)]

    async def add_items(self, items: list[Any]) -> None:
        self._check_open()
        if isinstance(self.session, StoreSession):
            rows = encode_responses_items(items, self.agent_name)
            if rows:
                await self.session._append(rows, None, None, None)
            return
        if isinstance(self.session, StepswitchFromSDK):
            await self.session.sdk.add_items(items)
            return
        ours = []
        for n, raw in enumerate(items):
            item = responses_view(plain_item(raw), self.agent_name, f"item {n}",
                                  strict=False)
            if item is None:
                raise SessionError(
                    f"{type(self.session).__name__} keeps stepswitch items only, and a "
                    f"{raw.get('type') if isinstance(raw, dict) else type(raw).__name__} "
                    "item has no stepswitch form; use a stepswitch backend (memory, SQLite, "
                    "PostgreSQL, Redis) to keep every item"
                )
            ours.append(item)
        await self.session.add_items(ours)

    async def pop_item(self) -> Any:
        self._check_open()
        if isinstance(self.session, StoreSession):
            entry = await self.session._pop_entry()
            return None if entry is None else _sdk_item(entry)
        if isinstance(self.session, StepswitchFromSDK):
            return await self.session.sdk.pop_item()
        item = await self.session.pop_item()
        return None if item is None else to_responses_item(item)

    async def clear_session(self) -> None:
        self._check_open()
        await self.session.clear_session()

    def close(self) -> None:
        """Release the wrapped session's hold on its store, synchronously, as the SDK's
        ``SQLiteSession.close()`` does (SDK code calls it without ``await``); afterwards
        every operation raises ``RuntimeError``, as on a closed SDK ``SQLiteSession``."""
        if self._closed:
            return
        self._closed = True
        if isinstance(self.session, StoreSession):
            self.session._backend.close()
            return
        target = self.session.sdk if isinstance(self.session, StepswitchFromSDK) else self.session
        close = getattr(target, "close", None)
        if callable(close) and not inspect.iscoroutinefunction(close):
            close()


def _sdk_item(entry: InputItem | ResponsesRow) -> dict[str, Any]:
    if type(entry) is ResponsesRow:
        return entry.item
    return to_responses_item(entry)  # type: ignore[arg-type]


def _digest(items: tuple[InputItem, ...], current_agent: str | None) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(json.dumps(to_responses_item(item), sort_keys=True).encode("utf-8"))
        h.update(type(item).__name__.encode("ascii") + b"\x1e")
    h.update(b"\x1d" + repr(current_agent).encode("utf-8"))
    return h.hexdigest()


def _read_sdk_sqlite(sdk: Any) -> list[Any] | None:
    """The rows of the SDK's own ``SQLiteSession`` as stored, so a row that does not
    parse is seen (its ``get_items`` skips such rows); None for any other session."""
    try:
        from agents.memory.sqlite_session import SQLiteSession
    except ImportError:  # pragma: no cover - the SDK is what gave us this session
        return None
    connect = getattr(sdk, "_locked_connection", None)
    table = getattr(sdk, "messages_table", None)
    if type(sdk) is not SQLiteSession or connect is None or not isinstance(table, str):
        return None
    check = getattr(sdk, "_check_not_closed", None)
    if check is not None:
        check()
    with connect() as conn:
        try:
            cursor = conn.execute(
                f'SELECT message_data FROM "{table}" WHERE session_id = ? ORDER BY id ASC',
                (sdk.session_id,),
            )
        except sqlite3.OperationalError:  # no table yet: nothing was written
            return []
        rows = [r[0] for r in cursor.fetchall()]
    out = []
    for n, row in enumerate(rows):
        try:
            out.append(json.loads(row))
        except (json.JSONDecodeError, TypeError) as exc:
            raise StateError(
                f"SDK session {sdk.session_id!r}: stored item {n} does not parse ({exc}); "
                "the store was changed outside the SDK or is corrupted"
            ) from None
    return out


class StepswitchFromSDK:
    """An SDK session used as a stepswitch session (at-least-once; see the module).

    The version is the number of items the SDK session holds: an append raises it by
    the number of items appended, a pop lowers it by one, a clear sets it to 0. A
    writer that loaded before changes that leave the count where it was (a pop, then
    an append of one item) is therefore not seen as stale.
    """

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
        self._operations: dict[str, tuple[str, int]] = {}

    async def _raw(self) -> list[Any]:
        rows = _read_sdk_sqlite(self.sdk)
        if rows is None:
            rows = list(await self.sdk.get_items())
        return rows

    def _view(self, raw: Any, n: int) -> InputItem | None:
        where = f"SDK session {self.session_id!r}: stored item {n}"
        if hasattr(raw, "model_dump"):
            raw = raw.model_dump(exclude_unset=True, mode="json")
        if not isinstance(raw, dict):
            raise StateError(f"{where} is a {type(raw).__name__}, not a Responses input item")
        kind = raw.get("type", "message" if "role" in raw else None)
        if kind not in responses_item_types():
            raise StateError(f"{where} has type {kind!r}, which no Responses input item has")
        return responses_view(raw, self.agent_name, where)

    async def load(self, *, limit: int | None = None) -> SessionSnapshot:
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise UserError(f"session load: limit must be a non-negative int, got {limit!r}")
        raw = await self._raw()
        version = len(raw)
        first = 0 if limit is None else max(0, version - limit)
        views = (self._view(r, n) for n, r in enumerate(raw[first:], first))
        items = tuple(i for i in views if i is not None)
        return SessionSnapshot(items, version, self.current_agent)

    async def append(
        self,
        items: Sequence[Any],
        *,
        operation_id: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> int:
        ours = tuple(_as_items(items))
        digest = _digest(ours, current_agent)
        done = self._operations.get(operation_id)
        if done is not None:
            if done[0] != digest:
                raise SessionError(
                    f"session {self.session_id!r}: operation {operation_id!r} was already "
                    "applied with other items or another current agent; nothing was changed"
                )
            return done[1]
        version = len(await self._raw())
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
        self._operations[operation_id] = (digest, version)
        return version

    async def get_items(self, limit: int | None = None) -> list[InputItem]:
        return list((await self.load(limit=limit)).items)

    async def add_items(self, items: Sequence[Any]) -> None:
        ours = _as_items(items)
        if ours:
            await self.sdk.add_items([to_responses_item(i) for i in ours])

    async def pop_item(self) -> Any:
        """The newest item, removed: a stepswitch item, or the SDK's item itself when it
        has no stepswitch form (or does not read as one: it is out of the store already,
        so it is given back rather than lost in an error)."""
        raw = await self.sdk.pop_item()
        if raw is None:
            return None
        try:
            item = self._view(raw, -1)
        except StateError:
            return raw
        return raw if item is None else item

    async def clear_session(self) -> None:
        await self.sdk.clear_session()
        self.current_agent = None


def to_sdk_session(session: Any, *, agent_name: str = "assistant",
                   session_settings: Any = None) -> SDKSessionAdapter:
    """``session`` as an SDK ``Session``. ``agent_name`` labels, in the stepswitch view,
    the assistant items the SDK writes (they do not name their agent);
    ``session_settings`` (an ``agents.SessionSettings``) as the SDK's sessions take it."""
    return SDKSessionAdapter(session, agent_name=agent_name, session_settings=session_settings)


def from_sdk_session(sdk_session: Any, *, agent_name: str = "assistant") -> StepswitchFromSDK:
    """An SDK session usable as ``machine.run(..., session=...)``: at-least-once, with
    the limits the module docs list."""
    return StepswitchFromSDK(sdk_session, agent_name=agent_name)
