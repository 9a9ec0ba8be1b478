"""``AgentsAPIModel``: a workflow run on OpenAI's hosted Agents API
(``client.beta.agents.sessions``, ``openai`` >= 3.13).

The loop stays the one loop: this adapter is its model. The API is stateful (a session
holds the conversation) while the loop hands a model the whole history each turn, so
the adapter keeps the session's place in that history itself: each turn's response
begins with a *pin* (see :class:`~stepswitch.models._agents_api_http.Pin`, recorded by
the loop as a ``ResponsesItem``) naming the session, the ``(turn_id, call_id)`` pairs
the session asked for, and the usage so far. A saved ``RunState``, a Temporal history
or a conversation session therefore carries all a later call needs, in any process.

One model call of the loop:

- no pin yet: create the session (agent config = model, instructions, tool schemas,
  output format, reasoning; the run's user input as ``input``) with ``stream=True``;
- a pin with calls: subscribe to the session's events, then write back each call's
  output from the history as ``agent.session.input.tool_result`` with the same pair
  (a failure as ``success: false``; the ``Idempotency-Key`` derived from the pair, so a
  retry or a resume in another process sends the same key), after a
  ``sessions.update`` when the agent changed (a handoff);
- a pin of an idle session and new user input after it: post it as a message.

Then read events until the session stops: ``agent.session.requires_action`` (its
``required_actions`` are the next calls: pending calls are never inferred from the item
history), ``agent.session.idle`` (the turn's final message) or
``agent.session.failed`` (a ``ModelProviderError`` naming the session and turn; the
loop keeps the run). A cut stream falls back to ``sessions.retrieve`` and the item list.

What the API has no place for is refused by name (SW650-SW654 check it before a run):
a session's instructions and output format are set once at create (a handoff's target
instructions travel in the handoff's output), model settings other than the reasoning
effort, more than 3 MiB of tools, metadata over its limits.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import openai

from stepswitch._agents_api import (
    MAX_TOOLS_BYTES,
    SETTINGS_CARRIED,
    function_tool,
    metadata_problems,
    tools_bytes,
)
from stepswitch.context import Usage
from stepswitch.errors import (
    ModelBehaviorError,
    ModelProviderError,
    StepswitchError,
    UserError,
)
from stepswitch.models._agents_api_http import (
    PIN_TYPE,
    Pin,
    arguments_text,
    digest,
    input_key,
    input_message,
    race_message,
    tool_result,
    write_back_key,
)
from stepswitch.models._base import OpenAIModelBase
from stepswitch.models._convert import as_dict, map_error, server_message
from stepswitch.runtime.items import (
    HandoffOutputItem,
    ResponsesItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import (
    InputItem,
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputResponsesItem,
    ResponseCompleted,
)

__all__ = ["AgentsAPIModel"]

_STOPS = frozenset({"agent.session.requires_action", "agent.session.idle",
                    "agent.session.failed"})


class AgentsAPIModel(OpenAIModelBase):
    """A model served by the hosted Agents API through the official ``openai`` client.

    ``model`` is the model name (an agent's own ``model`` name takes precedence);
    ``client`` an ``openai.AsyncOpenAI`` (made from ``api_key``/``base_url`` or the
    environment when not given); ``environment`` the session's execution environment
    (default ``{"type": "none"}``). ``metadata`` is sent with every session (16 string
    pairs at most, keys up to 64 and values up to 512 characters); ``multi_agent=True``
    lets the hosted model create subagents (it may not be combined with function tools:
    SW652). ``race_delays`` are the waits before retrying a write-back the server
    answered with the pending-call race's 400 (the client's own helper waits 0.1, 0.3
    and 0.6 s); ``wait_timeout`` bounds the wait for a session to stop once its event
    stream broke.
    """

    api = "agents"

    def __init__(
        self,
        model: str,
        client: openai.AsyncOpenAI | None = None,
        environment: Mapping[str, Any] | None = None,
        *,
        metadata: Mapping[str, str] | None = None,
        multi_agent: bool = False,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        race_delays: Sequence[float] = (0.1, 0.3, 0.6),
        wait_timeout: float = 600.0,
    ) -> None:
        super().__init__(model, client, api_key=api_key, base_url=base_url,
                         max_retries=max_retries, timeout=timeout)
        self.environment: dict[str, Any] = dict(environment or {"type": "none"})
        if not isinstance(self.environment.get("type"), str):
            raise UserError("AgentsAPIModel: environment needs a type ('none', "
                            f"'openai_hosted' or 'self_hosted'), got {environment!r}")
        self.metadata: dict[str, str] = dict(metadata or {})
        problems = metadata_problems(self.metadata.items())
        if problems:
            raise UserError(f"AgentsAPIModel: metadata the Agents API refuses: "
                            f"{'; '.join(problems)} (SW651)")
        self.multi_agent = bool(multi_agent)
        self.race_delays = tuple(race_delays)
        self.wait_timeout = wait_timeout

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        response: ModelResponse | None = None
        async for event in self._turn(request):
            if isinstance(event, ResponseCompleted):
                response = event.response
        assert response is not None  # _turn ends with one or raises
        return response

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        """The session's events as the client parses them, then ``ResponseCompleted``
        with the response ``get_response`` gives."""
        async for event in self._turn(request):
            yield event

    # ---- one model call of the loop --------------------------------------------------

    async def _turn(self, request: ModelRequest) -> AsyncIterator[Any]:
        client = self._client_here()
        name = self._name(request)
        try:
            async for event in self._drive(client, request, name):
                yield event
        except Exception as exc:
            raise map_error(exc, model=name, base_url=str(client.base_url),
                            api="agents") from exc

    async def _drive(
        self, client: openai.AsyncOpenAI, request: ModelRequest, name: str
    ) -> AsyncIterator[Any]:
        # Any: the bodies are plain JSON in the wire's names, not the client's TypedDicts
        sessions: Any = client.beta.agents.sessions
        config = self._config(request, name)
        wanted = _Wanted(
            request.agent,
            digest({k: config.get(k) for k in ("model", "tools", "reasoning")}),
            digest(config.get("text")),
            digest(request.instructions or ""),
        )
        pin, tail = _last_pin(request.input)
        if pin is None:
            messages = _first_input(request.input)
            extra = dict(request.settings.extra_body or {})
            stream = await sessions.create(
                environment=self.environment,
                agent=config,
                input=messages,
                metadata=self.metadata or None,
                stream=True,
                extra_body=extra or None,
                # one key across the client's own retries: a create whose answer was lost
                # is not made twice
                extra_headers={"Idempotency-Key": f"stepswitch-{uuid.uuid4().hex}"},
            )
            watch = _Watch(None, frozenset())
            watch.where = f"model {name!r} at {client.base_url}"
            try:
                async for event in watch.read(stream, self.wait_timeout):
                    yield event
            finally:
                await stream.close()
            yield ResponseCompleted(await self._finish(sessions, watch, wanted, None))
            return
        session_id = pin.session_id
        results, inputs = _after_pin(pin, tail, request.agent)
        try:  # the first calls that name the session: is it still there?
            if wanted.config != pin.config:  # a handoff (or a conversation resumed elsewhere)
                update: dict[str, Any] = {k: config[k] for k in ("model", "tools")
                                          if k in config}
                update["reasoning"] = config.get("reasoning") or {"effort": None}
                await sessions.update(session_id, agent=update)
            if wanted.text != pin.text:
                raise _cannot(
                    f"agent {request.agent!r}: its output type differs from the one session "
                    f"{session_id} was created with, and a session's output format is set "
                    "once, at create", "SW654"
                )
            if wanted.instructions != pin.instructions:
                results = _deliver_instructions(request, results, session_id)
            stream = await sessions.events.stream(session_id)
        except openai.NotFoundError as exc:
            raise _gone(session_id, str(client.base_url), exc) from exc
        try:
            snapshot = await sessions.retrieve(session_id)
            if snapshot.status == "failed":
                raise _failed(as_dict(snapshot), None)
            pending = _pending(as_dict(snapshot))
            if pin.calls:
                if inputs:
                    raise UserError(
                        f"session {session_id} still waits for the results of "
                        f"{len(pin.calls)} call(s); resume the paused run before sending "
                        "new input"
                    )
                for turn_id, call_id in pin.calls:
                    output, failed = results[call_id]
                    await self._write_back(sessions, session_id, turn_id, call_id, output,
                                           failed, (turn_id, call_id) in pending)
                moved_on = not pending.intersection(pin.calls)
            else:
                if not inputs:
                    raise _cannot(
                        f"agent {request.agent!r}: the run asks for another turn, but session "
                        f"{session_id} ended its turn with a final answer and takes no turn "
                        "without new user input (an answer the run did not accept as final: "
                        "a typed output with no message, say)", "a turn after the final answer"
                    )
                moved_on = snapshot.status != "idle"
                await sessions.events.create(
                    session_id, events=[input_message(inputs)],
                    idempotency_key=input_key(session_id, pin.after or ""),
                )
            watch = _Watch(session_id, frozenset(pin.calls))
            if moved_on and snapshot.status != "in_progress":
                watch.stopped = as_dict(snapshot)  # it got our input before: read what followed
            else:
                async for event in watch.read(stream, self.wait_timeout):
                    yield event
            if moved_on:  # what it said before we listened is read back from its items
                watch.broken = True
        finally:
            await stream.close()
        yield ResponseCompleted(await self._finish(sessions, watch, wanted, pin))

    async def _write_back(
        self, sessions: Any, session_id: str, turn_id: str, call_id: str, output: str,
        failed: bool, pending: bool,
    ) -> None:
        """One call's ``tool_result``, with one key across every retry; the pending-call
        race's 400 is retried after ``race_delays`` (a pair that was not pending when we
        looked was answered before: a resubmitted result the server already had)."""
        event = tool_result(turn_id, call_id, output, failed)
        key = write_back_key(session_id, turn_id, call_id)
        for delay in (*self.race_delays, None):
            try:
                await sessions.events.create(session_id, events=[event], idempotency_key=key)
                return
            except openai.BadRequestError as exc:
                if not _is_race(exc, call_id):
                    raise
                if delay is None:
                    if not pending:
                        return
                    raise
                await asyncio.sleep(delay)

    async def _finish(
        self, sessions: Any, watch: _Watch, wanted: _Wanted, pin: Pin | None
    ) -> ModelResponse:
        """The loop's response for the stop the session reached."""
        if watch.broken:
            stopped = watch.stopped or await self._wait_stopped(sessions, watch)
            items = await _items_after(sessions, str(stopped["id"]),
                                       pin.after if pin is not None else None)
            watch.items = [i for i in items if i.get("type") in ("message", "function_call")
                           and i.get("role", "assistant") == "assistant"]
            if items:
                watch.last_item = str(items[-1].get("id"))
            watch.stopped = stopped
        session = watch.stopped
        assert session is not None
        if session.get("status") == "failed":
            raise _failed(session, watch.error)
        session_id = str(session["id"])
        required = [r for r in session.get("required_actions") or []
                    if isinstance(r, dict)]
        for r in required:
            if r.get("type") != "function_call":
                raise ModelBehaviorError(
                    f"session {session_id} asks for a {r.get('type')} action "
                    f"(turn {r.get('turn_id')}), which stepswitch did not configure and "
                    "cannot answer; only function calls are answered on the trusted side"
                )
        calls = {(str(r["turn_id"]), str(r["call_id"])): r for r in required}
        usage = session.get("usage") or {}
        spent_in = _int(usage.get("input_tokens"))
        spent_out = _int(usage.get("output_tokens"))
        new_pin = Pin(
            session_id, wanted.agent, tuple(calls), watch.last_item or
            (pin.after if pin is not None else None), wanted.config, wanted.text,
            wanted.instructions, spent_in, spent_out,
        )
        output: list[OutputItem] = [OutputResponsesItem(new_pin.to_item())]
        taken: set[tuple[str, str]] = set()
        for item in watch.items:
            if item.get("type") == "message":
                text = "".join(p.get("text", "") for p in item.get("content") or []
                               if isinstance(p, dict) and p.get("type") == "output_text")
                output.append(OutputMessage(text))
            else:
                pair = (str(item.get("turn_id")), str(item.get("call_id")))
                if pair in calls and pair not in taken:
                    taken.add(pair)
                    output.append(_call(calls[pair]))
        output.extend(_call(r) for pair, r in calls.items() if pair not in taken)
        before_in = pin.input_tokens if pin is not None else 0
        before_out = pin.output_tokens if pin is not None else 0
        d_in, d_out = max(0, spent_in - before_in), max(0, spent_out - before_out)
        return ModelResponse(tuple(output), Usage(requests=1, input_tokens=d_in,
                                                  output_tokens=d_out,
                                                  total_tokens=d_in + d_out), session_id)

    async def _wait_stopped(self, sessions: Any, watch: _Watch) -> dict[str, Any]:
        """The session once it stopped, polled after its event stream broke."""
        session_id = watch.session_id
        if session_id is None:
            raise _unnamed(watch, self.wait_timeout)
        deadline = time.monotonic() + self.wait_timeout
        delay = 0.05
        while True:
            data = as_dict(await sessions.retrieve(session_id))
            if data.get("status") != "in_progress":
                return data
            if time.monotonic() > deadline:
                raise ModelProviderError(
                    f"session {session_id} is still in progress {self.wait_timeout:g} s after "
                    "its event stream broke; resume the run later"
                )
            await asyncio.sleep(delay)
            delay = min(1.0, delay * 2)

    # ---- the session's agent config ----------------------------------------------------

    def _config(self, request: ModelRequest, name: str) -> dict[str, Any]:
        agent = request.agent
        tools = [function_tool(t.name, t.description, t.parameters) for t in request.tools]
        size = tools_bytes(tools)
        if size > MAX_TOOLS_BYTES:
            raise _cannot(f"agent {agent!r}: its tools take {size} bytes of JSON, over the "
                          f"{MAX_TOOLS_BYTES} a session takes", "SW650")
        settings = request.settings
        unsupported = sorted(
            k for k, v in settings.model_dump(exclude_none=True).items()
            if k not in SETTINGS_CARRIED and v is not None
        )
        if unsupported:
            raise _cannot(
                f"agent {agent!r}: ModelSettings {', '.join(unsupported)} have no place in "
                "a session's config (it takes the reasoning effort only); unset them or run "
                "this agent on another model", "SW654"
            )
        config: dict[str, Any] = {"model": name, "tools": tools}
        if request.instructions:
            config["instructions"] = request.instructions
        if request.output_schema is not None:
            config["text"] = {"format": {"type": "json_schema",
                                         "schema": request.output_schema.schema}}
        if settings.reasoning_effort is not None:
            config["reasoning"] = {"effort": settings.reasoning_effort}
        if self.multi_agent:
            config["multi_agent"] = {"enabled": True}
        return config


