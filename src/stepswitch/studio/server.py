"""Serve the studio page on 127.0.0.1 (stdlib ``http.server``, read-only: GET only).

``/`` and ``/static/*`` are the assets shipped in this package; ``/api/page`` is the
page's data (:mod:`~stepswitch.studio.page`), ``/api/version`` a counter the page polls,
bumped when a watched file (the workflow's module, a trail) changes and the data was
rebuilt. The data is built in a child process, so a reload imports the edited file anew.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from stepswitch.errors import BuildError

__all__ = ["BuildError", "Studio", "build_document"]

STATIC = Path(__file__).with_name("static")
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8"}


def build_document(args: Sequence[str]) -> bytes:
    """The page's JSON, built by ``python -m stepswitch.studio.page ARGS`` in a child."""
    env = dict(os.environ)
    # the child imports this very stepswitch, whatever its own sys.path would find first
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-m", "stepswitch.studio.page", *args],
                          capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BuildError(lines[-1] if lines else f"exit {proc.returncode}")
    return proc.stdout


class Studio:
    """The data, its version and the watcher that rebuilds it."""

    def __init__(self, args: Sequence[str], *, poll: float = 0.5) -> None:
        self.args = list(args)
        self.poll = poll
        self.document = build_document(self.args)
        self.version = 1
        self.error: str | None = None
        self._stamps = self._stat()
        self._stop = threading.Event()

    def _watched(self) -> list[str]:
        watched: list[str] = json.loads(self.document).get("watched", [])
        return watched

    def _stat(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for name in self._watched():
            try:
                out[name] = os.stat(name).st_mtime_ns
            except OSError:
                out[name] = -1
        return out

    def watch(self) -> None:
        while not self._stop.wait(self.poll):
            stamps = self._stat()
            if stamps == self._stamps:
                continue
            self._stamps = stamps
            try:
                self.document = build_document(self.args)
            except BuildError as exc:  # shown on the page, over the last good data
                self.error = str(exc)
                continue
            self.error = None
            self.version += 1

    def stop(self) -> None:
        self._stop.set()

    def serve(self, port: int) -> ThreadingHTTPServer:
        """A bound server (not yet serving); ``OSError`` when the port is taken."""
        studio = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def _send(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                # A page of another site that a rebinding DNS name points at 127.0.0.1
                # sends its own Host: refuse it, so only this machine's pages read ours.
                port = port_of[0]
                if self.headers.get("Host") not in (f"127.0.0.1:{port}", f"localhost:{port}"):
                    self._send(403, b"forbidden: not this studio's address", "text/plain")
                    return
                path = self.path.split("?", 1)[0]
                if path == "/api/page":
                    self._send(200, studio.document, "application/json")
                elif path == "/api/version":
                    body = json.dumps({"version": studio.version, "error": studio.error})
                    self._send(200, body.encode(), "application/json")
                else:
                    name = "index.html" if path == "/" else path.removeprefix("/static/")
                    file = STATIC / name
                    if "/" in name or file.suffix not in _TYPES or not file.is_file():
                        self._send(404, b"not found", "text/plain")
                        return
                    self._send(200, file.read_bytes(), _TYPES[file.suffix])

        port_of = [port]
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        port_of[0] = server.server_address[1]
        return server

    def run(self, server: ThreadingHTTPServer) -> None:
        watcher = threading.Thread(target=self.watch, daemon=True)
        watcher.start()
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            self.stop()
            server.server_close()

