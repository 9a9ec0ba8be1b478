"""A session from a URL: ``sqlite:///path.db``, ``postgresql://…``, ``redis://…``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from stepswitch.errors import SessionError

if TYPE_CHECKING:
    from stepswitch.sessions._base import StoreSession

__all__ = ["open_session", "sqlite_file"]

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

        path = sqlite_file(url)
        if path is None:
            raise SessionError(
                f"session URL {url!r}: a SQLite URL is sqlite:///relative/path.db or "
                "sqlite:////absolute/path.db"
            )
        return SQLiteSession(session_id, path)
    if scheme in ("postgresql", "postgres"):
        from stepswitch.sessions.postgres import PostgresSession

        dsn, ours = _take_query(url, ("schema", "synchronous_commit"))
        schema = ours.get("schema", "public")
        if not schema:
            raise SessionError(f"session URL {url!r}: schema= is empty (leave it out for "
                               "the default, public)")
        sync = ours.get("synchronous_commit", "on").lower()
        if sync not in ("on", "off"):
            raise SessionError(f"session URL {url!r}: synchronous_commit is on or off")
        return PostgresSession(session_id, dsn, schema=schema, synchronous_commit=sync == "on")
    if scheme in ("redis", "rediss", "unix"):
        from stepswitch.sessions.redis import RedisSession

        address, ours = _take_query(url, ("prefix",))
        db = urlsplit(address).path.strip("/")
        if scheme != "unix" and db and not db.isdigit():  # unix://: the path is the socket
            raise SessionError(f"session URL {url!r}: the database after the port is a "
                               f"number (redis://host:port/0), not {db!r}")
        prefix = ours.get("prefix", "stepswitch:")
        if not prefix:
            raise SessionError(f"session URL {url!r}: prefix= is empty (leave it out for "
                               "the default, stepswitch:)")
        return RedisSession(session_id, address, key_prefix=prefix)
    raise SessionError(f"unknown session URL scheme {scheme!r} in {url!r}: use {_SCHEMES}")


def sqlite_file(url: str) -> str | None:
    """The file a ``sqlite:///`` URL names, as :func:`open_session` opens it (relative to
    the working folder; ``sqlite:///~/x.db`` in the home folder; ``":memory:"`` for the
    in-memory database); None for a URL of another scheme or a malformed one."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() != "sqlite" or not rest.startswith("/") or rest == "/":
        return None
    path = rest[1:]
    if path == "~" or path.startswith("~/"):  # sqlite:///~/x.db: in the home folder
        path = os.path.expanduser(path)
    return path


def _take_query(url: str, names: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """``url`` without the query parameters ``names`` (the rest kept byte for byte: a
    driver reads them, percent-escapes and all), and the values of those it had (the
    last of a repeated one)."""
    base, sep, query = url.partition("?")
    kept: list[str] = []
    ours: dict[str, str] = {}
    for part in query.split("&") if sep else ():
        key, _, value = part.partition("=")
        if unquote(key) in names:
            ours[unquote(key)] = unquote(value)
        elif part:
            kept.append(part)
    return (base + "?" + "&".join(kept) if kept else base), ours