class _Wanted:
    """What the current agent wants the session's config to be (digests)."""

    __slots__ = ("agent", "config", "instructions", "text")

    def __init__(self, agent: str, config: str, text: str, instructions: str) -> None:
        self.agent, self.config, self.text, self.instructions = agent, config, text, instructions


class _Watch:
    """Reads a session's events until it stops; keeps the turn's items on the way."""

    def __init__(self, session_id: str | None, answered: frozenset[tuple[str, str]]) -> None:
        self.session_id = session_id
        self.answered = answered
        self.items: list[dict[str, Any]] = []
        self.last_item: str | None = None
        self.stopped: dict[str, Any] | None = None
        self.error: str | None = None
        self.broken = False
        self.events = 0
        """Events the stream delivered (duplicates too): none at all, in good order, is
        a body that is no event stream."""
        self.cut: str | None = None
        """How the stream broke: ``"cut"`` (the connection), ``"silent"`` (nothing for
        ``wait`` seconds); None when it ended in good order (or has not ended)."""
        self.where = ""
        """``model 'NAME' at URL``, for what only a create's stream can say."""
        self.moved = False
        """The session moved after our input (an item was added): a stop seen before that
        is an old one."""
        self.subagent_turns: set[str] = set()
        self._seen: set[str] = set()

    async def read(self, stream: Any, wait: float) -> AsyncIterator[Any]:
        """The stream's events up to the session's stop; at most ``wait`` seconds (a stream
        that keeps the connection alive but says nothing is read back like a cut one)."""
        try:
            async with asyncio.timeout(wait):
                async for event in stream:
                    self.events += 1
                    event_id = getattr(event, "event_id", None)
                    if event_id is not None:
                        if event_id in self._seen:  # a duplicate delivery
                            continue
                        self._seen.add(event_id)
                    yield event
                    if self._take(event):
                        return
        except TimeoutError:
            self.cut = "silent"  # read back like a cut stream
        except (openai.APIConnectionError, openai.APITimeoutError):
            self.cut = "cut"  # a cut stream: the session is read back instead
        except Exception as exc:  # a transport error mid-body, not wrapped by the client
            if not any(c.__name__ == "TransportError" for c in type(exc).__mro__):
                raise
            self.cut = "cut"
        self.broken = True

    def _take(self, event: Any) -> bool:
        kind = getattr(event, "type", None)
        if kind == "agent.session.turn.created":
            turn = getattr(event, "turn", None)
            if getattr(turn, "subagent_id", None) is not None:
                self.subagent_turns.add(str(event.turn_id))
            if self.session_id is None:
                self.session_id = str(event.session_id)
        elif kind == "agent.session.in_progress":
            self.moved = True
        elif kind == "agent.session.created":
            self.session_id = str(event.session.id)
        elif kind == "agent.session.turn.item.added":
            self.moved = True
            item_id = getattr(event.item, "id", None)
            if item_id:
                self.last_item = str(item_id)
        elif kind == "agent.session.turn.item.done":
            if getattr(event, "turn_id", None) in self.subagent_turns:
                return False
            item = as_dict(event.item)
            if item.get("type") in ("message", "function_call"):
                self.items.append(item)
        elif kind == "error":
            error = getattr(event, "error", None)
            self.error = getattr(error, "message", None) or str(error)
        elif kind in _STOPS:
            session = as_dict(event.session)
            if kind == "agent.session.requires_action" and self.answered and not self.moved:
                return False  # a stop from before our write-back, delivered again
            self.session_id = str(session["id"])
            self.stopped = session
            return True
        return False


