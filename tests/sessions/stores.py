"""Real stores for the session tests: a temporary SQLite file, a per-test PostgreSQL
schema, a per-test Redis key prefix (each cleaned up), and raw writes that damage a
stored item on purpose."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from stepswitch.sessions import PostgresSession, RedisSession, SQLiteSession
from tests.services import service_missing

PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"
REDIS_URL = "redis://127.0.0.1:6379/0"


def pg_connect() -> Any:
    import psycopg

    try:
        return psycopg.connect(PG_DSN, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        service_missing(f"PostgreSQL is not reachable at {PG_DSN}: {exc}")


def redis_client() -> Any:
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        service_missing(f"Redis is not reachable at {REDIS_URL}: {exc}")
    return client


@pytest.fixture
def pg_schema() -> Iterator[str]:
    conn = pg_connect()
    schema = f"ss_test_{uuid.uuid4().hex[:10]}"
    try:
        yield schema
    finally:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        conn.close()


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    client = redis_client()
    prefix = f"ss_test:{uuid.uuid4().hex[:10]}:"
    try:
        yield prefix
    finally:
        keys = list(client.scan_iter(prefix + "*"))
        if keys:
            client.delete(*keys)
        client.close()


def sqlite_factory(path: str) -> Any:
    return functools.partial(SQLiteSession, db_path=path)


def pg_factory(schema: str) -> Any:
    return functools.partial(PostgresSession, dsn=PG_DSN, schema=schema)


def redis_factory(prefix: str) -> Any:
    return functools.partial(RedisSession, url=REDIS_URL, key_prefix=prefix)


def corrupt_sqlite(session: Any, index: int, text: str) -> None:
    conn = session._raw()
    conn.execute(
        "UPDATE stepswitch_items SET data = ? WHERE session_id = ? AND seq = "
        "(SELECT seq FROM stepswitch_items WHERE session_id = ? ORDER BY seq "
        "LIMIT 1 OFFSET ?)",
        (text, session.session_id, session.session_id, index),
    )


def corrupt_pg(session: Any, index: int, text: str) -> None:
    conn = pg_connect()
    try:
        conn.execute(
            f'UPDATE "{session.schema}".stepswitch_items SET data = %s WHERE session_id = %s '
            f'AND seq = (SELECT seq FROM "{session.schema}".stepswitch_items WHERE '
            "session_id = %s ORDER BY seq LIMIT 1 OFFSET %s)",
            (text, session.session_id, session.session_id, index),
        )
    finally:
        conn.close()


def corrupt_redis(session: Any, index: int, text: str) -> None:
    client = redis_client()
    try:
        client.lset(f"{session.key_prefix}{session.session_id}:items", index, text)
    finally:
        client.close()
