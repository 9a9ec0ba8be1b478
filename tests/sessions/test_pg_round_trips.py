"""How many round trips a PostgreSQL session turn costs, counted on the wire.

The session talks to the real server through a loopback proxy that reads the server's
side of the protocol and counts its ReadyForQuery messages: the server sends exactly one
at the end of every exchange the client waits for (a simple query, or an extended-query
batch closed by Sync), so the count is the number of round trips, whatever the driver
does inside.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import suppress

import pytest

from stepswitch.runtime.items import (
    MessageOutputItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.sessions import PostgresSession
from tests.sessions.stores import pg_connect, pg_schema

__all__ = ["pg_schema"]

UPSTREAM = ("127.0.0.1", 5432)


class RoundTrips:
    """A TCP proxy to the server that counts the server's ReadyForQuery messages."""

    def __init__(self) -> None:
        self.exchanges = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(UPSTREAM)
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, from_server: bool) -> None:
        pending = b""
        with suppress(OSError):
            while data := src.recv(65536):
                if from_server:  # whole messages: a type byte, then a length that counts itself
                    pending += data
                    while len(pending) >= 5:
                        size = 1 + int.from_bytes(pending[1:5], "big")
                        if len(pending) < size:
                            break
                        if pending[:1] == b"Z":
                            with self._lock:
                                self.exchanges += 1
                        pending = pending[size:]
                dst.sendall(data)
        with suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        for s in self._sockets:
            with suppress(OSError):
                s.close()


@pytest.fixture
def round_trips() -> Iterator[RoundTrips]:
    pg_connect().close()  # skips (or fails, in CI) without a server
    proxy = RoundTrips()
    try:
        yield proxy
    finally:
        proxy.close()


def _turn(n: int) -> list[object]:
    call = f"call_{n}"
    return [
        UserInputItem(f"message {n}"),
        ToolCallItem("refund", "lookup_order", call, '{"order_id": 42}'),
        ToolCallOutputItem("refund", call, "order 42: shipped", "lookup_order"),
        MessageOutputItem("refund", f"answer {n}"),
    ]


@pytest.mark.parametrize("synchronous_commit", [True, False])
def test_a_turn_is_one_round_trip_to_load_and_one_to_append(
    round_trips: RoundTrips, pg_schema: str, synchronous_commit: bool
) -> None:
    dsn = (f"postgresql://postgres@127.0.0.1:{round_trips.port}/test"
           "?sslmode=disable&gssencmode=disable")
    session = PostgresSession("rt", dsn, schema=pg_schema,
                              synchronous_commit=synchronous_commit)

    async def turns() -> list[tuple[int, int]]:
        counts = []
        for t in range(12):  # past the driver's threshold for preparing a statement
            before = round_trips.exchanges
            snap = await session.load(limit=20)
            loaded = round_trips.exchanges
            await session.append(_turn(t), operation_id=f"run:t{t}",
                                 expected_version=snap.version, current_agent="refund")
            counts.append((loaded - before, round_trips.exchanges - loaded))
        replay = round_trips.exchanges
        await session.append(_turn(11), operation_id="run:t11", expected_version=11,
                             current_agent="refund")  # a replay of the last turn's append
        counts.append((0, round_trips.exchanges - replay))
        assert len((await session.load()).items) == 48
        await session.close()
        return counts

    counts = asyncio.run(turns())
    # the first turn connects, creates the tables and prepares both statements
    assert counts[0][0] >= 1 and counts[0][1] >= 1
    assert counts[1:] == [(1, 1)] * 11 + [(0, 1)]