# ---- reading the history --------------------------------------------------------------


def _last_pin(items: Sequence[InputItem]) -> tuple[Pin | None, list[InputItem]]:
    """The latest pin of the history and every item after it."""
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if type(item) is ResponsesItem and item.item.get("type") == PIN_TYPE:
            pin = Pin.from_item(item.item)
            if pin is None:
                raise UserError(f"history item {i} is an Agents API pin that cannot be read "
                                "(was the state edited?)")
            return pin, [items[j] for j in range(i + 1, len(items))]
    return None, []


def _first_input(items: Sequence[InputItem]) -> list[dict[str, Any]]:
    """The run's input as the session's first user messages; the API holds the history
    itself, so anything else in a history without a pin cannot be sent."""
    messages = []
    for n, item in enumerate(items):
        if type(item) is not UserInputItem or item.role != "user":
            kind = item.role if type(item) is UserInputItem else item.type
            raise _cannot(
                f"history item {n} ({kind}) cannot start a session: a session starts from "
                "user messages only and keeps its own history (a handoff input filter, or "
                "a conversation begun on another model, rewrote it)", "SW653"
            )
        content = list(item.parts) if item.parts is not None else [
            {"type": "input_text", "text": item.content}]
        messages.append({"role": "user", "type": "message", "content": content})
    if not messages:
        raise UserError("an Agents API session needs user input to start")
    return messages


