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

import itertools
import json
import threading
import time
from collections.abc import Iterable
from dataclasses import field
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from stepswitch._dataclass import dataclass
from stepswitch.errors import UserError
from stepswitch.models.openai_server import RecordedRequest
from stepswitch.models.script import ErrorReply, RawReply, Reply, error_reply, normalize_step
from stepswitch.runtime.model import OutputFunctionCall, OutputMessage

if TYPE_CHECKING:
    import openai

__all__ = ["AgentsAPIServer", "Fault", "session_failed"]

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
        from stepswitch.models._agents_api_handler import handler_for

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(self))
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
