"""A session from a URL: ``sqlite:///path.db``, ``postgresql://…``, ``redis://…``."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from stepswitch.errors import SessionError

if TYPE_CHECKING:
    from stepswitch.sessions._base import StoreSession

__all__ = ["open_session"]

_SCHEMES = "sqlite:///path.db, postgresql://user@host/db or redis://host:port/db"


def open_session(url: str, session_id: str) -> StoreSession:
    """The session ``session_id`` in the store ``url`` names.

    ``sqlite:///conversations.db`` (relative), ``sqlite:////abs/path.db``,
    ``sqlite:///:memory:``; ``postgresql://…`` (a ``?schema=NAME`` query picks the
    tables' schema, ``?synchronous_commit=off`` trades the flush of each commit for
    speed); ``redis://host:port/db`` (``?prefix=P`` the key prefix).
    Nothing is read or written until the session is first used.
    """
    if not isinstance(url, str) or "://" not in url:
        head = url.split(":", 1)[0].lower() if isinstance(url, str) and ":" in url else ""
        if head in ("sqlite", "postgresql", "postgres", "redis", "rediss", "unix"):
            # a scheme whose slashes are missing or short (sqlite:/x.db)
            raise SessionError(f"session URL {url!r}: {head}: is followed by // (then the "
                               f"place): use {_SCHEMES}")
        raise SessionError(f"session URL {url!r} has no scheme: use {_SCHEMES}")
    scheme = url.split("://", 1)[0].lower()
    if scheme == "sqlite":
        from stepswitch.sessions.sqlite import SQLiteSession

        path = url[len("sqlite://"):]
        if not path.startswith("/") or path == "/":
            raise SessionError(
                f"session URL {url!r}: a SQLite URL is sqlite:///relative/path.db or "
                "sqlite:////absolute/path.db"
            )
        return SQLiteSession(session_id, path[1:])
    if scheme in ("postgresql", "postgres"):
        from stepswitch.sessions.postgres import PostgresSession

        parts = urlsplit(url)
        query = parse_qs(parts.query)
        schema = query.pop("schema", ["public"])[-1]
        sync = query.pop("synchronous_commit", ["on"])[-1].lower()
        if sync not in ("on", "off"):
            raise SessionError(f"session URL {url!r}: synchronous_commit is on or off")
        rest = "&".join(f"{k}={v[-1]}" for k, v in query.items())
        dsn = parts._replace(query=rest).geturl()
        return PostgresSession(session_id, dsn, schema=schema, synchronous_commit=sync == "on")
    if scheme in ("redis", "rediss", "unix"):
        from stepswitch.sessions.redis import RedisSession

        parts = urlsplit(url)
        query = parse_qs(parts.query)
        prefix = query.pop("prefix", ["stepswitch:"])[-1]
        rest = "&".join(f"{k}={v[-1]}" for k, v in query.items())
        return RedisSession(session_id, parts._replace(query=rest).geturl(), key_prefix=prefix)
    raise SessionError(f"unknown session URL scheme {scheme!r} in {url!r}: use {_SCHEMES}")
