"""A loopback server that is no Agents API: every request gets the same 200 answer, a
body sent as given (HTML, JSON of the wrong shape, an SSE stream of garbage), or an
event stream whose headers come and then nothing at all (``silent=True``)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

__all__ = ["RawServer"]


class RawServer:
    """``with RawServer(body, content_type) as server: ... server.url ...``; it counts
    the requests it answered in ``hits``."""

    def __init__(self, body: bytes = b"", content_type: str = "text/event-stream", *,
                 silent: bool = False) -> None:
        self.body, self.content_type, self.silent = body, content_type, silent
        self.hits = 0
        self._release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                owner.hits += 1
                self.send_response(200)
                self.send_header("Content-Type", owner.content_type)
                if owner.silent:  # an open stream that never says a word
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.flush()
                    owner._release.wait(60)
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(owner.body)))
                self.end_headers()
                self.wfile.write(owner.body)

            do_GET = do_POST

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
