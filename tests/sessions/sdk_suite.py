"""Run the OpenAI Agents SDK's own session tests against ``to_sdk_session(<backend>)``.

A plain script, not collected by pytest (its name does not match ``test_*.py``)::

    PYTHONPATH=$PWD/src:$PWD .venv/bin/python tests/sessions/sdk_suite.py [SDIST_DIR]
        [--backend memory|sqlite|postgres|redis|sdk ...] [--pytest-args "-k limit"]

``SDIST_DIR`` is an extracted ``openai-agents`` sdist (the folder holding ``tests/``); without
it the sdist of the installed SDK version is fetched with ``pip download --no-deps
--no-binary :all:`` into a temporary folder. The SDK's tests are copied to a temporary folder
and run once per backend with a pytest plugin (written next to them) that replaces every
``SQLiteSession`` the tests construct by ``to_sdk_session(<stepswitch backend>)``; nothing
else in the tests changes. Backend ``sdk`` runs the same selection on the SDK's own
``SQLiteSession`` as a baseline. The selection is ``tests/memory/test_session.py``,
``tests/memory/test_session_limit.py`` and, from the runner test files below, the tests
whose code builds a ``SQLiteSession``. Tests of the SDK SQLite class's own internals are
left out (``EXCLUDED``, each with its reason). Prints a pass/fail table per backend; exits 1
when any selected test fails on a stepswitch backend.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

BACKENDS = ("memory", "sqlite", "postgres", "redis")

SESSION_FILES = ("tests/memory/test_session.py", "tests/memory/test_session_limit.py")

# Runner test files; only their tests whose source builds a SQLiteSession are selected.
RUNNER_FILES = (
    "tests/test_agent_runner.py",
    "tests/test_agent_runner_streamed.py",
    "tests/test_max_turns.py",
    "tests/test_soft_cancel.py",
    "tests/test_tool_batch_failure_history.py",
    "tests/test_native_tool_failure_history.py",
    "tests/test_tool_failure_boundaries.py",
    "tests/test_programmatic_tool_calling.py",
    "tests/test_run_impl_resume_paths.py",
)

_INTERNALS = "SQLiteSession's own connection pool / worker-thread connections (_connections)"
_RAW_ROWS = "writes raw rows through SQLiteSession._locked_connection into its own tables"
_LOCKS = "SQLiteSession's class-level per-file lock registry (_lock, _file_lock_counts)"
_SQL_LOCK = "probes the SDK's SQLite file and tables (agent_sessions) with a raw sqlite3 handle"

EXCLUDED: dict[str, str] = {
    "test_await_mutation_cancellation_hides_later_failure_without_loop_error":
        "tests the private helper agents.memory.sqlite_session._await_mutation",
    "test_sqlite_session_close_closes_worker_thread_connections": _INTERNALS,
    "test_sqlite_session_reaps_connections_from_exited_worker_threads": _INTERNALS,
    "test_sqlite_session_closes_retired_connections_before_the_next_allocation": _INTERNALS,
    "test_sqlite_session_keeps_connections_of_live_worker_threads": _INTERNALS,
    "test_sqlite_session_pop_item_skips_corrupt_most_recent": _RAW_ROWS,
    "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": _RAW_ROWS,
    "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": _RAW_ROWS,
    "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": _RAW_ROWS,
    "test_sqlite_session_file_lock_is_shared_across_instances": _LOCKS,
    "test_sqlite_session_failed_add_items_releases_write_lock": _SQL_LOCK,
    "test_sqlite_session_failed_clear_session_rolls_back": _SQL_LOCK,
    "test_sqlite_session_failed_pop_item_releases_write_lock": _SQL_LOCK,
    "test_sqlite_session_rollback_failure_evicts_connection":
        "injects a failing sqlite3.Connection into SQLiteSession._connections",
    "test_sqlite_session_close_retries_quarantined_connection":
        "injects a failing sqlite3.Connection into SQLiteSession._connections",
    "test_handoff_resume_after_cancelled_compaction_commits":
        "patches the private SQLiteSession._insert_items",
    "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome":
        "patches SQLiteSession's private commit path (_insert_items / worker thread)",
}

# The pytest plugin loaded into the copied SDK tests (``-p _stepswitch_swap``).
PLUGIN = '''
"""Swap every SQLiteSession the SDK tests build for to_sdk_session(<backend>)."""
from __future__ import annotations

import inspect
import os
import uuid
from typing import Any

import pytest

BACKEND = os.environ["STEPSWITCH_SDK_BACKEND"]
EXCLUDED = set(os.environ.get("STEPSWITCH_SDK_EXCLUDED", "").split(","))
PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"
REDIS_URL = "redis://127.0.0.1:6379/0"


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    keep, drop = [], []
    for item in items:
        name = getattr(item, "originalname", item.name)
        path = str(item.fspath).replace(os.sep, "/")
        chosen = name not in EXCLUDED
        if chosen and "/tests/memory/" not in path:
            try:
                chosen = "SQLiteSession" in inspect.getsource(item.function)
            except (OSError, TypeError):
                chosen = False
        (keep if chosen else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class _Stores:
    """One stepswitch store per SDK ``db_path`` in a test (":memory:" is per session)."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        self.schemas: list[str] = []
        self.prefixes: list[str] = []

    def backend(self, session_id: str, db_path: Any) -> Any:
        from stepswitch.sessions import (
            MemorySession, MemoryStore, PostgresSession, RedisSession, SQLiteSession,
        )
        path = os.fspath(db_path)
        key = path if path != ":memory:" else uuid.uuid4().hex
        if BACKEND == "memory":
            store = self.keys.setdefault(key, MemoryStore())
            return MemorySession(session_id, store=store)
        if BACKEND == "sqlite":
            return SQLiteSession(session_id, db_path=path)
        if BACKEND == "postgres":
            if key not in self.keys:
                self.keys[key] = f"ss_sdk_{uuid.uuid4().hex[:10]}"
                self.schemas.append(self.keys[key])
            return PostgresSession(session_id, PG_DSN, schema=self.keys[key])
        if BACKEND == "redis":
            if key not in self.keys:
                self.keys[key] = f"ss_sdk:{uuid.uuid4().hex[:10]}:"
                self.prefixes.append(self.keys[key])
            return RedisSession(session_id, url=REDIS_URL, key_prefix=self.keys[key])
        raise SystemExit(f"unknown backend {BACKEND!r}")

    def clean(self) -> None:
        if self.schemas:
            import psycopg
            with psycopg.connect(PG_DSN, autocommit=True) as conn:
                for schema in self.schemas:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        if self.prefixes:
            import redis
            client = redis.Redis.from_url(REDIS_URL)
            for prefix in self.prefixes:
                keys = list(client.scan_iter(prefix + "*"))
                if keys:
                    client.delete(*keys)
            client.close()