def _after_pin(
    pin: Pin, tail: list[InputItem], agent: str
) -> tuple[dict[str, tuple[str, bool]], list[str | tuple[dict[str, Any], ...]]]:
    """The outputs of the pin's calls (call id → text, failed) and new user input."""
    wanted = {call_id for _, call_id in pin.calls}
    results: dict[str, tuple[str, bool]] = {}
    inputs: list[str | tuple[dict[str, Any], ...]] = []
    for item in tail:
        if type(item) is ToolCallOutputItem and item.call_id in wanted:
            results.setdefault(item.call_id, (item.output, item.is_error))
        elif type(item) is HandoffOutputItem and item.call_id in wanted:
            results.setdefault(item.call_id, (item.output, False))
            results[f"handoff:{item.call_id}"] = (item.target_agent, False)
        elif type(item) is UserInputItem:
            if item.role != "user":
                raise UserError(f"a {item.role} message cannot be sent to an Agents API "
                                "session (it takes user messages only)")
            inputs.append(item.parts if item.parts is not None else item.content)
    missing = [c for c in wanted if c not in results]
    if missing:
        raise UserError(
            f"session {pin.session_id}: the history has no output for call(s) "
            f"{', '.join(sorted(missing))} that agent {pin.agent!r} made; a paused call "
            "is answered by resuming its run"
        )
    return results, inputs


