"""``AgentsAPIServer``: a scripted server of OpenAI's hosted Agents API on 127.0.0.1.

It speaks the wire format the ``openai`` client's ``client.beta.agents.sessions`` uses
(header ``OpenAI-Beta: agents=v1``, base path ``/v1/agents/sessions``): session create
(plain or streamed), retrieve and update; input events (``…input.message``,
``…input.tool_result``, ``…input.cancel``) answered with 202; live output events over
SSE (``GET …/events``); the session's item list (``GET …/items``, cursor pages). The
hosted model is the script: each step is one model call of some session's turn (see
:mod:`stepswitch.models.script`: ``message(...)``, ``call(...)``; an ``error_reply`` makes
the session fail with ``agent.session.failed``)::

    with AgentsAPIServer([[call("lookup_order", {"order_id": 42})],
                          [message("Order 42 has shipped.")]]) as server:
        model = AgentsAPIModel("gpt-test", server.client())
        ...

A step with function calls stops the session with ``agent.session.requires_action``
and lists the calls in ``required_actions``; the session goes on once each pair
``(turn_id, call_id)`` has its ``tool_result``. A write-back naming a pair that is not
pending gets the API's 400 (``Unknown pending tool call: <call_id>``); an
``Idempotency-Key`` seen before answers as it did the first time, and its result is never
applied twice (``applied`` counts what was). :class:`Fault` injects the failures a real
network has: the pending-call race (400 first), a connection dropped after a write-back
was applied, a 500 after it was applied, an event stream cut mid-turn.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, urlsplit

from stepswitch._agents_api import MAX_TOOLS_BYTES, metadata_problems, tools_bytes
from stepswitch._dataclass import dataclass
from stepswitch.errors import UserError
from stepswitch.models._agents_api_http import race_message, sse_frame
from stepswitch.models.openai_server import RecordedRequest
from stepswitch.models.script import ErrorReply, RawReply, Reply, error_reply, normalize_step
from stepswitch.runtime.model import OutputFunctionCall, OutputMessage

if TYPE_CHECKING:
    import openai

__all__ = ["AgentsAPIServer", "Fault", "session_failed"]

_BASE = "/v1/agents/sessions"
_UPDATABLE = frozenset({"model", "reasoning", "service_tier", "tools"})
"""The agent fields a session update takes (the client's ``session_update_params.Agent``)."""

FaultKind = Literal["race", "drop", "error_500", "stream_drop", "create_drop"]


@dataclass(frozen=True, slots=True)
class Fault:
    """A failure the server injects.

    ``race``: the ``nth`` write-back (``tool_result`` post, counted from 1 over the whole
    server) gets the pending-call race's 400 ``times`` times before it is accepted.
    ``drop``: the ``nth`` write-back is applied, then the connection is cut before the
    202 is sent (and so are its retries under the same key, until ``times`` cuts in
    all). ``error_500``: applied, then answered with a 500. ``stream_drop``: the ``nth``
    event stream is cut after ``after`` events. ``create_drop``: the ``nth`` session
    create is made, then the connection is cut (a retry under the same key gets that
    session).
    """

    kind: FaultKind
    nth: int = 1
    times: int = 1
    after: int = 2


def session_failed(message: str = "The model run failed.", status: int = 500) -> ErrorReply:
    """A step that makes the session fail (``agent.session.failed``, with ``message`` as
    the session's ``error``) instead of answering."""
    return error_reply(status, message)


@dataclass(slots=True)
class _Session:
    id: str
    agent: dict[str, Any]
    environment: dict[str, Any]
    metadata: dict[str, str]
    created: int
    status: str = "idle"
    items: list[dict[str, Any]] = field(default_factory=list)
    required: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    turn: dict[str, Any] | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None


class AgentsAPIServer:
    """A scripted Agents API server. Use as a context manager, or ``start()``/``close()``."""

    def __init__(
        self,
        script: Iterable[Any] = (),
        *,
        faults: Iterable[Fault] = (),
        api_key: str | None = None,
        chunk_size: int = 8,
        max_requests: int = 10_000,
        max_body_bytes: int = 8 * 1024 * 1024,
        idle_timeout: float = 300.0,
    ) -> None:
        """``script``: the hosted model's answers, one step per model call (more with
        :meth:`add`); ``faults``: failures to inject (:class:`Fault`); ``api_key``: when
        set, a request without ``Authorization: Bearer <api_key>`` gets a 401;
        ``chunk_size``: characters per ``output_text.delta`` event."""
        self._steps: list[Reply | ErrorReply] = []
        self._served = 0
        self._lock = threading.Condition()
        self.faults = list(faults)
        self.api_key = api_key
        self.chunk_size = max(1, chunk_size)
        self.max_requests = max_requests
        self.max_body_bytes = max_body_bytes
        self.idle_timeout = idle_timeout
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[str] = []
        self.sessions: dict[str, _Session] = {}
        self.applied: list[tuple[str, str, str]] = []
        """Every write-back the server applied, as ``(session_id, turn_id, call_id)``."""
        self.write_backs: list[tuple[str, str | None]] = []
        """Every ``tool_result`` post: its call id and ``Idempotency-Key``."""
        self._keys: dict[tuple[str, str | None], str] = {}
        """(session, Idempotency-Key) -> the events first posted under it."""
        self._cut_keys: dict[tuple[str, str], int] = {}
        self._created: dict[str, _Session] = {}
        """Idempotency-Key of a create -> the session it made."""
        self._ids = itertools.count(1)
        self._event_ids = itertools.count(1)
        self._write_back_count = 0
        self._stream_count = 0
        self._create_count = 0
        self._race_left: dict[int, int] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last_activity = time.monotonic()
        self.add(*script)

    # ---- lifecycle -----------------------------------------------------------------

    def start(self) -> AgentsAPIServer:
        if self.running:
            return self
        self.close()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._port = int(httpd.server_address[1])
        httpd.daemon_threads = True
        httpd.timeout = 0.05
        self._httpd = httpd
        self._stop.clear()
        self._last_activity = time.monotonic()
        self._thread = threading.Thread(target=self._serve, name="AgentsAPIServer", daemon=True)
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
            with self._lock:
                self._lock.notify_all()

    def close(self) -> None:
        """Stop serving (open event streams end) and release the port (idempotent)."""
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None
        self._httpd = None

    def __enter__(self) -> AgentsAPIServer:
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
    def url(self) -> str:
        """The base URL to give the client: ``http://127.0.0.1:PORT/v1``."""
        if self._port is None:
            raise RuntimeError("AgentsAPIServer is not started; use `with AgentsAPIServer(...)`")
        return f"http://127.0.0.1:{self._port}/v1"

    def client(self, *, max_retries: int = 2, timeout: float = 30.0) -> openai.AsyncOpenAI:
        """A real ``AsyncOpenAI`` pointed at this server."""
        import openai

        return openai.AsyncOpenAI(base_url=self.url, api_key=self.api_key or "test",
                                  max_retries=max_retries, timeout=timeout)

    # ---- the script ----------------------------------------------------------------

    def add(self, *steps: Any) -> None:
        """Append steps to the script."""
        with self._lock:
            start = len(self._steps)
            for i, step in enumerate(steps):
                where = f"AgentsAPIServer step {start + i + 1}"
                reply = normalize_step(step, where=where)
                if isinstance(reply, RawReply):
                    raise UserError(f"{where}: a raw reply has no meaning on the Agents API; "
                                    "use message(...), call(...) or session_failed(...)")
                self._steps.append(reply)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) - self._served

    def assert_complete(self) -> None:
        """Raise ``AssertionError`` if a step was not used or a turn found no step."""
        with self._lock:
            problems = list(self.unexpected)
            left = len(self._steps) - self._served
        if left:
            problems.append(f"{left} scripted step(s) were never requested")
        if problems:
            raise AssertionError("AgentsAPIServer: " + "; ".join(problems))

    def items(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """A session's item list (the only session, when none is named), oldest first."""
        with self._lock:
            return [dict(i) for i in self._pick(session_id).items]

    def session(self, session_id: str | None = None) -> dict[str, Any]:
        """A session as ``GET /v1/agents/sessions/{id}`` shows it."""
        with self._lock:
            return self._session_json(self._pick(session_id))

    def _pick(self, session_id: str | None) -> _Session:
        if session_id is not None:
            return self.sessions[session_id]
        if len(self.sessions) != 1:
            raise AssertionError(f"AgentsAPIServer has {len(self.sessions)} sessions; name one")
        return next(iter(self.sessions.values()))

    # ---- the hosted model (called with the lock held) ----------------------------------

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    def _emit(self, s: _Session, event: dict[str, Any]) -> None:
        event = {"event_id": f"evt_{next(self._event_ids)}", **event}
        s.events.append(event)
        self._lock.notify_all()

    def _start_turn(self, s: _Session, messages: list[dict[str, Any]]) -> None:
        now = int(time.time())
        turn = {"id": self._new_id("turn"), "object": "agent.session.turn",
                "agent_id": s.agent["id"], "created_at": now, "session_id": s.id,
                "status": "in_progress", "started_at": now, "subagent_id": None,
                "usage": None, "error": None, "completed_at": None}
        s.turns.append(turn)
        s.turn = turn
        for m in messages:
            self._add_item(s, {"type": "message", "id": self._new_id("msg"), "role": "user",
                               "content": list(m.get("content") or []),
                               "status": "completed", "turn_id": turn["id"]})
        self._emit(s, {"type": "agent.session.turn.created", "session_id": s.id,
                       "turn_id": turn["id"], "turn": dict(turn)})
        s.status = "in_progress"
        self._emit(s, {"type": "agent.session.in_progress", "session": self._session_json(s)})
        self._emit(s, {"type": "agent.session.turn.in_progress", "session_id": s.id,
                       "turn_id": turn["id"], "turn": dict(turn)})
        self._model_step(s)

    def _add_item(self, s: _Session, item: dict[str, Any], output_index: int | None = None) -> None:
        s.items.append(item)
        self._emit(s, {"type": "agent.session.turn.item.added", "session_id": s.id,
                       "turn_id": item["turn_id"], "item": dict(item),
                       "output_index": output_index})

    def _model_step(self, s: _Session) -> None:
        """One model call of the session's turn: the next step of the script."""
        turn = s.turn
        assert turn is not None
        if self._served >= len(self._steps):
            problem = f"session {s.id} turn {turn['id']} asked for a model step, none is left"
            self.unexpected.append(problem)
            self._fail(s, f"AgentsAPIServer: script exhausted: {problem}")
            return
        n = self._served
        self._served += 1
        step = self._steps[n]
        if isinstance(step, ErrorReply):
            self._fail(s, step.message)
            return
        s.input_tokens += step.input_tokens
        s.output_tokens += step.output_tokens
        calls: list[dict[str, Any]] = []
        for index, out in enumerate(step.output):
            if isinstance(out, OutputMessage):
                self._message(s, out.content or out.refusal or "", index,
                              final=not any(isinstance(o, OutputFunctionCall)
                                            for o in step.output))
            elif isinstance(out, OutputFunctionCall):
                call_id = out.call_id or f"call_{n}_{index}"
                try:
                    arguments: Any = json.loads(out.arguments)
                except ValueError:
                    arguments = out.arguments
                if not isinstance(arguments, dict):
                    arguments = out.arguments  # not an object: the model's text, as it was
                item = {"type": "function_call", "id": self._new_id("fc"), "call_id": call_id,
                        "name": out.name, "arguments": arguments, "status": "in_progress",
                        "turn_id": turn["id"]}
                self._add_item(s, item, index)
                self._emit(s, {"type": "agent.session.turn.item.done", "session_id": s.id,
                               "turn_id": turn["id"], "item": dict(item),
                               "output_index": index})
                calls.append({"type": "function_call", "turn_id": turn["id"],
                              "call_id": call_id, "name": out.name, "arguments": arguments})
        if calls:
            s.required = calls
            s.status = "requires_action"
            turn["status"] = "waiting"
            self._emit(s, {"type": "agent.session.requires_action",
                           "session": self._session_json(s)})
            return
        turn["status"] = "completed"
        turn["completed_at"] = int(time.time())
        turn["usage"] = self._usage(s)
        self._emit(s, {"type": "agent.session.turn.completed", "session_id": s.id,
                       "turn_id": turn["id"], "turn": dict(turn), "usage": self._usage(s)})
        s.turn = None
        s.status = "idle"
        self._emit(s, {"type": "agent.session.idle", "session": self._session_json(s)})

    def _message(self, s: _Session, text: str, index: int, *, final: bool) -> None:
        turn = s.turn
        assert turn is not None
        item_id = self._new_id("msg")
        item: dict[str, Any] = {"type": "message", "id": item_id, "role": "assistant",
                                "phase": "final_answer" if final else "commentary",
                                "content": [], "status": "in_progress", "turn_id": turn["id"]}
        self._add_item(s, item, index)
        base = {"session_id": s.id, "turn_id": turn["id"], "item_id": item_id,
                "output_index": index, "content_index": 0}
        for i in range(0, len(text), self.chunk_size):
            self._emit(s, {"type": "agent.session.turn.output_text.delta", **base,
                           "delta": text[i:i + self.chunk_size]})
        self._emit(s, {"type": "agent.session.turn.output_text.done", **base, "text": text})
        item["content"] = [{"type": "output_text", "text": text}]
        item["status"] = "completed"
        self._emit(s, {"type": "agent.session.turn.item.done", "session_id": s.id,
                       "turn_id": turn["id"], "item": dict(item), "output_index": index})

    def _fail(self, s: _Session, message: str) -> None:
        turn = s.turn
        s.error = message
        s.required = []
        s.status = "failed"
        if turn is not None:
            turn["status"] = "failed"
            turn["error"] = {"code": "server_error", "message": message}
            self._emit(s, {"type": "agent.session.turn.failed", "session_id": s.id,
                           "turn_id": turn["id"], "turn": dict(turn), "usage": self._usage(s)})
            s.turn = None
        self._emit(s, {"type": "error", "session_id": s.id,
                       "error": {"code": "server_error", "message": message}})
        self._emit(s, {"type": "agent.session.failed", "session": self._session_json(s)})

    def _tool_result(self, s: _Session, event: dict[str, Any]) -> None:
        """Answer one pending call (the pair was checked); go on once none is left."""
        pair = (event["turn_id"], event["call_id"])
        s.required = [r for r in s.required if (r["turn_id"], r["call_id"]) != pair]
        self.applied.append((s.id, *pair))
        failed = event.get("success") is False
        for item in s.items:
            if item["type"] == "function_call" and (item["turn_id"], item["call_id"]) == pair:
                item["status"] = "failed" if failed else "completed"
        output = {"type": "function_call_output", "id": self._new_id("fco"),
                  "call_id": pair[1], "output": None if failed else event.get("output"),
                  "error": event.get("error") if failed else None,
                  "status": "failed" if failed else "completed", "turn_id": pair[0]}
        self._add_item(s, output)
        if not s.required:
            s.status = "in_progress"
            if s.turn is not None:
                s.turn["status"] = "in_progress"
            self._emit(s, {"type": "agent.session.in_progress", "session": self._session_json(s)})
            self._model_step(s)

    def _usage(self, s: _Session) -> dict[str, Any]:
        return {"input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
                "total_tokens": s.input_tokens + s.output_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0}}

    def _session_json(self, s: _Session) -> dict[str, Any]:
        return {"id": s.id, "object": "agent.session", "agent": dict(s.agent),
                "created_at": s.created, "environment": dict(s.environment), "error": s.error,
                "last_active_at": int(time.time()), "metadata": dict(s.metadata),
                "required_actions": [dict(r) for r in s.required], "status": s.status,
                "usage": self._usage(s), "vault_ids": []}

    # ---- faults --------------------------------------------------------------------

    def _fault(self, kind: FaultKind, nth: int) -> Fault | None:
        for f in self.faults:
            if f.kind == kind and f.nth == nth:
                return f
        return None

    def _record(self, request: RecordedRequest) -> bool:
        with self._lock:
            self._last_activity = time.monotonic()
            if len(self.requests) >= self.max_requests:
                return False
            self.requests.append(request)
            return True


