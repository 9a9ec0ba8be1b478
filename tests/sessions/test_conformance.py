"""Every backend passes the one conformance suite, on real stores."""

from __future__ import annotations

from typing import Any

import pytest

from stepswitch.sessions import MemorySession, MemoryStore
from stepswitch.testing import session_conformance
from tests.sessions.stores import (
    corrupt_pg,
    corrupt_redis,
    corrupt_sqlite,
    pg_factory,
    pg_schema,
    redis_factory,
    redis_prefix,
    sqlite_factory,
)

__all__ = ["pg_schema", "redis_prefix"]  # fixtures used below


class TestMemory(session_conformance()):  # type: ignore[misc]
    @pytest.fixture
    def session_factory(self) -> Any:
        store = MemoryStore()
        return lambda session_id: MemorySession(session_id, store=store)

    @pytest.fixture
    def corrupt_item(self) -> Any:
        return lambda s, index, text: s.store.corrupt(s.session_id, index, text)


class TestSQLite(session_conformance(corrupt=corrupt_sqlite)):  # type: ignore[misc]
    @pytest.fixture
    def session_factory(self, tmp_path: Any) -> Any:
        return sqlite_factory(str(tmp_path / "sessions.db"))

    @pytest.fixture
    def process_factory(self, session_factory: Any) -> Any:
        return session_factory


class TestPostgres(session_conformance(corrupt=corrupt_pg)):  # type: ignore[misc]
    @pytest.fixture
    def session_factory(self, pg_schema: str) -> Any:
        return pg_factory(pg_schema)

    @pytest.fixture
    def process_factory(self, session_factory: Any) -> Any:
        return session_factory


class TestRedis(session_conformance(corrupt=corrupt_redis)):  # type: ignore[misc]
    @pytest.fixture
    def session_factory(self, redis_prefix: str) -> Any:
        return redis_factory(redis_prefix)

    @pytest.fixture
    def process_factory(self, session_factory: Any) -> Any:
        return session_factory