def _deliver_instructions(
    request: ModelRequest, results: dict[str, tuple[str, bool]], session_id: str
) -> dict[str, tuple[str, bool]]:
    """A handoff's output carrying the new agent's instructions: a session update has no
    field for them, so the model reads them where control moved."""
    for key, (target, _) in list(results.items()):
        if not key.startswith("handoff:") or target != request.agent:
            continue
        call_id = key[len("handoff:"):]
        text, failed = results[call_id]
        try:
            body = json.loads(text)
        except ValueError:
            body = {"assistant": target}
        if not isinstance(body, dict):
            body = {"assistant": target}
        body["instructions"] = request.instructions or ""
        results[call_id] = (json.dumps(body), failed)
        return results
    raise _cannot(
        f"agent {request.agent!r}: its instructions differ from those session {session_id} "
        "has, and no handoff to it can carry them; a session's instructions are set once, "
        "at create (an instructions function whose text changes between turns)", "SW654"
    )


def _unnamed(watch: _Watch, wait: float) -> StepswitchError:
    """A create's event stream that stopped before it named the session. Cut or silent,
    the session may yet exist and a retry may get through; ended in good order, the
    server answered with something else than the API's events, which no retry mends."""
    if watch.cut == "cut":
        return ModelProviderError(f"{watch.where}: the session's event stream broke before "
                                  "the session was created; retry the run")
    if watch.cut == "silent":
        return ModelProviderError(f"{watch.where}: the session's event stream sent no event "
                                  f"naming the session in {wait:g} s (the wait timeout); "
                                  "retry the run")
    if not watch.events:
        return ModelBehaviorError("malformed response: the answer to the session create "
                                  "is no Agents API event stream (it ended with no events)")
    return ModelBehaviorError(f"malformed response: the session create's event stream "
                              f"ended after {watch.events} event(s), none of them "
                              "agent.session.created or a session's stop")


