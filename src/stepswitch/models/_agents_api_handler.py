"""The HTTP side of :class:`~stepswitch.models.agents_api_server.AgentsAPIServer`: the
request handler that reads the Agents API's routes (session create, retrieve, update,
input events, the SSE event stream, the item list) and answers on the server's sessions.
Not API.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from stepswitch._agents_api import MAX_TOOLS_BYTES, metadata_problems, tools_bytes
from stepswitch.models._agents_api_http import race_message, sse_frame
from stepswitch.models.agents_api_server import AgentsAPIServer, Fault, _Session
from stepswitch.models.openai_server import RecordedRequest

__all__ = ["handler_for"]

_BASE = "/v1/agents/sessions"
_UPDATABLE = frozenset({"model", "reasoning", "service_tier", "tools"})
"""The agent fields a session update takes (the client's ``session_update_params.Agent``)."""


def handler_for(server: AgentsAPIServer) -> type[BaseHTTPRequestHandler]:
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
