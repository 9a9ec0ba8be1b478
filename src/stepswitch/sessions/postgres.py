"""``PostgresSession``: conversations in PostgreSQL (psycopg 3, extra
``stepswitch[postgres]``).

An append is one transaction: it locks the session's row (``SELECT … FOR UPDATE``),
checks the operation id and the version, then writes the items, the new head and the
operation in one statement. A load is one statement, so the items and the version it
returns are one snapshot. Tables live in ``schema`` (created when missing, under an
advisory lock so processes racing on a fresh database cannot collide). Sessions of
one process on the same DSN share one connection, guarded by a lock; a broken
connection is reopened on the next call.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any, cast

from stepswitch.errors import SessionError
from stepswitch.sessions._base import SCHEMA_VERSION, AppendStatus, StoreSession, check_session_id

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresSession"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_LOCK_KEY = 0x5E55_1011  # the advisory lock that serializes creating the tables


def _psycopg() -> Any:
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
    """One connection per DSN in this process."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.lock = threading.Lock()
        self.users = 0
        self.ready: set[str] = set()
        self._conn: psycopg.Connection[Any] | None = None
        self.where = f"PostgreSQL {_describe(dsn)}"

    def get(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        pg = _psycopg()
        try:
            conn = cast("psycopg.Connection[Any]", pg.connect(
                self.dsn, autocommit=True, connect_timeout=5))
        except pg.Error as exc:
            raise SessionError(f"cannot connect to {self.where}: {_first_line(exc)}") from None
        self._conn = conn
        return conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


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


_REGISTRY: dict[str, _Conn] = {}
_REGISTRY_LOCK = threading.Lock()


class _Backend:
    def __init__(self, shared: _Conn, schema: str) -> None:
        self.shared = shared
        self.schema = schema
        self.where = f"{shared.where} (schema {schema})"
        self.closed = False
        from psycopg import sql

        s = sql.Identifier(schema)
        self.q = {
            name: sql.SQL(text).format(s=s)
            for name, text in _QUERIES.items()
        }

    def _run(self, what: str, session_id: str, fn: Any) -> Any:
        if self.closed:
            raise SessionError(f"{what} on a closed session ({self.where})")
        psycopg = _psycopg()
        with self.shared.lock:
            conn = self.shared.get()
            try:
                if self.schema not in self.shared.ready:
                    self._setup(conn)
                    self.shared.ready.add(self.schema)
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
                if found is not None and _newer(found[0]):
                    raise SessionError(
                        f"{self.where}: its session tables were written by a newer "
                        f"stepswitch (schema version {found[0]}; this one reads "
                        f"{SCHEMA_VERSION}); upgrade stepswitch"
                    )
            for name in ("create_schema", "create_meta", "create_sessions", "create_items",
                         "create_operations"):
                cur.execute(self.q[name])
            cur.execute(self.q["set_schema_version"], (str(SCHEMA_VERSION),))

    def load_rows(self, session_id: str, limit: int | None) -> tuple[list[str], int, str | None]:
        def go(cur: Any) -> tuple[list[str], int, str | None]:
            cur.execute(self.q["load"], (limit, session_id))
            found = cur.fetchall()
            if not found:
                return [], 0, None
            rows = [r[2] for r in found if r[2] is not None]
            return rows, int(found[0][0]), found[0][1]

        result: tuple[list[str], int, str | None] = self._run("load", session_id, go)
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
            version, seq = self._lock_head(cur, session_id)
            if operation_id is not None:
                cur.execute(self.q["find_op"], (session_id, operation_id))
                done = cur.fetchone()
                if done is not None:
                    return ("replay", int(done[1])) if done[0] == digest else ("reused", 0)
            if expected_version is not None and expected_version != version:
                return "conflict", version
            version += 1
            cur.execute(self.q["write"], {
                "sid": session_id, "seq": seq, "rows": rows, "version": version,
                "next": seq + len(rows), "agent": current_agent, "op": operation_id,
                "digest": digest,
            })
            return "ok", version

        result: tuple[AppendStatus, int] = self._run("append", session_id, go)
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
            if last and _REGISTRY.get(self.shared.dsn) is self.shared:
                del _REGISTRY[self.shared.dsn]
        if last:
            with self.shared.lock:
                self.shared.close()


def _newer(value: object) -> bool:
    try:
        return int(str(value)) > SCHEMA_VERSION
    except ValueError:
        return True


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
    "find_op": "SELECT digest, version FROM {s}.stepswitch_operations "
    "WHERE session_id = %s AND operation_id = %s",
    "write": "WITH items AS (INSERT INTO {s}.stepswitch_items (session_id, seq, data) "
    "SELECT %(sid)s, %(seq)s + t.o - 1, t.d FROM unnest(%(rows)s::text[]) "
    "WITH ORDINALITY AS t(d, o)), "
    "head AS (UPDATE {s}.stepswitch_sessions SET version = %(version)s, next_seq = %(next)s, "
    "current_agent = COALESCE(%(agent)s, current_agent) WHERE session_id = %(sid)s) "
    "INSERT INTO {s}.stepswitch_operations (session_id, operation_id, digest, version) "
    "SELECT %(sid)s, %(op)s, %(digest)s, %(version)s WHERE %(op)s::text IS NOT NULL",
    "pop": "DELETE FROM {s}.stepswitch_items WHERE session_id = %s AND seq = "
    "(SELECT max(seq) FROM {s}.stepswitch_items WHERE session_id = %s) RETURNING data",
    "bump": "UPDATE {s}.stepswitch_sessions SET version = version + 1 WHERE session_id = %s",
    "clear_items": "DELETE FROM {s}.stepswitch_items WHERE session_id = %s",
    "clear_head": "UPDATE {s}.stepswitch_sessions SET version = version + 1, "
    "current_agent = NULL WHERE session_id = %s",
}


class PostgresSession(StoreSession):
    """A conversation in PostgreSQL: ``dsn`` is a libpq connection string or URL;
    the tables live in ``schema`` (created when missing)."""

    def __init__(self, session_id: str, dsn: str, *, schema: str = "public") -> None:
        check_session_id(session_id)
        _psycopg()
        if not isinstance(schema, str) or not _NAME.fullmatch(schema):
            raise SessionError(
                f"PostgresSession: schema {schema!r} is not a plain name (letters, digits "
                "and _, at most 63)"
            )
        with _REGISTRY_LOCK:
            shared = _REGISTRY.get(dsn)
            if shared is None:
                shared = _REGISTRY[dsn] = _Conn(dsn)
            shared.users += 1
        super().__init__(session_id, _Backend(shared, schema))
        self.dsn = dsn
        self.schema = schema