_CURRENT: list[Any] = []  # the running test's (_Stores, adapters made)


def _swap_class() -> Any:
    from stepswitch.sessions.sdk import SDKSessionAdapter

    # to_sdk_session(backend, session_settings=...) is SDKSessionAdapter(backend, ...); this
    # subclass builds the adapter exactly that way, so tests that subclass SQLiteSession
    # (at module level too), patch its methods or check isinstance still work on it.
    class SQLiteSession(SDKSessionAdapter):
        def __init__(self, session_id: str, db_path: Any = ":memory:",
                     session_settings: Any = None) -> None:
            stores, made = _CURRENT[-1]
            super().__init__(stores.backend(session_id, db_path),
                             session_settings=session_settings)
            made.append(self)

    return SQLiteSession


def pytest_configure(config: Any) -> None:
    """Swap before the test modules are imported, so ``from agents import SQLiteSession``
    and module-level subclasses of it get the adapter."""
    if BACKEND == "sdk":
        return
    import agents
    import agents.memory

    swapped = _swap_class()
    agents.SQLiteSession = swapped
    agents.memory.SQLiteSession = swapped


@pytest.fixture(autouse=True)
def _stepswitch_session_swap() -> Any:
    if BACKEND == "sdk":
        yield
        return
    # A real SDK SQLiteSession built during the test means a reference the swap missed:
    # the test would not be testing the adapter, so it fails.
    from agents.memory.sqlite_session import SQLiteSession as SDKSQLiteSession

    real: list[str] = []
    sdk_init = SDKSQLiteSession.__init__

    def guarded_init(self: Any, session_id: str, *args: Any, **kwargs: Any) -> None:
        real.append(session_id)
        sdk_init(self, session_id, *args, **kwargs)

    stores, made = _Stores(), []
    _CURRENT.append((stores, made))
    SDKSQLiteSession.__init__ = guarded_init
    try:
        yield
    finally:
        SDKSQLiteSession.__init__ = sdk_init
        _CURRENT.pop()
        for adapter in made:
            try:
                adapter.close()
            except Exception:
                pass
        stores.clean()
    if real:
        pytest.fail(f"the SDK's own SQLiteSession was built for {real}: the swap missed it")
