"""A ``PostgresSession`` used on both sides of ``fork()`` (gunicorn ``--preload``,
multiprocessing's fork context): each process must talk to PostgreSQL over its own
connections. Children that shared the parent's hung, failed with protocol errors and
reported appends that had committed as failed; one closing its session ended the
parent's connection."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from typing import Any

import pytest

from stepswitch.runtime import UserInputItem
from stepswitch.sessions import PostgresSession
from tests._items import text_of
from tests.sessions.stores import PG_DSN, pg_connect, pg_schema

__all__ = ["pg_schema"]

CHILDREN = 4
APPENDS = 15


def _child(session: PostgresSession, n: int, out: Any) -> None:
    """Append APPENDS items through the session the parent made (and opened)."""
    failed: list[str] = []

    async def go() -> None:
        for i in range(APPENDS):
            try:
                await session.append([UserInputItem(f"child {n} item {i}")],
                                     operation_id=f"c{n}-{i}", expected_version=None,
                                     current_agent=None)
            except Exception as exc:
                failed.append(f"{type(exc).__name__}: {exc}")
        await session.close()  # must not end the parent's connection

    try:
        asyncio.run(go())
    except BaseException as exc:
        failed.append(f"{type(exc).__name__}: {exc}")
    out.put((n, os.getpid(), failed))


def test_children_of_a_fork_open_their_own_connections(pg_schema: str) -> None:
    pg_connect().close()  # skips when PostgreSQL is not reachable
    session = PostgresSession("forked", PG_DSN, schema=pg_schema)
    asyncio.run(session.append([UserInputItem("parent first")], operation_id="p0",
                               expected_version=0, current_agent="triage"))
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    children = [ctx.Process(target=_child, args=(session, n, out)) for n in range(CHILDREN)]
    for child in children:
        child.start()
    reports = [out.get(timeout=60) for _ in children]
    for child in children:
        child.join(timeout=30)
        assert child.exitcode == 0
    assert {pid for _, pid, _ in reports}.isdisjoint({os.getpid()})
    assert [failed for _, _, failed in sorted(reports)] == [[]] * CHILDREN
    # the parent's own connection still works, and every append is there once
    asyncio.run(session.append([UserInputItem("parent last")], operation_id="p1",
                               expected_version=None, current_agent=None))
    snap = asyncio.run(session.load())
    asyncio.run(session.close())
    texts = [text_of(item) for item in snap.items]
    expected = {f"child {n} item {i}" for n in range(CHILDREN) for i in range(APPENDS)}
    assert texts[0] == "parent first" and texts[-1] == "parent last"
    assert sorted(texts[1:-1]) == sorted(expected)
    assert snap.version == 2 + CHILDREN * APPENDS
    assert snap.current_agent == "triage"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_child_of_a_bare_fork_appends_and_the_parent_carries_on(pg_schema: str) -> None:
    pg_connect().close()
    session = PostgresSession("bare", PG_DSN, schema=pg_schema)
    asyncio.run(session.append([UserInputItem("before")], operation_id="b",
                               expected_version=0, current_agent=None))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report by exit code, never return into pytest
        code = 1
        try:
            os.close(read)
            asyncio.run(session.append([UserInputItem("child")], operation_id="c",
                                       expected_version=1, current_agent=None))
            asyncio.run(session.close())
            code = 0
        except BaseException as exc:
            os.write(write, repr(exc).encode()[:500])
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    said = os.read(read, 1000).decode()
    os.close(read)
    assert os.waitstatus_to_exitcode(status) == 0, said
    asyncio.run(session.append([UserInputItem("after")], operation_id="a",
                               expected_version=2, current_agent=None))
    items = asyncio.run(session.get_items())
    asyncio.run(session.close())
    assert [text_of(i) for i in items] == ["before", "child", "after"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_fork_while_other_threads_hold_every_connection(pg_schema: str) -> None:
    """Threads of the parent in the middle of their calls at the fork: the child has
    neither those threads nor a right to their connections, and must not wait for the
    pool slots they held."""
    import threading
    import time

    from stepswitch.sessions.postgres import POOL_SIZE

    pg_connect().close()
    session = PostgresSession("busy", PG_DSN, schema=pg_schema)
    asyncio.run(session.load())
    shared = session._backend.shared  # type: ignore[attr-defined]
    held, release = threading.Barrier(POOL_SIZE + 1), threading.Event()

    def hold() -> None:
        with shared.borrow() as conn:
            conn.execute("SELECT 1")
            held.wait()
            release.wait()
            conn.execute("SELECT 1")  # still the parent's, still working

    threads = [threading.Thread(target=hold) for _ in range(POOL_SIZE)]
    for t in threads:
        t.start()
    held.wait()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            asyncio.run(session.append([UserInputItem("child")], operation_id="c",
                                       expected_version=0, current_agent=None))
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not done:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    release.set()
    for t in threads:
        t.join()
    assert done and os.waitstatus_to_exitcode(status) == 0, "the child hung or failed"
    assert [text_of(i) for i in asyncio.run(session.get_items())] == ["child"]
    asyncio.run(session.close())
