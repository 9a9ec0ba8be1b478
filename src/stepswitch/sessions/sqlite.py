"""``SQLiteSession``: conversations in an SQLite file, with nothing but the stdlib.

Safe across threads and processes on one file: the database runs in WAL mode with a
busy timeout, and every write is one ``BEGIN IMMEDIATE`` transaction (it takes the
write lock before it reads the version it checks, so two writers can never both see
the same version). The tables are created inside such a transaction too, so processes
racing to open a fresh file cannot trip over each other. Within one process, sessions
on the same file share one connection (guarded by a lock). Nothing is opened, created
or written until a session is first read or written.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from stepswitch.errors import SessionError
from stepswitch.sessions._base import (
    SCHEMA_VERSION,
    AppendStatus,
    StoreSession,
    check_session_id,
    schema_refusal,
)

__all__ = ["SQLiteSession"]

BUSY_TIMEOUT_S = 30.0

_TABLES = (
    "CREATE TABLE IF NOT EXISTS stepswitch_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS stepswitch_sessions (session_id TEXT PRIMARY KEY, "
    "version INTEGER NOT NULL, current_agent TEXT, next_seq INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS stepswitch_items (session_id TEXT NOT NULL, "
    "seq INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS stepswitch_operations (session_id TEXT NOT NULL, "
    "operation_id TEXT NOT NULL, digest TEXT NOT NULL, version INTEGER NOT NULL, "
    "PRIMARY KEY (session_id, operation_id)) WITHOUT ROWID",
)


class _Db:
    """One connection to one file, shared by this process's sessions on it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.where = f"SQLite file {path}" if path != ":memory:" else "an in-memory SQLite database"
        self.lock = threading.Lock()
        self.users = 0
        if path != ":memory:":
            _make_folder(path, self.where)
            _check_or_create(path, self.where)
        try:
            self.conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise SessionError(f"cannot open {self.where}: {exc}") from None
        try:
            self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if path != ":memory:":
                self._wal()
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self._setup()
        except sqlite3.Error as exc:
            self.conn.close()
            raise SessionError(f"cannot use {self.where} as a session store: {exc}") from None
        except SessionError:
            self.conn.close()
            raise

    def _wal(self) -> None:
        """Switch the file to WAL once. Changing the journal mode needs the file to
        itself and SQLite may answer "locked" at once, without its busy handler, while
        another process opens the same fresh file: so read the mode first (a file
        already in WAL needs no lock) and retry within the busy timeout."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                row = self.conn.execute("PRAGMA journal_mode").fetchone()
                if row is None or str(row[0]).lower() != "wal":
                    self.conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _setup(self) -> None:
        with self.write() as cur:
            has_meta = cur.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'stepswitch_meta'"
            ).fetchone()
            if has_meta:
                row = cur.execute(
                    "SELECT value FROM stepswitch_meta WHERE key = 'schema_version'"
                ).fetchone()
                refused = None if row is None else schema_refusal(self.where, row[0], "tables")
                if refused is not None:
                    raise refused
            for ddl in _TABLES:
                cur.execute(ddl)
            cur.execute(
                "INSERT OR IGNORE INTO stepswitch_meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )

    @contextmanager
    def write(self) -> Iterator[sqlite3.Cursor]:
        """One immediate transaction (the caller holds ``lock`` or is alone)."""
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            self.conn.rollback()
            raise
        else:
            cur.execute("COMMIT")
        finally:
            cur.close()


def _make_folder(path: str, where: str) -> None:
    """Create the folders ``path`` needs, as ``render -o``, ``compile -o`` and chat's
    default store do: ``sqlite:///out/chat.db`` works in a fresh clone."""
    folder = os.path.dirname(path)
    if not folder:
        return
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise SessionError(
            f"cannot open {where}: cannot make its folder {folder}: {exc.strerror or exc}"
        ) from None


_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""