'''


# What the SDK's test files import beyond the SDK itself, as (module, PyPI name); the missing
# ones are installed with pip into the temporary folder only (never into the venv).
TEST_DEPS = (("pytest_asyncio", "pytest-asyncio"), ("httpx", "httpx"),
             ("httpcore", "httpcore"), ("h11", "h11"))


def _install_test_deps(into: Path) -> None:
    import importlib.util

    missing = [pip for mod, pip in TEST_DEPS if importlib.util.find_spec(mod) is None]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--target", str(into), *missing], check=True)


def _fetch_sdist(into: Path) -> Path:
    version = importlib.metadata.version("openai-agents")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         f"openai-agents=={version}", "-d", str(into)],
        check=True,
    )
    (archive,) = into.glob("openai_agents-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / f"openai_agents-{version}"


def _run_backend(root: Path, backend: str, extra: list[str]) -> dict[str, str]:
    report = root / f"junit-{backend}.xml"
    env = dict(os.environ)
    env["STEPSWITCH_SDK_BACKEND"] = backend
    env["STEPSWITCH_SDK_EXCLUDED"] = ",".join(EXCLUDED)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(root), str(root.parent / "deps")]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    files = [f for f in SESSION_FILES + RUNNER_FILES if (root / f).exists()]
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "_stepswitch_swap", "-p", "no:cacheprovider",
           "--rootdir", str(root), f"--junitxml={report}", *files, *extra]
    subprocess.run(cmd, cwd=root, env=env, check=False)
    results: dict[str, str] = {}
    if not report.exists():
        return results
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        results[name] = outcome
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdist", nargs="?", help="extracted openai-agents sdist folder")
    parser.add_argument("--backend", action="append", choices=(*BACKENDS, "sdk"),
                        help="backend to run (repeatable); default: all four stepswitch ones")
    parser.add_argument("--pytest-args", default="",
                        help='extra pytest arguments, one string (e.g. "-k limit -x")')
    args = parser.parse_args(argv)
    backends = args.backend or list(BACKENDS)
    with tempfile.TemporaryDirectory(prefix="ss_sdk_suite_") as tmp:
        work = Path(tmp)
        sdist = Path(args.sdist) if args.sdist else _fetch_sdist(work / "dl")
        if not (sdist / "tests").is_dir():
            print(f"{sdist}: no tests/ folder (expected an extracted openai-agents sdist)",
                  file=sys.stderr)
            return 2
        root = work / "sdk"
        shutil.copytree(sdist / "tests", root / "tests")
        for name in ("pyproject.toml",):
            if (sdist / name).exists():
                shutil.copy(sdist / name, root / name)
        _install_test_deps(work / "deps")
        (root / "_stepswitch_swap.py").write_text(PLUGIN, encoding="utf-8")
        table = {b: _run_backend(root, b, shlex.split(args.pytest_args)) for b in backends}
    print(f"\nexcluded (SDK SQLiteSession internals): {len(EXCLUDED)} tests")
    bad = False
    print(f"{'backend':<10} {'passed':>7} {'failed':>7} {'skipped':>8} {'total':>6}")
    for backend, results in table.items():
        counts = {k: sum(1 for v in results.values() if v == k)
                  for k in ("passed", "failed", "skipped")}
        print(f"{backend:<10} {counts['passed']:>7} {counts['failed']:>7} "
              f"{counts['skipped']:>8} {len(results):>6}")
        if not results or (counts["failed"] and backend != "sdk"):
            bad = True
    for backend, results in table.items():
        for name, outcome in sorted(results.items()):
            if outcome == "failed":
                print(f"  FAILED [{backend}] {name}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
