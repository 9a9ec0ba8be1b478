"""What every conversation store shares: the protocol, the snapshot, item encoding, and
the async surface over a backend's few synchronous primitives.

A backend implements five primitives over *rows* (one item's JSON text each):
``load_rows``, ``append_rows``, ``pop_row``, ``clear`` and ``close``. Each runs as one
transaction of its store. :class:`StoreSession` turns them into the public methods:
the SDK's four (``get_items``, ``add_items``, ``pop_item``, ``clear_session``) and the
transactional core (``load``, ``append``).

Versions: a session's version starts at 0 and grows by one with every change (an
append, an ``add_items``, a pop, a clear). ``append(..., expected_version=v)`` commits
only when the session is still at ``v``; the operation id is stored with the change,
in the same transaction, with a digest of what it appended, so a replay of the same
operation returns the version it made and changes nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from stepswitch._dataclass import dataclass
from stepswitch._json import JSONTextError, dumps
from stepswitch.errors import SessionConflict, SessionError, StateError, UserError
from stepswitch.runtime.items import ToolApprovalItem, UserInputItem
from stepswitch.runtime.model import InputItem
from stepswitch.runtime.state_json import item_from_json, item_to_json
from stepswitch.sessions._responses import RESPONSES_ROW, plain_item, responses_view

__all__ = [
    "MAX_SESSION_ID",
    "SCHEMA_VERSION",
    "AppendStatus",
    "Backend",
    "ResponsesRow",
    "Session",
    "SessionSnapshot",
    "StoreSession",
    "check_session_id",
    "decode_entries",
    "decode_rows",
    "encode_items",
    "encode_responses_items",
    "schema_refusal",
]

SCHEMA_VERSION = 1
"""The layout of the stores' tables and keys this stepswitch writes and reads."""
MAX_SESSION_ID = 256


def schema_refusal(where: str, found: object, what: str) -> SessionError | None:
    """Why a store whose ``schema_version`` is ``found`` is not read (None: it is this
    stepswitch's): a newer one's layout, or a value no stepswitch wrote (an edited or a
    foreign store, an "older" version there never was), which is refused as well rather
    than read as if it were this layout. ``what``: ``tables`` or ``keys``."""
    text = found.decode() if isinstance(found, bytes) else str(found)
    if text == str(SCHEMA_VERSION):
        return None
    if text.isdigit() and int(text) > SCHEMA_VERSION:
        return SessionError(f"{where}: its session {what} were written by a newer stepswitch "
                            f"(schema version {text}; this one reads {SCHEMA_VERSION}); "
                            "upgrade stepswitch")
    return SessionError(f"{where}: its session {what} say schema version {text!r}, which no "
                        f"stepswitch wrote (this one reads {SCHEMA_VERSION}): the store was "
                        "edited, or is not stepswitch's; use another")

T = TypeVar("T")

AppendStatus = Literal["ok", "replay", "reused", "conflict"]


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """A session as one consistent read: its items (oldest first), the version they are
    at, and the agent the conversation continues with (None: the workflow's entry)."""

    items: tuple[InputItem, ...]
    version: int
    current_agent: str | None


