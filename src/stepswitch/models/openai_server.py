"""``OpenAIServer``: a scripted OpenAI-compatible HTTP server on 127.0.0.1.

It speaks ``POST /v1/responses`` and ``POST /v1/chat/completions`` (JSON or SSE
streams, in each API's real event shapes), answers every request with the next step
of its script (see :mod:`stepswitch.models.script`: output items, an error status, or
a raw body), and records every request. Point the real ``openai`` client at
``server.url`` to test a workflow over real HTTP with no network::

    from stepswitch.models.openai_server import OpenAIServer
    from stepswitch.models.script import call, message

    with OpenAIServer([[call("lookup_order", {"order_id": 42})], [message("Done.")]]) as server:
        client = AsyncOpenAI(base_url=server.url, api_key="test")
        ...
        assert server.requests[1].body["input"][-1]["type"] == "function_call_output"

The server binds only to 127.0.0.1, bounds request bodies and request counts, runs
in a daemon thread, and stops itself after ``idle_timeout`` seconds without a request.
A request the script has no step for gets a 400 naming the problem (so the client
does not retry it) and is listed in ``unexpected``; ``assert_complete()`` fails then.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from stepswitch._dataclass import dataclass
from stepswitch.models import _wire
from stepswitch.models._loopback import LoopbackHandler, LoopbackServer
from stepswitch.models.script import ErrorReply, RawReply, Reply, fill_call_ids, normalize_step

if TYPE_CHECKING:
    pass

__all__ = ["OpenAIServer", "RecordedRequest"]

_ROUTES = ("/v1/responses", "/v1/chat/completions")


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any
    """The parsed JSON body, or ``None`` when there was none or it was not JSON."""
    raw: bytes = field(repr=False)

    @property
    def api(self) -> str:
        """``"responses"``, ``"chat"`` or ``"other"``."""
        if self.path.endswith("/responses"):
            return "responses"
        if self.path.endswith("/chat/completions"):
            return "chat"
        return "other"

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True


class OpenAIServer(LoopbackServer):
    """A scripted OpenAI-compatible server. Use as a context manager, call
    ``start()``/``close()``, or take the ``openai_server`` pytest fixture."""

    _name = "OpenAIServer"
    _lock: threading.Lock

    def __init__(
        self,
        script: Iterable[Any] = (),
        *,
        api_key: str | None = None,
        model_name: str | None = None,
        chunk_size: int = 8,
        max_requests: int = 10_000,
        max_body_bytes: int = 8 * 1024 * 1024,
        idle_timeout: float = 300.0,
    ) -> None:
        """``script``: the steps, one per model call, in order (more with :meth:`add`).
        ``api_key``: when set, a request without ``Authorization: Bearer <api_key>``
        gets a 401 (no step used). ``model_name``: the model named in responses
        (default: the one the request asked for). ``chunk_size``: characters per
        streamed delta."""
        self._steps: list[Reply | ErrorReply | RawReply] = []
        self._lock = threading.Lock()
        self._served = 0
        self.api_key = api_key
        self.model_name = model_name
        self.chunk_size = max(1, chunk_size)
        self.max_requests = max_requests
        self.max_body_bytes = max_body_bytes
        self.idle_timeout = idle_timeout
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[str] = []
        self._init_loopback()
        self.add(*script)

    # ---- the script ----------------------------------------------------------------

    def add(self, *steps: Any) -> None:
        """Append steps to the script."""
        with self._lock:
            start = len(self._steps)
            for i, step in enumerate(steps):
                self._steps.append(normalize_step(step, where=f"OpenAIServer step {start + i + 1}"))

    def model_requests(self, api: str | None = None) -> list[RecordedRequest]:
        """The recorded requests to the model endpoints (of one ``api`` if given)."""
        return [r for r in self.requests if r.api != "other" and (api is None or r.api == api)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def _next_step(self, api: str) -> tuple[int, Reply | ErrorReply | RawReply] | None:
        with self._lock:
            if self._served >= len(self._steps):
                return None
            n = self._served
            self._served += 1
            return n, self._steps[n]

    def _record(self, request: RecordedRequest) -> bool:
        with self._lock:
            self._last_activity = time.monotonic()
            if len(self.requests) >= self.max_requests:
                return False
            self.requests.append(request)
            return True


def _handler_for(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = server

    return Handler


class _Handler(LoopbackHandler):
    owner: OpenAIServer
    server_version = "stepswitch-OpenAIServer"

    def do_GET(self) -> None:
        self._safely()

    def do_POST(self) -> None:
        self._safely()

    def _safely(self) -> None:
        try:
            self._handle()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            # the client gave up (a timeout it was told to provoke); nothing to answer
            self.close_connection = True

    def _handle(self) -> None:
        owner = self.owner
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if owner._stop.is_set():  # closed: a kept-alive connection gets no answer
            self.close_connection = True
            return
        if length < 0 or length > owner.max_body_bytes:
            self.close_connection = True  # the unread body must not be taken for a request
            self._error(
                413,
                f"request body must be 0..{owner.max_body_bytes} bytes",
                headers={"Connection": "close"},
            )
            return
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = RecordedRequest(self.command, path, headers, body, raw)
        if not owner._record(record):
            self._error(429, f"OpenAIServer: more than {owner.max_requests} requests")
            return
        if owner.api_key is not None:
            expected = f"Bearer {owner.api_key}"
            if headers.get("authorization") != expected:
                self._error(401, "Incorrect API key provided.", code="invalid_api_key")
                return
        if self.command == "GET" and path == "/v1/models":
            name = owner.model_name or "scripted"
            self._json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": name, "object": "model", "created": 0, "owned_by": "stepswitch"}
                    ],
                },
            )
            return
        if self.command != "POST" or path not in _ROUTES:
            self._error(
                404,
                f"OpenAIServer serves POST {' and '.join(_ROUTES)}, not {self.command} {path}",
                kind="invalid_request_error",
            )
            return
        if not isinstance(body, dict):
            self._error(400, "the request body is not a JSON object")
            return
        api = record.api
        step = owner._next_step(api)
        if step is None:
            problem = f"request {len(owner.model_requests())} to {path} has no scripted step left"
            with owner._lock:
                owner.unexpected.append(problem)
            self._error(400, f"OpenAIServer: script exhausted: {problem}", code="script_exhausted")
            return
        n, answer = step
        if answer.delay and owner._stop.wait(answer.delay):
            return  # closing: do not answer
        if isinstance(answer, ErrorReply):
            extra = {}
            if answer.retry_after is not None:
                extra["retry-after"] = f"{answer.retry_after:g}"
                extra["retry-after-ms"] = f"{answer.retry_after * 1000:g}"
            self._error(
                answer.status, answer.message, kind=answer.type, code=answer.code, headers=extra
            )
            return
        if isinstance(answer, RawReply):
            self._send(answer.status, answer.body.encode(), answer.content_type)
            return
        reply = fill_call_ids(answer, n, lambda call_id: f'"{call_id}"'.encode() in raw)
        model = owner.model_name or str(body.get("model") or "scripted")
        cut = reply.cut_after
        if api == "responses":
            rid = f"resp_{n}"
            if body.get("stream"):
                self._stream(
                    _wire.responses_events(
                        reply, response_id=rid, model=model, request=body, chunk=owner.chunk_size
                    ),
                    cut,
                )
            else:
                self._json(
                    200,
                    _wire.responses_body(reply, response_id=rid, model=model, request=body),
                    cut=cut is not None,
                )
        else:
            cid = f"chatcmpl-{n}"
            if body.get("stream"):
                options = body.get("stream_options") or {}
                self._stream(
                    _wire.chat_chunks(
                        reply,
                        completion_id=cid,
                        model=model,
                        chunk=owner.chunk_size,
                        include_usage=bool(
                            isinstance(options, dict) and options.get("include_usage")
                        ),
                    ),
                    cut,
                )
            else:
                self._json(
                    200, _wire.chat_body(reply, completion_id=cid, model=model), cut=cut is not None
                )

    # ---- writing -------------------------------------------------------------------

    def _send(
        self,
        status: int,
        payload: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
        *,
        cut: bool = False,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if cut:  # promise the whole body, send half, hang up
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self._hang_up()
            return
        self.wfile.write(payload)

    def _hang_up(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):  # the client may have gone already
            self.connection.shutdown(socket.SHUT_RDWR)

    def _json(
        self, status: int, data: Any, headers: dict[str, str] | None = None, *, cut: bool = False
    ) -> None:
        self._send(status, json.dumps(data).encode(), "application/json", headers, cut=cut)

    def _error(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        self._json(status, body, headers)

    def _stream(self, events: Iterator[bytes], cut: int | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for n, event in enumerate(events):
                if cut is not None and n >= cut:  # no last chunk: the stream is broken
                    self._hang_up()
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
