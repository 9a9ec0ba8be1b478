"""``to_sdk_session`` on every backend behaves as the SDK's own ``SQLiteSession``: the
same calls, and the same SDK ``Runner`` conversations, on both, give the same answers
and leave the same items."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from stepswitch.sessions import MemorySession, to_sdk_session
from tests.sessions.stores import (
    pg_factory,
    pg_schema,
    redis_factory,
    redis_prefix,
    sqlite_factory,
)

__all__ = ["pg_schema", "redis_prefix"]  # fixtures used below

pytest.importorskip("agents")


@pytest.fixture(params=["memory", "sqlite", "postgres", "redis"])
def backend(request: Any, tmp_path: Any) -> Any:
    if request.param == "memory":
        return MemorySession
    if request.param == "sqlite":
        return sqlite_factory(str(tmp_path / "ours.db"))
    if request.param == "postgres":
        return pg_factory(request.getfixturevalue("pg_schema"))
    return redis_factory(request.getfixturevalue("redis_prefix"))


def _pair(backend: Any, tmp_path: Any, session_id: str) -> tuple[Any, Any, Any]:
    """(the SDK's SQLiteSession, our adapter, our session) for one conversation."""
    from agents import SQLiteSession

    ours = backend(session_id)
    return SQLiteSession(session_id, str(tmp_path / "theirs.db")), to_sdk_session(ours), ours


async def _done(theirs: Any, ours: Any) -> None:
    theirs.close()
    close = getattr(ours, "close", None)
    if close is not None:
        await close()


def test_the_four_methods_answer_alike(backend: Any, tmp_path: Any) -> None:
    async def go() -> None:
        sid = f"p-{uuid.uuid4().hex[:8]}"
        theirs, adapter, ours = _pair(backend, tmp_path, sid)
        try:
            items = [{"role": "user", "content": f"m{k}"} if k % 2 == 0 else
                     {"role": "assistant", "content": f"r{k}"} for k in range(6)]
            for s in (theirs, adapter):
                assert await s.pop_item() is None
                await s.add_items([])
                await s.add_items(items[:4])
                await s.add_items(items[4:])
            for limit in (None, 0, 1, 2, 4, 6, 7, 100, -1):
                assert await adapter.get_items(limit) == await theirs.get_items(limit), limit
            for _ in range(7):
                assert await adapter.pop_item() == await theirs.pop_item()
            await adapter.add_items(items[:2])
            await theirs.add_items(items[:2])
            await adapter.clear_session()
            await theirs.clear_session()
            assert await adapter.get_items() == await theirs.get_items() == []
        finally:
            await _done(theirs, ours)

    asyncio.run(go())


def _text_reply(text: str) -> Any:
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    return ResponseOutputMessage(
        id=f"msg-{text}", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


async def _chat(session: Any, method: str, settings: Any) -> list[Any]:
    """Four SDK turns over ``session`` (the last with ``settings``): what the model was
    sent on each call."""
    from agents import Agent, RunConfig, Runner
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage

    sent: list[Any] = []

    class Replies(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any,
                               **kwargs: Any) -> ModelResponse:
            sent.append(list(input))
            return ModelResponse(output=[_text_reply(f"reply {len(sent)}")], usage=Usage(),
                                 response_id=None)

        async def stream_response(self, system_instructions: Any, input: Any, *args: Any,
                                  **kwargs: Any) -> Any:
            from openai.types.responses import Response, ResponseCompletedEvent

            sent.append(list(input))
            response = Response(
                id="r", created_at=0, model="scripted", object="response",
                output=[_text_reply(f"reply {len(sent)}")], tool_choice="auto", tools=[],
                parallel_tool_calls=False)
            yield ResponseCompletedEvent(type="response.completed", response=response,
                                         sequence_number=0)

    agent = Agent(name="helper", instructions="help", model=Replies())
    for turn in range(4):
        config = RunConfig(tracing_disabled=True,
                           session_settings=settings if turn == 3 else None)
        if method == "run":
            await Runner.run(agent, f"message {turn}", session=session, run_config=config)
        else:
            result = Runner.run_streamed(agent, f"message {turn}", session=session,
                                         run_config=config)
            async for _ in result.stream_events():
                pass
    return sent


@pytest.mark.parametrize("method", ["run", "run_streamed"])
def test_runner_conversations_alike(backend: Any, tmp_path: Any, method: str) -> None:
    from agents import SessionSettings

    async def go() -> None:
        sid = f"r-{uuid.uuid4().hex[:8]}"
        theirs, adapter, ours = _pair(backend, tmp_path, sid)
        try:
            settings = SessionSettings(limit=3)
            sent_ours = await _chat(adapter, method, settings)
            sent_theirs = await _chat(theirs, method, settings)
            assert sent_ours == sent_theirs
            assert len(sent_ours[3]) == 4  # the last 3 items and the new message
            assert await adapter.get_items() == await theirs.get_items()
            assert len(await adapter.get_items()) == 8
        finally:
            await _done(theirs, ours)

    asyncio.run(go())


def test_close_is_synchronous_and_refuses_later_calls_like_the_sdk(
        backend: Any, tmp_path: Any) -> None:
    """SDK code calls ``session.close()`` without ``await``; after it, every operation
    raises ``RuntimeError`` on the adapter as on the SDK's own ``SQLiteSession``."""
    async def go() -> None:
        sid = f"c-{uuid.uuid4().hex[:8]}"
        theirs, adapter, ours = _pair(backend, tmp_path, sid)
        for s in (theirs, adapter):
            await s.add_items([{"role": "user", "content": "kept"}])
            assert s.close() is None
            s.close()  # a second close is harmless, as on the SDK's session
            for call in (s.get_items(), s.add_items([]), s.pop_item(), s.clear_session()):
                with pytest.raises(RuntimeError, match="is closed"):
                    await call
        # the stored conversation is untouched by the close: a new session reads it
        again = (MemorySession(sid, store=ours.store) if isinstance(ours, MemorySession)
                 else backend(sid))
        try:
            assert [i["content"] for i in await to_sdk_session(again).get_items()] == ["kept"]
        finally:
            await again.close()

    asyncio.run(go())


def test_session_settings_are_kept_as_the_sdk_keeps_them(backend: Any, tmp_path: Any) -> None:
    from agents import SessionSettings, SQLiteSession

    ours = backend(f"s-{uuid.uuid4().hex[:8]}")
    try:
        for given in (None, {"limit": 0}, SessionSettings(limit=5)):
            theirs = SQLiteSession("x", session_settings=given)
            adapter = to_sdk_session(ours, session_settings=given)
            assert isinstance(adapter.session_settings, SessionSettings)
            assert adapter.session_settings == theirs.session_settings
            theirs.close()
        with pytest.raises(TypeError) as sdk_error:
            SQLiteSession("x", session_settings={"limitt": 1})
        with pytest.raises(TypeError) as our_error:
            to_sdk_session(ours, session_settings={"limitt": 1})
        assert str(our_error.value) == str(sdk_error.value)
    finally:
        asyncio.run(ours.close())
