"""``PostgresSession``: conversations in PostgreSQL (psycopg 3, extra
``stepswitch[postgres]``).

An append is one call of a PL/pgSQL function the setup creates, so one round trip and
one transaction: it locks the session's row (``SELECT … FOR UPDATE``), checks the
operation id and the version, then writes the items, the new head and the operation.
A load is one statement, so the items and the version it returns are one snapshot.
Both are prepared on a connection's first use of them (``prepare=True``: otherwise the
driver prepares on the fifth, and that turn pays a round trip more), so after it a
turn is two round trips (``tests/sessions/test_pg_round_trips.py`` counts them).
Tables live in ``schema`` (created when missing, under an advisory lock so processes
racing on a fresh database cannot collide). Sessions of one process on the same DSN
share a few connections (``POOL_SIZE``); a broken connection is replaced on the next
call.

After ``fork()`` (gunicorn ``--preload``, multiprocessing's fork context) the child
holds copies of the parent's sockets and locks. Using a socket from two processes
interleaves their messages (hangs, protocol errors, a commit reported as failed), and
closing it in the child sends the server the end of the *parent's* session. So the
child, first thing (``os.register_at_fork``, and a process id check for forks that
bypass it), gets fresh locks and an empty pool, and points each inherited socket at
``/dev/null`` before closing it: libpq's goodbye goes nowhere and the parent's
connection is untouched. The child then connects on its own.
"""

from __future__ import annotations

import os
import re
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, cast