def _handler_for(server: AgentsAPIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = server

    return Handler


class _Reply(Exception):
    """An HTTP error answer, raised inside a handler."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class _Handler(BaseHTTPRequestHandler):
    owner: AgentsAPIServer
    server_version = "stepswitch-AgentsAPIServer"
    protocol_version = "HTTP/1.1"
    timeout = 30
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError, TimeoutError):
            self.close_connection = True

    def do_GET(self) -> None:
        self._safely()

    def do_POST(self) -> None:
        self._safely()

    def do_DELETE(self) -> None:
        self._safely()

    def _safely(self) -> None:
        try:
            self._handle()
        except _Reply as r:
            self._error(r.status, r.message, r.code)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True

    def _handle(self) -> None:
        owner = self.owner
        if owner._stop.is_set():
            self.close_connection = True
            return
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > owner.max_body_bytes:
            self.close_connection = True
            raise _Reply(413, f"request body must be 0..{owner.max_body_bytes} bytes")
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        path = parts.path
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        headers = {k.lower(): v for k, v in self.headers.items()}
        if not owner._record(RecordedRequest(self.command, path, headers, body, raw)):
            raise _Reply(429, f"AgentsAPIServer: more than {owner.max_requests} requests")
        if owner.api_key is not None and headers.get("authorization") != f"Bearer {owner.api_key}":
            raise _Reply(401, "Incorrect API key provided.", "invalid_api_key")
        if headers.get("openai-beta") != "agents=v1":
            raise _Reply(400, "the Agents API needs the header OpenAI-Beta: agents=v1")
        if raw and not isinstance(body, dict):
            raise _Reply(400, "the request body is not a JSON object")
        rest = path[len(_BASE):].strip("/").split("/") if path.startswith(_BASE) else None
        if rest is None:
            raise _Reply(404, f"AgentsAPIServer serves {_BASE}…, not {self.command} {path}")
        route = (self.command, len(rest) if rest != [""] else 0, rest[1] if len(rest) > 1 else "")
        if route == ("POST", 0, ""):
            self._create(body or {}, headers.get("idempotency-key"))
        elif route == ("GET", 1, ""):
            self._json(200, self._locked(lambda: owner._session_json(self._session(rest[0]))))
        elif route == ("POST", 1, ""):
            self._update(rest[0], body or {})
        elif route == ("POST", 2, "events"):
            self._events(rest[0], body or {}, headers.get("idempotency-key"))
        elif route == ("GET", 2, "events"):
            self._stream(self._locked(lambda: self._session(rest[0])), None)
        elif route == ("GET", 2, "items"):
            self._items(rest[0], query)
        else:
            raise _Reply(404, f"AgentsAPIServer does not serve {self.command} {path}")

    def _locked(self, fn: Any) -> Any:
        with self.owner._lock:
            return fn()

    def _session(self, session_id: str) -> _Session:
        s = self.owner.sessions.get(session_id)
        if s is None:
            raise _Reply(404, f"No session found with id '{session_id}'.")
        return s

    # ---- routes --------------------------------------------------------------------

    def _create(self, body: dict[str, Any], key: str | None) -> None:
        owner = self.owner
        with owner._lock:
            again = owner._created.get(key) if key is not None else None
        if again is not None:  # a retry of a create: the session it made, not a new one
            if body.get("stream") is True:
                self._stream(again, 0)
            else:
                self._json(200, self._locked(lambda: owner._session_json(again)))
            return
        environment = body.get("environment")
        if not isinstance(environment, dict) or "type" not in environment:
            raise _Reply(400, "environment is required")
        agent = body.get("agent")
        if not isinstance(agent, dict) or not isinstance(agent.get("model"), str):
            raise _Reply(400, "agent.model is required when agent_id is not given")
        given = body.get("input")
        if isinstance(given, str):
            given = [{"role": "user", "content": [{"type": "input_text", "text": given}]}]
        if environment.get("type") == "none" and not given:
            raise _Reply(400, "input is required when environment.type is none")
        metadata = body.get("metadata") or {}
        problems = (metadata_problems(metadata.items()) if isinstance(metadata, dict)
                    else ["not an object"])
        if problems:
            raise _Reply(400, f"metadata: {problems[0]}")
        tools = agent.get("tools") or []
        size = tools_bytes(tools)
        if size > MAX_TOOLS_BYTES:
            raise _Reply(400, f"the resolved tool list is {size} bytes, over 3 MiB")
        with owner._lock:
            s = _Session(
                id=owner._new_id("sess"),
                agent={"id": owner._new_id("agent"), "instructions": agent.get("instructions"),
                       "model": agent["model"], "name": None,
                       "multi_agent": {"enabled": False, "max_concurrent_subagents": 6,
                                       **(agent.get("multi_agent") or {})},
                       "reasoning": {"effort": None, "summary": None,
                                     **(agent.get("reasoning") or {})},
                       "service_tier": agent.get("service_tier") or "auto",
                       "text": {"format": None, "verbosity": None, **(agent.get("text") or {})},
                       "tools": list(tools)},
                environment=dict(environment), metadata=dict(metadata),
                created=int(time.time()),
            )
            owner.sessions[s.id] = s
            if key is not None:
                owner._created[key] = s
            owner._emit(s, {"type": "agent.session.created", "session": owner._session_json(s)})
            if given:
                owner._start_turn(s, list(given))
            snapshot = owner._session_json(s)
            owner._create_count += 1
            cut = owner._fault("create_drop", owner._create_count)
        if cut is not None:
            self._hang_up()
            return
        if body.get("stream") is True:
            self._stream(s, 0)
        else:
            self._json(200, snapshot)

    def _update(self, session_id: str, body: dict[str, Any]) -> None:
        owner = self.owner
        with owner._lock:
            s = self._session(session_id)
            agent = body.get("agent") or {}
            if not isinstance(agent, dict):
                raise _Reply(400, "agent must be an object")
            unknown = sorted(set(agent) - _UPDATABLE)
            if unknown:
                raise _Reply(400, f"agent.{unknown[0]} cannot be updated on a session (the "
                             "update takes model, reasoning, service_tier and tools)")
            for key, value in agent.items():
                if key == "reasoning":
                    s.agent["reasoning"] = {**s.agent["reasoning"], **(value or {})}
                else:
                    s.agent[key] = value if value is not None or key != "tools" else []
            if "metadata" in body:
                s.metadata = dict(body["metadata"] or {})
            snapshot = owner._session_json(s)
        self._json(200, snapshot)

    def _events(self, session_id: str, body: dict[str, Any], key: str | None) -> None:
        owner = self.owner
        events = body.get("events")
        if not isinstance(events, list) or not events:
            raise _Reply(400, "events must be a non-empty list")
        results = [e for e in events if isinstance(e, dict)
                   and e.get("type") == "agent.session.input.tool_result"]
        with owner._lock:
            s = self._session(session_id)
            digest = json.dumps(events, sort_keys=True)
            seen = owner._keys.get((s.id, key)) if key is not None else None
            for e in results:
                owner.write_backs.append((str(e.get("call_id")), key))
            if seen is not None:  # a retry: answered as the first time, never applied again
                if seen != digest:
                    raise _Reply(409, "Idempotency-Key reused with a different request")
                cut_key = (s.id, str(key))
                left = owner._cut_keys.get(cut_key, 0)
                if left > 0:  # a retry of a dropped write-back, dropped again
                    owner._cut_keys[cut_key] = left - 1
                    fault: Fault | None = Fault("drop")
                else:
                    fault = None
            else:
                fault = self._write_back_fault(results)
                for e in events:
                    self._check_event(s, e)
                for e in events:
                    kind = e["type"]
                    if kind == "agent.session.input.message":
                        owner._start_turn(s, list(e["input"]))
                    elif kind == "agent.session.input.tool_result":
                        owner._tool_result(s, e)
                    elif kind == "agent.session.input.cancel":
                        self._cancel(s)
                if key is not None:
                    owner._keys[(s.id, key)] = digest
                    if fault is not None and fault.kind == "drop" and fault.times > 1:
                        owner._cut_keys[(s.id, key)] = fault.times - 1
        if fault is not None and fault.kind == "drop":
            self._hang_up()
            return
        if fault is not None:
            raise _Reply(500, "The server had an error while processing your request.",
                         "server_error")
        self._accepted(202)

    def _write_back_fault(self, results: list[dict[str, Any]]) -> Fault | None:
        """The fault this (new) write-back meets; the race's 400 is raised here."""
        owner = self.owner
        if not results:
            return None
        owner._write_back_count += 1
        nth = owner._write_back_count
        race = owner._fault("race", nth)
        if race is not None:
            left = owner._race_left.setdefault(nth, race.times)
            if left > 0:
                owner._race_left[nth] = left - 1
                owner._write_back_count -= 1  # its retry is the same write-back
                raise _Reply(400, race_message(str(results[0].get("call_id"))),
                             "invalid_request_error")
        return owner._fault("drop", nth) or owner._fault("error_500", nth)

    def _check_event(self, s: _Session, e: Any) -> None:
        if not isinstance(e, dict) or not isinstance(e.get("type"), str):
            raise _Reply(400, "each event must be an object with a type")
        kind = e["type"]
        if kind == "agent.session.input.message":
            if s.status != "idle":
                raise _Reply(400, f"session {s.id} is {s.status}; a message needs an idle "
                             "session")
            messages = e.get("input")
            if not isinstance(messages, list) or not messages or any(
                not isinstance(m, dict) or m.get("role") != "user"
                or not isinstance(m.get("content"), list) for m in messages
            ):
                raise _Reply(400, "input: a non-empty list of user messages with content")
        elif kind == "agent.session.input.tool_result":
            call_id = e.get("call_id")
            pending = {(r["turn_id"], r["call_id"]) for r in s.required}
            if (e.get("turn_id"), call_id) not in pending:
                raise _Reply(400, race_message(str(call_id)), "invalid_request_error")
            if not isinstance(e.get("success"), bool):
                raise _Reply(400, "tool_result.success must be a boolean")
            if e["success"] and not isinstance(e.get("output"), str | list):
                raise _Reply(400, "tool_result.output must be a string or a content list")
            if not e["success"] and not isinstance(e.get("error"), str):
                raise _Reply(400, "a failed tool_result needs error (a string)")
        elif kind != "agent.session.input.cancel":
            raise _Reply(400, f"unknown input event type {kind!r}")

    def _cancel(self, s: _Session) -> None:
        owner = self.owner
        if s.turn is not None:
            s.turn["status"] = "cancelled"
            owner._emit(s, {"type": "agent.session.turn.cancelled", "session_id": s.id,
                            "turn_id": s.turn["id"], "turn": dict(s.turn)})
            s.turn = None
        s.required = []
        s.status = "idle"
        owner._emit(s, {"type": "agent.session.idle", "session": owner._session_json(s)})

    def _items(self, session_id: str, query: dict[str, str]) -> None:
        owner = self.owner
        with owner._lock:
            items = [dict(i) for i in self._session(session_id).items]
        if query.get("order", "desc") == "desc":
            items.reverse()
        after = query.get("after")
        if after is not None:
            ids = [i["id"] for i in items]
            if after not in ids:
                raise _Reply(400, f"after: no item {after!r} in session {session_id}")
            items = items[ids.index(after) + 1:]
        limit = max(1, min(100, int(query.get("limit", "20") or 20)))
        page = items[:limit]
        self._json(200, {"object": "list", "data": page,
                         "first_id": page[0]["id"] if page else None,
                         "last_id": page[-1]["id"] if page else None,
                         "has_more": len(items) > limit})

    # ---- writing -------------------------------------------------------------------

    def _stream(self, s: _Session, start: int | None) -> None:
        """Serve the session's events from ``start`` (None: only those after now) until an
        idle or failed session event, the client hanging up, or the server closing."""
        owner = self.owner
        with owner._lock:
            owner._stream_count += 1
            cut = owner._fault("stream_drop", owner._stream_count)
            at = len(s.events) if start is None else start
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        sent = 0
        try:
            while True:
                with owner._lock:
                    while at >= len(s.events) and not owner._stop.is_set():
                        if not owner._lock.wait(timeout=0.5):
                            break
                    fresh = s.events[at:]
                    at += len(fresh)
                if owner._stop.is_set():
                    self._hang_up()
                    return
                if not fresh:  # a comment line: keeps the connection and finds a hang-up
                    self._chunk(b": keep-alive\n\n")
                    continue
                for event in fresh:
                    if cut is not None and sent >= cut.after:
                        self._hang_up()
                        return
                    self._chunk(sse_frame(event))
                    sent += 1
                    if event["type"] in ("agent.session.idle", "agent.session.failed"):
                        self.wfile.write(b"0\r\n\r\n")
                        self.wfile.flush()
                        return
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _hang_up(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)

    def _accepted(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _json(self, status: int, data: Any) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        kind = "server_error" if status >= 500 else "invalid_request_error"
        self._json(status, {"error": {"message": message, "type": kind, "param": None,
                                      "code": code or kind}})
