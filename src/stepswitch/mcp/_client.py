"""Connections to MCP servers through the ``mcp`` client. Not API.

Every connection lives on one background event loop (a daemon thread): the ``mcp``
client's transports are anyio task groups that must close in the task that opened
them, while a run's tool calls come from whichever loop or thread drives the run
(``run``, ``run_sync``, a Temporal activity). A call hops to that loop and back.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from stepswitch.errors import MCPServerError

if TYPE_CHECKING:
    from stepswitch.mcp.servers import MCPServer

__all__ = ["Connection", "connection", "drop", "on_loop", "wait"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_conns: dict[int, Connection] = {}


def _background() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="stepswitch-mcp",
                             daemon=True).start()
            _loop = loop
        return _loop


def on_loop(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Run ``coro`` on the background loop."""
    return asyncio.run_coroutine_threadsafe(coro, _background())


def wait(coro: Coroutine[Any, Any, T], timeout: float) -> T:
    """``coro``'s result, from synchronous code (the CLI), within ``timeout`` seconds."""
    fut = on_loop(coro)
    try:
        return fut.result(timeout)
    except concurrent.futures.TimeoutError:
        fut.cancel()
        raise TimeoutError from None


class Connection:
    """One live session with a server, held open by its owner task."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.session: Any = None
        self._ready = asyncio.Event()
        self._closed = asyncio.Event()
        self._error: BaseException | None = None
        self._owner: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self._owner is not None and not self._owner.done() and self.session is not None

    async def start(self) -> None:
        self._owner = asyncio.get_running_loop().create_task(self._own())
        try:
            await asyncio.wait_for(self._ready.wait(), self.server.startup_timeout)
        except TimeoutError:
            self._owner.cancel()  # the transport then ends the server's process (bounded)
            await asyncio.wait({self._owner}, timeout=3)
            raise self.server.error(
                f"did not start within {self.server.startup_timeout:g} s (startup_timeout=)"
            ) from None
        if self._error is not None:
            raise self.server.error(f"could not start: {_why(self._error)}") from None

    async def _own(self) -> None:
        from mcp import ClientSession

        try:
            async with self.server.transport() as streams:
                read, write = streams[0], streams[1]
                # no read timeout of the session's own: start() bounds the handshake by
                # startup_timeout, and the listing and each call are bounded by timeout
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    self.session = session
                    self._ready.set()
                    await self._closed.wait()
        except BaseException as exc:
            self._error = exc
            self.session = None
            self._ready.set()
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.session = None

    async def list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            from mcp import types

            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self.session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        session = self.session
        if session is None:
            raise self.server.error(f"died before tool {name!r} was called"
                                    + (f": {_why(self._error)}" if self._error else ""))
        try:
            return await session.call_tool(name, arguments)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            drop(self.server)
            raise self.server.error(f"failed during the call of tool {name!r}: "
                                    f"{_why(exc)}") from None

    async def close(self) -> None:
        self._closed.set()
        if self._owner is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._owner), 5)
            except BaseException:
                self._owner.cancel()


def _why(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPServerError):
        return str(exc)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def connection(server: MCPServer) -> Connection:
    """The live connection to ``server`` (started on first use, restarted after death).
    Runs on the background loop."""
    conn = _conns.get(id(server))
    if conn is not None and conn.alive:
        return conn
    conn = Connection(server)
    await conn.start()  # on failure its owner task is done or cancelled: nothing to close
    _conns[id(server)] = conn
    return conn


def drop(server: MCPServer) -> None:
    """Forget ``server``'s connection (it died); the next use starts a new one."""
    conn = _conns.pop(id(server), None)
    if conn is not None:
        conn._closed.set()


async def close_all() -> None:
    """Close every connection (a stdio server's process ends with it)."""
    conns = list(_conns.values())
    _conns.clear()
    await asyncio.gather(*(conn.close() for conn in conns), return_exceptions=True)


def _at_exit() -> None:
    # servers are subprocesses: leave none running (a hung one would outlive us)
    if _conns and _loop is not None and _loop.is_running():
        with contextlib.suppress(Exception):
            wait(close_all(), 6)


atexit.register(_at_exit)


def _fork_reset() -> None:
    global _loop
    _loop = None
    _conns.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fork_reset)