from stepswitch._site import shadowing
from stepswitch.errors import SessionError
from stepswitch.sessions._base import (
    SCHEMA_VERSION,
    AppendStatus,
    StoreSession,
    check_session_id,
    schema_refusal,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresSession"]

_STATUSES: tuple[AppendStatus, ...] = ("ok", "replay", "reused", "conflict")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_LOCK_KEY = 0x5E55_1011  # the advisory lock that serializes creating the tables
POOL_SIZE = 4
"""Connections per DSN and process (at most this many operations run at once)."""


def _psycopg() -> Any:
    shadow = shadowing("psycopg")
    if shadow is not None:
        raise SessionError(shadow)
    try:
        import psycopg
    except ImportError:
        raise SessionError(
            "PostgresSession needs psycopg 3: pip install 'stepswitch[postgres]'"
        ) from None
    return psycopg


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _Conn:
    """A few connections per DSN in this process: concurrent conversations commit side
    by side (PostgreSQL can then flush their commits together) instead of in a queue."""

    def __init__(self, dsn: str, synchronous_commit: bool) -> None:
        self.dsn = dsn
        self.key = (dsn, synchronous_commit)
        self.synchronous_commit = synchronous_commit
        self.users = 0
        self.ready: set[str] = set()
        self.where = f"PostgreSQL {_describe(dsn)}"
        self._fresh()
        _ALL.add(self)

    def _fresh(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(POOL_SIZE)
        self.idle: list[psycopg.Connection[Any]] = []
        self.lent: set[psycopg.Connection[Any]] = set()

    def forget_inherited(self) -> None:
        """In a child of ``fork()``: drop the parent's connections without a word to
        the server, and start with fresh locks (another thread may have held them)."""
        inherited = [*self.idle, *self.lent]
        self._fresh()
        for conn in inherited:
            _detach(conn)

    def _connect(self) -> psycopg.Connection[Any]:
        pg = _psycopg()
        try:
            conn = cast("psycopg.Connection[Any]", pg.connect(
                self.dsn, autocommit=True, connect_timeout=5))
            if not self.synchronous_commit:
                conn.execute("SET synchronous_commit = off")
        except pg.Error as exc:
            raise SessionError(f"cannot connect to {self.where}: {_first_line(exc)}") from None
        return conn

    @contextmanager
    def borrow(self) -> Iterator[psycopg.Connection[Any]]:
        if self.pid != os.getpid():  # a fork that ran no at-fork handlers
            self.forget_inherited()
        with self.slots:
            with self.lock:
                conn = self.idle.pop() if self.idle else None
            if conn is None or conn.closed or conn.broken:
                conn = self._connect()
            with self.lock:
                self.lent.add(conn)
            try:
                yield conn
            finally:
                with self.lock:
                    self.lent.discard(conn)
                    if not conn.closed and not conn.broken:
                        self.idle.append(conn)

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for conn in idle:
            conn.close()


def _detach(conn: Any) -> None:
    """Close an inherited connection with its socket pointed at ``/dev/null`` first:
    libpq's closing message must not reach the server on the parent's session."""
    try:
        fd = conn.pgconn.socket
    except Exception:  # closed already: nothing is open
        return
    try:
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)
    except OSError:
        return  # the copy stays open in this process (never used, never closed)
    with suppress(Exception):
        conn.close()


_ALL: weakref.WeakSet[_Conn] = weakref.WeakSet()
"""Every shared pool of this process, for the at-fork handler."""


def _after_fork_in_child() -> None:
    global _REGISTRY_LOCK
    _REGISTRY_LOCK = threading.Lock()  # a thread of the parent may have held it
    for shared in list(_ALL):
        shared.forget_inherited()


def _describe(dsn: str) -> str:
    try:
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(dsn)
    except Exception:
        return "(unparsable DSN)"
    host = info.get("host") or "localhost"
    port = info.get("port") or "5432"
    db = info.get("dbname") or info.get("user") or ""
    return f"at {host}:{port}/{db}"


_REGISTRY: dict[tuple[str, bool], _Conn] = {}
_REGISTRY_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _Backend:
    def __init__(self, shared: _Conn, schema: str) -> None:
        self.shared = shared
        self.schema = schema
        self.where = f"{shared.where} (schema {schema})"
        self.closed = False
        from psycopg import sql

        s = sql.Identifier(schema)
        self.q = {  # bytes once (the schema is a plain name): the driver caches their parse
            name: sql.SQL(text).format(s=s).as_bytes(None)
            for name, text in _QUERIES.items()
        }

    def _run(self, what: str, session_id: str, fn: Any, *, transaction: bool = True) -> Any:
        if self.closed:
            raise SessionError(f"{what} on a closed session ({self.where})")
        psycopg = _psycopg()
        with self.shared.borrow() as conn:
            try:
                if self.schema not in self.shared.ready:
                    self._setup(conn)
                    with self.shared.lock:
                        self.shared.ready.add(self.schema)
                if not transaction:  # one statement: atomic and one snapshot on its own
                    with conn.cursor() as cur:
                        return fn(cur)
                with conn.transaction(), conn.cursor() as cur:
                    return fn(cur)
            except psycopg.Error as exc:
                raise SessionError(
                    f"{what} of session {session_id!r} failed in {self.where}: "
                    f"{_first_line(exc)}"
                ) from None

    def _setup(self, conn: Any) -> None:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            cur.execute("SELECT to_regclass(%s)", (f'"{self.schema}".stepswitch_meta',))
            row = cur.fetchone()
            if row is not None and row[0] is not None:
                cur.execute(self.q["schema_version"])
                found = cur.fetchone()
                refused = (None if found is None
                           else schema_refusal(self.where, found[0], "tables"))
                if refused is not None:
                    raise refused
            for name in ("create_schema", "create_meta", "create_sessions", "create_items",
                         "create_operations", "create_append"):
                cur.execute(self.q[name])
            cur.execute(self.q["set_schema_version"], (str(SCHEMA_VERSION),))

    def load_rows(self, session_id: str, limit: int | None) -> tuple[list[str], int, str | None]:
        def go(cur: Any) -> tuple[list[str], int, str | None]:
            cur.execute(self.q["load"], (limit, session_id), prepare=True)
            found = cur.fetchall()
            if not found:
                return [], 0, None
            rows = [r[2] for r in found if r[2] is not None]
            return rows, int(found[0][0]), found[0][1]

        result: tuple[list[str], int, str | None] = self._run(
            "load", session_id, go, transaction=False
        )
        return result

    def _lock_head(self, cur: Any, session_id: str) -> tuple[int, int]:
        cur.execute(self.q["lock_head"], (session_id,))
        head = cur.fetchone()
        if head is None:
            cur.execute(self.q["new_head"], (session_id,))
            cur.execute(self.q["lock_head"], (session_id,))
            head = cur.fetchone()
        return int(head[0]), int(head[1])

    def append_rows(
        self,
        session_id: str,
        rows: list[str],
        operation_id: str | None,
        digest: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> tuple[AppendStatus, int]:
        def go(cur: Any) -> tuple[AppendStatus, int]:
            cur.execute(self.q["append"], (session_id, rows, operation_id, digest,
                                           expected_version, current_agent), prepare=True)
            row = cur.fetchone()
            for known in _STATUSES:
                if row[0] == known:
                    return known, int(row[1])
            raise SessionError(f"append to session {session_id!r}: unexpected reply {row!r}")

        result: tuple[AppendStatus, int] = self._run(
            "append", session_id, go, transaction=False
        )
        return result

    def pop_row(self, session_id: str) -> str | None:
        def go(cur: Any) -> str | None:
            self._lock_head(cur, session_id)
            cur.execute(self.q["pop"], (session_id, session_id))
            row = cur.fetchone()
            if row is None:
                return None
            cur.execute(self.q["bump"], (session_id,))
            data: str = row[0]
            return data

        result: str | None = self._run("pop_item", session_id, go)
        return result

    def clear(self, session_id: str) -> None:
        def go(cur: Any) -> None:
            self._lock_head(cur, session_id)
            cur.execute(self.q["clear_items"], (session_id,))
            cur.execute(self.q["clear_head"], (session_id,))

        self._run("clear_session", session_id, go)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with _REGISTRY_LOCK:
            self.shared.users -= 1
            last = self.shared.users <= 0
            if last and _REGISTRY.get(self.shared.key) is self.shared:
                del _REGISTRY[self.shared.key]
        if last:
            self.shared.close()


_QUERIES = {
    "create_schema": "CREATE SCHEMA IF NOT EXISTS {s}",
    "create_meta": "CREATE TABLE IF NOT EXISTS {s}.stepswitch_meta "
    "(key text PRIMARY KEY, value text NOT NULL)",
    "create_sessions": "CREATE TABLE IF NOT EXISTS {s}.stepswitch_sessions "
    "(session_id text PRIMARY KEY, version bigint NOT NULL, current_agent text, "
    "next_seq bigint NOT NULL)",
    "create_items": "CREATE TABLE IF NOT EXISTS {s}.stepswitch_items (session_id text NOT NULL, "
    "seq bigint NOT NULL, data text NOT NULL, PRIMARY KEY (session_id, seq))",
    "create_operations": "CREATE TABLE IF NOT EXISTS {s}.stepswitch_operations "
    "(session_id text NOT NULL, operation_id text NOT NULL, digest text NOT NULL, "
    "version bigint NOT NULL, PRIMARY KEY (session_id, operation_id))",
    "schema_version": "SELECT value FROM {s}.stepswitch_meta WHERE key = 'schema_version'",
    "set_schema_version": "INSERT INTO {s}.stepswitch_meta (key, value) "
    "VALUES ('schema_version', %s) ON CONFLICT (key) DO NOTHING",
    "load": "SELECT h.version, h.current_agent, i.data FROM {s}.stepswitch_sessions h "
    "LEFT JOIN LATERAL (SELECT seq, data FROM {s}.stepswitch_items "
    "WHERE session_id = h.session_id ORDER BY seq DESC LIMIT %s) i ON true "
    "WHERE h.session_id = %s ORDER BY i.seq",
    "lock_head": "SELECT version, next_seq FROM {s}.stepswitch_sessions "
    "WHERE session_id = %s FOR UPDATE",
    "new_head": "INSERT INTO {s}.stepswitch_sessions (session_id, version, current_agent, "
    "next_seq) VALUES (%s, 0, NULL, 0) ON CONFLICT (session_id) DO NOTHING",
    # The compare-and-append, whole, in one call (one round trip, one transaction): lock
    # the head row, check the operation id, then the version, then write.
    "create_append": """
CREATE OR REPLACE FUNCTION {s}.stepswitch_append(
    p_sid text, p_rows text[], p_op text, p_digest text, p_expected bigint, p_agent text,
    OUT status text, OUT version bigint) LANGUAGE plpgsql AS $fn$
DECLARE
    v bigint; n bigint; done_digest text; done_version bigint;
BEGIN
    SELECT h.version, h.next_seq INTO v, n FROM {s}.stepswitch_sessions h
        WHERE h.session_id = p_sid FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO {s}.stepswitch_sessions (session_id, version, current_agent, next_seq)
            VALUES (p_sid, 0, NULL, 0) ON CONFLICT (session_id) DO NOTHING;
        SELECT h.version, h.next_seq INTO v, n FROM {s}.stepswitch_sessions h
            WHERE h.session_id = p_sid FOR UPDATE;
    END IF;
    IF p_op IS NOT NULL THEN
        SELECT o.digest, o.version INTO done_digest, done_version
            FROM {s}.stepswitch_operations o
            WHERE o.session_id = p_sid AND o.operation_id = p_op;
        IF FOUND THEN
            IF done_digest = p_digest THEN
                status := 'replay'; version := done_version;
            ELSE
                status := 'reused'; version := 0;
            END IF;
            RETURN;
        END IF;
    END IF;
    IF p_expected IS NOT NULL AND p_expected <> v THEN
        status := 'conflict'; version := v;
        RETURN;
    END IF;
    INSERT INTO {s}.stepswitch_items (session_id, seq, data)
        SELECT p_sid, n + t.o - 1, t.d FROM unnest(p_rows) WITH ORDINALITY AS t(d, o);
    v := v + 1;
    UPDATE {s}.stepswitch_sessions SET version = v,
        next_seq = n + coalesce(array_length(p_rows, 1), 0),
        current_agent = coalesce(p_agent, current_agent)
        WHERE session_id = p_sid;
    IF p_op IS NOT NULL THEN
        INSERT INTO {s}.stepswitch_operations (session_id, operation_id, digest, version)
            VALUES (p_sid, p_op, p_digest, v);
    END IF;
    status := 'ok'; version := v;
END
$fn$""",
    # The rows go as a binary array: the text form escapes every quote of their JSON.
    "append": "SELECT status, version FROM {s}.stepswitch_append("
    "%s, %b::text[], %s, %s, %s::bigint, %s)",
    "pop": "DELETE FROM {s}.stepswitch_items WHERE session_id = %s AND seq = "
    "(SELECT max(seq) FROM {s}.stepswitch_items WHERE session_id = %s) RETURNING data",
    "bump": "UPDATE {s}.stepswitch_sessions SET version = version + 1 WHERE session_id = %s",
    "clear_items": "DELETE FROM {s}.stepswitch_items WHERE session_id = %s",
    "clear_head": "UPDATE {s}.stepswitch_sessions SET version = version + 1, "
    "current_agent = NULL WHERE session_id = %s",
}


class PostgresSession(StoreSession):
    """A conversation in PostgreSQL: ``dsn`` is a libpq connection string or URL;
    the tables live in ``schema`` (created when missing).

    ``synchronous_commit=False`` lets an append return before its commit is flushed
    to disk (PostgreSQL's ``synchronous_commit = off``): much faster on a disk whose
    flush is slow, and never torn or interleaved, but a crash of the server may lose
    the last fraction of a second of acknowledged turns (SQLite's WAL with
    ``synchronous=NORMAL`` makes the same trade against power loss).
    """

    def __init__(
        self, session_id: str, dsn: str, *, schema: str = "public",
        synchronous_commit: bool = True,
    ) -> None:
        check_session_id(session_id)
        _psycopg()
        if not isinstance(schema, str) or not _NAME.fullmatch(schema):
            raise SessionError(
                f"PostgresSession: schema {schema!r} is not a plain name (letters, digits "
                "and _, at most 63)"
            )
        key = (dsn, bool(synchronous_commit))
        with _REGISTRY_LOCK:
            shared = _REGISTRY.get(key)
            if shared is None:
                shared = _REGISTRY[key] = _Conn(dsn, bool(synchronous_commit))
            shared.users += 1
        super().__init__(session_id, _Backend(shared, schema))
        self.dsn = dsn
        self.schema = schema
