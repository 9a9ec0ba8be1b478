"""``MemorySession``: a conversation kept in this process (tests, notebooks, one-off
scripts). Sessions built on one :class:`MemoryStore` share it; each new session
without a store gets a private one."""

from __future__ import annotations

import threading
from dataclasses import field

from stepswitch._dataclass import dataclass
from stepswitch.sessions._base import AppendStatus, StoreSession

__all__ = ["MemorySession", "MemoryStore"]


@dataclass(slots=True)
class _Conversation:
    rows: list[str] = field(default_factory=list)
    version: int = 0
    agent: str | None = None
    operations: dict[str, tuple[str, int]] = field(default_factory=dict)


class MemoryStore:
    """Conversations by session id, guarded by a lock (safe across threads)."""

    where = "memory"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conversations: dict[str, _Conversation] = {}

    def _get(self, session_id: str) -> _Conversation:
        conv = self._conversations.get(session_id)
        if conv is None:
            conv = self._conversations[session_id] = _Conversation()
        return conv

    def load_rows(self, session_id: str, limit: int | None) -> tuple[list[str], int, str | None]:
        with self._lock:
            conv = self._conversations.get(session_id)
            if conv is None:
                return [], 0, None
            rows = conv.rows if limit is None else conv.rows[max(0, len(conv.rows) - limit):]
            return list(rows), conv.version, conv.agent

    def append_rows(
        self,
        session_id: str,
        rows: list[str],
        operation_id: str | None,
        digest: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> tuple[AppendStatus, int]:
        with self._lock:
            conv = self._get(session_id)
            if operation_id is not None and operation_id in conv.operations:
                done, version = conv.operations[operation_id]
                return ("replay", version) if done == digest else ("reused", 0)
            if expected_version is not None and expected_version != conv.version:
                return "conflict", conv.version
            conv.rows.extend(rows)
            conv.version += 1
            if current_agent is not None:
                conv.agent = current_agent
            if operation_id is not None:
                conv.operations[operation_id] = (digest, conv.version)
            return "ok", conv.version

    def pop_row(self, session_id: str) -> str | None:
        with self._lock:
            conv = self._conversations.get(session_id)
            if conv is None or not conv.rows:
                return None
            conv.version += 1
            return conv.rows.pop()

    def clear(self, session_id: str) -> None:
        with self._lock:
            conv = self._get(session_id)
            conv.rows.clear()
            conv.agent = None
            conv.version += 1

    def close(self) -> None:
        pass

    def corrupt(self, session_id: str, index: int, text: str) -> None:
        """Overwrite one stored row (for tests of what a damaged store does)."""
        with self._lock:
            self._get(session_id).rows[index] = text


class MemorySession(StoreSession):
    """A conversation in this process's memory. Pass one ``store`` to several sessions
    (or runs in other threads) to share it; by default each session has its own."""

    _threaded = False

    def __init__(self, session_id: str, *, store: MemoryStore | None = None) -> None:
        self.store = store if store is not None else MemoryStore()
        super().__init__(session_id, self.store)
