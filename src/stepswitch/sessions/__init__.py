"""Conversations that continue across runs: sessions that never interleave.

A session keeps a conversation's items (the same JSON a ``RunState`` holds), its
version and the agent it continues with. ``machine.run(input, session=s)`` reads it,
continues at its current agent, and appends each settled turn once, under an
operation id, only if no one else wrote in between::

    from stepswitch.sessions import SQLiteSession

    session = SQLiteSession("user-42", "conversations.db")
    await machine.run("I want a refund", session=session, model=model)
    await machine.run("order 7", session=session, model=model)   # continues at refund

Backends: :class:`MemorySession`, :class:`SQLiteSession` (stdlib), :class:`PostgresSession`
(``stepswitch[postgres]``), :class:`RedisSession` (``stepswitch[redis]``);
:func:`open_session` opens one from a URL. Every backend passes
``stepswitch.testing.session_conformance``. Drivers load only when their backend is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from stepswitch.sessions._base import Session, SessionSnapshot
from stepswitch.sessions._url import open_session, sqlite_file

if TYPE_CHECKING:
    from stepswitch.sessions.memory import MemorySession, MemoryStore
    from stepswitch.sessions.postgres import PostgresSession
    from stepswitch.sessions.redis import RedisSession
    from stepswitch.sessions.sdk import SDKSessionAdapter, from_sdk_session, to_sdk_session
    from stepswitch.sessions.sqlite import SQLiteSession

__all__ = [
    "MemorySession",
    "MemoryStore",
    "PostgresSession",
    "RedisSession",
    "SDKSessionAdapter",
    "SQLiteSession",
    "Session",
    "SessionSnapshot",
    "from_sdk_session",
    "open_session",
    "sqlite_file",
    "to_sdk_session",
]

_LAZY = {
    "MemorySession": "memory",
    "MemoryStore": "memory",
    "SQLiteSession": "sqlite",
    "PostgresSession": "postgres",
    "RedisSession": "redis",
    "SDKSessionAdapter": "sdk",
    "from_sdk_session": "sdk",
    "to_sdk_session": "sdk",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stepswitch.sessions' has no attribute {name!r}")
    return getattr(importlib.import_module(f"stepswitch.sessions.{module}"), name)