@runtime_checkable
class Session(Protocol):
    """A conversation store: the SDK's four methods plus the transactional core."""

    session_id: str

    async def get_items(self, limit: int | None = None) -> list[InputItem]: ...

    async def add_items(self, items: Sequence[Any]) -> None: ...

    async def pop_item(self) -> InputItem | None: ...

    async def clear_session(self) -> None: ...

    async def load(self, *, limit: int | None = None) -> SessionSnapshot: ...

    async def append(
        self,
        items: Sequence[Any],
        *,
        operation_id: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> int: ...


class Backend(Protocol):
    """The synchronous primitives of one store, each one transaction."""

    where: str
    """Where the store is, for messages (a file, a server, ``memory``)."""

    def load_rows(self, session_id: str, limit: int | None) -> tuple[list[str], int, str | None]:
        ...

    def append_rows(
        self,
        session_id: str,
        rows: list[str],
        operation_id: str | None,
        digest: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> tuple[AppendStatus, int]:
        """``("ok", new version)``, ``("replay", the version the operation made)``,
        ``("reused", 0)`` (the id holds other items) or ``("conflict", current)``."""
        ...

    def pop_row(self, session_id: str) -> str | None: ...

    def clear(self, session_id: str) -> None: ...

    def close(self) -> None: ...


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_session_id(session_id: object) -> str:
    if not isinstance(session_id, str):
        raise SessionError(f"session id: expected a string, got {type(session_id).__name__}")
    if not session_id:
        raise SessionError("session id is empty: give each conversation a non-empty id")
    if len(session_id) > MAX_SESSION_ID:
        raise SessionError(
            f"session id is {len(session_id)} characters long; at most {MAX_SESSION_ID} "
            f"are allowed (it starts {session_id[:24]!r})"
        )
    if "\x00" in session_id:
        raise SessionError(f"session id {session_id[:40]!r} contains a NUL character")
    if not session_id.isascii() and _SURROGATE.search(session_id):
        raise SessionError(
            f"session id {session_id[:40]!r} is not text: it holds a lone surrogate (bytes "
            "that were not UTF-8 when it was read); name the conversation in UTF-8"
        )
    return session_id


def _as_items(items: Iterable[Any]) -> list[InputItem]:
    from stepswitch.runtime.run import input_items  # the run's own reading of input

    if isinstance(items, str):
        raise UserError("session items: expected a list of items, got a string")
    out = list(input_items(list(items)))
    for item in out:
        if type(item) is ToolApprovalItem:
            raise UserError(
                f"session items: an approval request ({item.name}, call {item.call_id!r}) "
                "is not conversation history; store the call's output once it settles"
            )
    return out


def encode_items(items: Iterable[Any]) -> list[str]:
    """Each item as compact, key-sorted JSON text (the ``RunState`` item encoding)."""
    try:
        return [
            dumps(item_to_json(i), sort_keys=True, separators=(",", ":"))  # surrogates escaped
            for i in _as_items(items)
        ]
    except (StateError, JSONTextError) as exc:
        raise UserError(f"session items: {exc}") from None


def _digest(rows: list[str], current_agent: str | None) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(row.encode("utf-8"))
        h.update(b"\x1e")
    h.update(b"\x1d" + (current_agent or "").encode("utf-8"))
    return h.hexdigest()


def _fast_table() -> dict[str, tuple[type[Any], tuple[str, ...]]]:
    from stepswitch.runtime.state_json import _ITEM_FIELDS

    return {k: v for k, v in _ITEM_FIELDS.items()
            if k not in ("tool_approval_item", "responses_item")}


_FAST = _fast_table()
_ROLES = frozenset(("user", "system", "developer", "assistant"))


def _fast_item(raw: Any) -> Any:
    """The item of a well-formed row, or None (then the full reader says what is wrong)."""
    if type(raw) is not dict:
        return None
    spec = _FAST.get(raw.get("type"))  # type: ignore[arg-type]
    if spec is None:
        return None
    cls, fields = spec
    kwargs = {}
    for name in fields:
        value = raw.get(name)
        if name == "refusal":
            if value is not None and type(value) is not str:
                return None
        elif name == "is_error":
            if type(value) is not bool:
                return None
        elif type(value) is not str:
            return None
        kwargs[name] = value
    if cls is UserInputItem and (kwargs["role"] not in _ROLES or "parts" in raw):
        return None  # content parts: the full reader checks them
    return cls(**kwargs)


@dataclass(frozen=True, slots=True)
class ResponsesRow:
    """A stored row written through the SDK adapter: the SDK's item, unchanged."""

    agent: str
    item: dict[str, Any]


def encode_responses_items(items: Iterable[Any], agent: str) -> list[str]:
    """SDK items as rows that keep each item exactly as given (``TypeError`` for an
    item that is not a JSON object, as the SDK's own sessions raise)."""
    return [
        dumps({"type": RESPONSES_ROW, "agent": agent, "item": plain_item(i)},
              separators=(",", ":"), allow_nan=False)
        for i in items
    ]


def _bad_row(session_id: str, where: str, n: int, detail: str) -> StateError:
    return StateError(
        f"session {session_id!r} in {where}: stored item {n} does not parse ({detail}); "
        "the store was changed outside stepswitch or is corrupted"
    )


def decode_entries(rows: Sequence[str | bytes], session_id: str, where: str,
                   first: int = 0) -> list[InputItem | ResponsesRow]:
    """Each stored row as a stepswitch item or, for a row the SDK adapter wrote, the
    SDK's item; a row that does not parse is a ``StateError``, never skipped."""
    out: list[InputItem | ResponsesRow] = []
    for n, row in enumerate(rows, first):
        try:
            raw = json.loads(row)
            if type(raw) is dict and raw.get("type") == RESPONSES_ROW:
                agent, item = raw.get("agent"), raw.get("item")
                if not isinstance(agent, str) or type(item) is not dict:
                    raise StateError("a responses item needs an agent and an item object")
                out.append(ResponsesRow(agent, item))
                continue
            out.append(item_from_json(raw, "item"))
        except (json.JSONDecodeError, UnicodeDecodeError, StateError, TypeError) as exc:
            detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise _bad_row(session_id, where, n, detail) from None
        if type(out[-1]) is ToolApprovalItem:
            raise StateError(
                f"session {session_id!r} in {where}: stored item {n} is an approval "
                "request, which is not conversation history"
            )
    return out


def stepswitch_view(entry: InputItem | ResponsesRow) -> InputItem | None:
    if type(entry) is ResponsesRow:
        return responses_view(entry.item, entry.agent, "item", strict=False)
    return entry  # type: ignore[return-value]


def decode_rows(rows: Sequence[str | bytes], session_id: str, where: str,
                first: int = 0) -> tuple[InputItem, ...]:
    """The stepswitch items of stored rows (a row the SDK adapter wrote gives its
    nearest stepswitch item, or none); a row that does not parse is a ``StateError``."""
    try:  # the common case: every row a well-formed stepswitch item, read in one pass
        parsed = json.loads("[" + ",".join(
            r.decode("utf-8") if isinstance(r, bytes) else r for r in rows) + "]")
        fast = [_fast_item(raw) for raw in parsed]
        if len(fast) == len(rows) and None not in fast:
            return tuple(fast)
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError):
        pass
    out: list[InputItem] = []
    for entry in decode_entries(rows, session_id, where, first):
        item = stepswitch_view(entry)
        if item is not None:
            out.append(item)
    return tuple(out)


class StoreSession:
    """The public methods of a session, over a :class:`Backend`.

    ``threaded``: run each primitive in a worker thread (stores that do I/O), so a
    busy store never blocks the event loop.
    """

    _threaded = True

    def __init__(self, session_id: str, backend: Backend) -> None:
        self.session_id = check_session_id(session_id)
        self._backend = backend

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.session_id!r}, {self._backend.where})"

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        if not self._threaded:
            return fn(*args)
        return await asyncio.to_thread(fn, *args)

    # -- the transactional core -------------------------------------------------------------

    async def load(self, *, limit: int | None = None) -> SessionSnapshot:
        """The session in one consistent read; ``limit``: only the last ``limit`` items."""
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise UserError(f"session load: limit must be a non-negative int, got {limit!r}")
        rows, version, agent = await self._call(
            self._backend.load_rows, self.session_id, limit
        )
        return SessionSnapshot(
            decode_rows(rows, self.session_id, self._backend.where), version, agent
        )

    async def append(
        self,
        items: Sequence[Any],
        *,
        operation_id: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> int:
        """Append ``items`` atomically, once: the new version.

        The same ``operation_id`` with the same items (and agent) again returns the
        version it made and changes nothing; with other items it is ``SessionError``.
        ``expected_version`` (None: any) not matching the store is ``SessionConflict``.
        ``current_agent`` (None: unchanged) is where the conversation continues.
        """
        if not isinstance(operation_id, str) or not operation_id:
            raise UserError("session append: operation_id must be a non-empty string")
        if expected_version is not None and (
            not isinstance(expected_version, int) or expected_version < 0
        ):
            raise UserError(
                f"session append: expected_version must be a non-negative int or None, got "
                f"{expected_version!r}"
            )
        rows = encode_items(items)
        return await self._append(rows, operation_id, expected_version, current_agent)

    async def _append(
        self,
        rows: list[str],
        operation_id: str | None,
        expected_version: int | None,
        current_agent: str | None,
    ) -> int:
        status, version = await self._call(
            self._backend.append_rows, self.session_id, rows, operation_id,
            _digest(rows, current_agent), expected_version, current_agent,
        )
        if status == "reused":
            raise SessionError(
                f"session {self.session_id!r}: operation {operation_id!r} was already "
                "applied with other items; nothing was changed (an operation id names one "
                "append)"
            )
        if status == "conflict":
            raise SessionConflict(
                f"session {self.session_id!r} is at version {version}, not the expected "
                f"{expected_version}: another writer changed it first; nothing was "
                "appended",
                hint="load it again, or run with RunConfig(on_conflict='reload')",
                found=version,
            )
        return version

    # -- the SDK's four methods -------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[InputItem]:
        """The items, oldest first (the last ``limit`` of them when given)."""
        return list((await self.load(limit=limit)).items)

    async def add_items(self, items: Sequence[Any]) -> None:
        """Append items with no operation id and no version check (the SDK's way)."""
        rows = encode_items(items)
        if rows:
            await self._append(rows, None, None, None)

    async def pop_item(self) -> Any:
        """Remove and return the newest item (None when the session is empty): a
        stepswitch item (a ``ResponsesItem`` for a reasoning item, a hosted tool call, …),
        or the SDK's own dict for an item the SDK adapter wrote whose fields give no
        stepswitch form."""
        entry = await self._pop_entry()
        if entry is None:
            return None
        item = stepswitch_view(entry)
        return entry.item if item is None and type(entry) is ResponsesRow else item

    # -- rows as written (the SDK adapter's lossless view) ----------------------------------

    async def _load_entries(self, limit: int | None) -> list[InputItem | ResponsesRow]:
        rows, _, _ = await self._call(self._backend.load_rows, self.session_id, limit)
        return decode_entries(rows, self.session_id, self._backend.where)

    async def _pop_entry(self) -> InputItem | ResponsesRow | None:
        row = await self._call(self._backend.pop_row, self.session_id)
        if row is None:
            return None
        return decode_entries([row], self.session_id, self._backend.where)[0]

    async def clear_session(self) -> None:
        """Remove every item and the current agent (the version still grows)."""
        await self._call(self._backend.clear, self.session_id)

    async def close(self) -> None:
        """Release this session's hold on its store's connection."""
        await self._call(self._backend.close)
