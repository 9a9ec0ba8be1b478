"""The lifecycle the scripted servers share (``OpenAIServer``, ``AgentsAPIServer``):
bind 127.0.0.1 on a free port, serve from a daemon thread, stop after ``idle_timeout``
seconds without a request, close idempotently, hand out a real client. Not API."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Self

if TYPE_CHECKING:
    import openai

__all__ = ["LoopbackHandler", "LoopbackServer"]


class LoopbackServer:
    """A server's life on 127.0.0.1; a subclass gives :meth:`_handler` (and may wake
    its waiters in :meth:`_wake` when it stops)."""

    _name: ClassVar[str]
    api_key: str | None
    idle_timeout: float
    _lock: AbstractContextManager[Any]
    _steps: Sequence[object]
    _served: int
    unexpected: list[str]

    def _init_loopback(self) -> None:
        self._httpd: ThreadingHTTPServer | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last_activity = time.monotonic()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def _wake(self) -> None:
        """Called once the server stops: a subclass wakes threads waiting on it."""

    def start(self) -> Self:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread (again after a
        stop: on a new port)."""
        if self.running:
            return self
        self.close()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._port = int(httpd.server_address[1])
        httpd.daemon_threads = True
        httpd.timeout = 0.05
        self._httpd = httpd
        self._stop.clear()
        self._last_activity = time.monotonic()
        self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        httpd = self._httpd
        assert httpd is not None
        try:
            while not self._stop.is_set():
                httpd.handle_request()
                if time.monotonic() - self._last_activity > self.idle_timeout:
                    break
        finally:
            httpd.server_close()
            self._stop.set()
            self._wake()

    def close(self) -> None:
        """Stop serving and release the port (idempotent)."""
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None
        self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._stop.is_set()

    @property
    def port(self) -> int:
        """The port it listens on (or last listened on, once stopped)."""
        if self._port is None:
            raise RuntimeError(f"{self._name} is not started; use `with {self._name}(...)`")
        return self._port

    @property
    def url(self) -> str:
        """The base URL to give the client: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def client(self, *, max_retries: int = 2, timeout: float = 30.0) -> openai.AsyncOpenAI:
        """A real ``AsyncOpenAI`` pointed at this server (with its ``api_key``, if any)."""
        import openai  # here: the server itself needs no client

        return openai.AsyncOpenAI(base_url=self.url, api_key=self.api_key or "test",
                                  max_retries=max_retries, timeout=timeout)

    # ---- the script ----------------------------------------------------------------

    @property
    def remaining(self) -> int:
        """How many steps have not been served yet."""
        with self._lock:
            return len(self._steps) - self._served

    def assert_complete(self) -> None:
        """Raise ``AssertionError`` if a step was not used or a request found no step."""
        with self._lock:
            left = len(self._steps) - self._served
            problems = list(self.unexpected)
        if left:
            problems.append(f"{left} scripted step(s) were never requested")
        if problems:
            raise AssertionError(f"{self._name}: " + "; ".join(problems))


class LoopbackHandler(BaseHTTPRequestHandler):
    """What both servers' request handlers share: kept-alive HTTP/1.1, no log lines, and
    a client that hangs up is not the server's error."""

    # HTTP/1.1 keeps connections alive between requests, as real servers do, so the
    # client's connection pool is exercised; a stream is chunked.
    protocol_version = "HTTP/1.1"
    timeout = 30  # an idle kept-alive connection is dropped after this many seconds
    # headers and body are separate small writes; with Nagle's algorithm on, a kept-alive
    # connection waits for the client's delayed ACK (~40 ms) between them
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def handle(self) -> None:
        # a client that hangs up a kept-alive connection (it abandoned a stream, or its
        # process ended) is not the server's error: no traceback on the test's stderr
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError, TimeoutError):
            self.close_connection = True