def _check_or_create(path: str, where: str) -> None:
    """Refuse an existing file that is not already an SQLite database; make a missing
    one. SQLite itself would turn any empty file (a package's ``__init__.py``) into a
    database, and any file at all, on the first write, into a broken one. So a missing
    file is made whole, elsewhere, and linked into place: it is never seen empty, and a
    process racing to open the same fresh path finds either nothing or a database."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        _create(path, where)
        return
    except OSError as exc:
        raise SessionError(f"cannot open {where}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SessionError(f"cannot open {where}: it is a folder; name a database file")
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device: never opened, never read
        raise SessionError(f"cannot open {where}: not a regular file; name a database file")
    try:
        with open(path, "rb") as f:
            head = f.read(len(_HEADER))
    except OSError as exc:
        raise SessionError(f"cannot open {where}: {exc.strerror or exc}") from None
    if head != _HEADER:
        what = "is empty" if info.st_size == 0 else "is not an SQLite database"
        raise SessionError(
            f"refusing {where}: the file exists and {what}, and using it would overwrite "
            "it; name a new file or an existing session database"
        )


def _create(path: str, where: str) -> None:
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
    try:  # made as SQLite would make it: mode 0666 less the umask
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise SessionError(f"cannot create {where}: {exc.strerror or exc}") from None
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")  # writes the header; stays in the file
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: it is checked when opened
        except OSError:  # a file system without hard links: copy, never replace
            _copy_new(tmp, path, where)
    except sqlite3.Error as exc:
        raise SessionError(f"cannot create {where}: {exc}") from None
    finally:
        for leftover in (tmp, tmp + "-wal", tmp + "-shm"):
            with suppress(OSError):
                os.unlink(leftover)


def _copy_new(source: str, path: str, where: str) -> None:
    with open(source, "rb") as f:
        data = f.read()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return
    except OSError as exc:
        raise SessionError(f"cannot create {where}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(data)


_REGISTRY: dict[str, _Db] = {}
_REGISTRY_LOCK = threading.Lock()


def _acquire(path: str) -> _Db:
    if path == ":memory:":
        db = _Db(path)
        db.users = 1
        return db
    key = os.path.realpath(path)
    with _REGISTRY_LOCK:
        found = _REGISTRY.get(key)
        if found is None:
            found = _REGISTRY[key] = _Db(path)
        found.users += 1
        return found


def _release(db: _Db) -> None:
    with _REGISTRY_LOCK:
        db.users -= 1
        if db.users > 0:
            return
        if _REGISTRY.get(os.path.realpath(db.path)) is db:
            del _REGISTRY[os.path.realpath(db.path)]
    with db.lock:
        db.conn.close()


class _Backend:
    """Connects on first use, not when the session is made: a session that is opened
    and never used (a command that fails before its run) leaves no file behind."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.where = f"SQLite file {path}" if path != ":memory:" else "an in-memory SQLite database"
        self.closed = False
        self._db: _Db | None = None
        self._connect_lock = threading.Lock()

    @property
    def db(self) -> _Db:
        found = self._db
        if found is None:
            with self._connect_lock:
                found = self._db
                if found is None:
                    found = self._db = _acquire(self.path)
        return found

    def _guard(self, what: str) -> None:
        if self.closed:
            raise SessionError(f"{what} on a closed session ({self.where})")

    def load_rows(self, session_id: str, limit: int | None) -> tuple[list[str], int, str | None]:
        self._guard("load")
        db = self.db
        with db.lock:
            cur = db.conn.cursor()
            try:
                cur.execute("BEGIN")  # one snapshot for the head and the items
                head = cur.execute(
                    "SELECT version, current_agent FROM stepswitch_sessions "
                    "WHERE session_id = ?",
                    (session_id,),
                ).fetchone()
                if head is None:
                    rows: list[str] = []
                    version, agent = 0, None
                else:
                    version, agent = head
                    rows = [r[0] for r in cur.execute(
                        "SELECT data FROM stepswitch_items WHERE session_id = ? "
                        "ORDER BY seq DESC LIMIT ?",
                        (session_id, -1 if limit is None else limit),
                    )]
                    rows.reverse()
                cur.execute("COMMIT")
            except sqlite3.Error as exc:
                db.conn.rollback()
                raise SessionError(f"cannot read session {session_id!r} in {self.where}: {exc}") \
                    from None
            finally:
                cur.close()
        return rows, version, agent

    def append_rows(
        self,
        session_id: str,
        rows: list[str],
        operation_id: str | None,
        digest: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> tuple[AppendStatus, int]:
        self._guard("append")
        db = self.db
        try:
            with db.lock, db.write() as cur:
                if operation_id is not None:
                    done = cur.execute(
                        "SELECT digest, version FROM stepswitch_operations "
                        "WHERE session_id = ? AND operation_id = ?",
                        (session_id, operation_id),
                    ).fetchone()
                    if done is not None:
                        return ("replay", done[1]) if done[0] == digest else ("reused", 0)
                head = cur.execute(
                    "SELECT version, next_seq FROM stepswitch_sessions WHERE session_id = ?",
                    (session_id,),
                ).fetchone()
                version, seq = head if head is not None else (0, 0)
                if expected_version is not None and expected_version != version:
                    return "conflict", version
                cur.executemany(
                    "INSERT INTO stepswitch_items (session_id, seq, data) VALUES (?, ?, ?)",
                    [(session_id, seq + i, row) for i, row in enumerate(rows)],
                )
                version += 1
                if head is None:
                    cur.execute(
                        "INSERT INTO stepswitch_sessions (session_id, version, current_agent, "
                        "next_seq) VALUES (?, ?, ?, ?)",
                        (session_id, version, current_agent, seq + len(rows)),
                    )
                else:
                    cur.execute(
                        "UPDATE stepswitch_sessions SET version = ?, next_seq = ?, "
                        "current_agent = COALESCE(?, current_agent) WHERE session_id = ?",
                        (version, seq + len(rows), current_agent, session_id),
                    )
                if operation_id is not None:
                    cur.execute(
                        "INSERT INTO stepswitch_operations (session_id, operation_id, digest, "
                        "version) VALUES (?, ?, ?, ?)",
                        (session_id, operation_id, digest, version),
                    )
                return "ok", version
        except sqlite3.Error as exc:
            raise SessionError(
                f"cannot append to session {session_id!r} in {self.where}: {exc}"
            ) from None

    def pop_row(self, session_id: str) -> str | None:
        self._guard("pop_item")
        db = self.db
        try:
            with db.lock, db.write() as cur:
                row = cur.execute(
                    "SELECT seq, data FROM stepswitch_items WHERE session_id = ? "
                    "ORDER BY seq DESC LIMIT 1",
                    (session_id,),
                ).fetchone()
                if row is None:
                    return None
                cur.execute(
                    "DELETE FROM stepswitch_items WHERE session_id = ? AND seq = ?",
                    (session_id, row[0]),
                )
                cur.execute(
                    "UPDATE stepswitch_sessions SET version = version + 1 WHERE session_id = ?",
                    (session_id,),
                )
                data: str = row[1]
                return data
        except sqlite3.Error as exc:
            raise SessionError(f"cannot pop from session {session_id!r} in {self.where}: {exc}") \
                from None

    def clear(self, session_id: str) -> None:
        self._guard("clear_session")
        db = self.db
        try:
            with db.lock, db.write() as cur:
                cur.execute("DELETE FROM stepswitch_items WHERE session_id = ?", (session_id,))
                cur.execute(
                    "INSERT INTO stepswitch_sessions (session_id, version, current_agent, "
                    "next_seq) VALUES (?, 1, NULL, 0) ON CONFLICT (session_id) DO UPDATE SET "
                    "version = version + 1, current_agent = NULL",
                    (session_id,),
                )
        except sqlite3.Error as exc:
            raise SessionError(f"cannot clear session {session_id!r} in {self.where}: {exc}") \
                from None

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._db is not None:
                _release(self._db)


class SQLiteSession(StoreSession):
    """A conversation in an SQLite file (``":memory:"``: a private in-memory database)."""

    def __init__(self, session_id: str, db_path: str | os.PathLike[str] = ":memory:") -> None:
        check_session_id(session_id)
        path = os.fspath(db_path)
        if not isinstance(path, str) or not path:
            raise SessionError("SQLiteSession: db_path must be a file path or ':memory:'")
        super().__init__(session_id, _Backend(path))
        self.db_path = path

    def _raw(self) -> sqlite3.Connection:
        """The shared connection (for tests that damage a store on purpose)."""
        backend = self._backend
        assert isinstance(backend, _Backend)
        return backend.db.conn