def _gone(session_id: str, base_url: str, exc: openai.NotFoundError) -> UserError:
    """The pinned session is not on the server (deleted, expired, or another server):
    the conversation's history lived there, so the run cannot go on with it."""
    return UserError(
        f"the saved conversation's hosted session {session_id} no longer exists at "
        f"{base_url} (404: {server_message(exc)}); its history was kept there, so the "
        "conversation cannot go on there: start a new conversation (another session id; "
        "for a saved run, the run again from its input)"
    )


def _cannot(message: str, what: str) -> UserError:
    """A run the hosted API has no form for: one line naming the code that checks it."""
    return UserError(f"{message}; the Agents API cannot express this ({what})")


def _pending(session: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {(str(r.get("turn_id")), str(r.get("call_id")))
            for r in session.get("required_actions") or []
            if isinstance(r, dict) and r.get("type") == "function_call"}


def _call(action: Mapping[str, Any]) -> OutputFunctionCall:
    return OutputFunctionCall(str(action["name"]), arguments_text(action.get("arguments")),
                              str(action["call_id"]))


def _is_race(exc: openai.BadRequestError, call_id: str) -> bool:
    body = exc.body
    return isinstance(body, dict) and body.get("message") == race_message(call_id)


def _failed(session: Mapping[str, Any], error: str | None) -> ModelProviderError:
    detail = session.get("error") or error or "no reason given"
    return ModelProviderError(f"Agents API session {session.get('id')} failed: {detail}")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


async def _items_after(sessions: Any, session_id: str, after: str | None) -> list[dict[str, Any]]:
    """The session's items after item ``after`` (all, with None), oldest first."""
    options: dict[str, Any] = {"order": "asc", "limit": 100}
    if after is not None:
        options["after"] = after
    return [as_dict(item) async for item in sessions.items.list(session_id, **options)]
