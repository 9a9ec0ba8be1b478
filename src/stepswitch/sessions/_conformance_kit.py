"""The parts of the session conformance suite (:mod:`stepswitch.sessions.conformance`):
the small workflow its run cases use, test doubles (a model that makes runs overlap, a
session that loses an acknowledgement), the two-processes writer and an SDK ``Runner``
conversation with a scripted model."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from typing import Any

from stepswitch.context import RunContext, Usage
from stepswitch.errors import SessionConflict
from stepswitch.runtime.items import UserInputItem
from stepswitch.runtime.model import ModelRequest, ModelResponse, OutputMessage
from stepswitch.sessions._corpus import PNG

__all__ = [
    "Factory",
    "LostAck",
    "Together",
    "append_all",
    "close_all",
    "conformance_machine",
    "fresh_id",
    "other_process",
    "pay",
    "sdk_conversation",
    "texts_of",
    "user_says",
]

Factory = Callable[[str], Any]
"""``session_id -> Session``: how a case makes the sessions it works on."""


def user_says(text: str) -> UserInputItem:
    return UserInputItem(text)


def texts_of(items: Any) -> list[str]:
    return [getattr(i, "content", "") for i in items]


async def close_all(*sessions: Any) -> None:
    for s in sessions:
        close = getattr(s, "close", None)
        if close is not None:
            await close()


# -- a small workflow for the run cases -------------------------------------------------------


def pay(ctx: RunContext[dict[str, Any]], amount: int) -> str:
    """Pay out an amount (gated: a human approves each call)."""
    ctx.context.setdefault("paid", []).append((amount, ctx.idempotency_key))
    return f"paid {amount}"


_MACHINE: Any = None


def conformance_machine() -> Any:
    global _MACHINE
    if _MACHINE is None:
        from stepswitch.dsl import Agent, Workflow, function_tool

        tool = function_tool(needs_approval=True)(pay)
        desk = Agent(name="desk", instructions="Pay people.", tools=[tool])
        front = Agent(name="front", instructions="Greet; send payments to desk.",
                      handoffs=[desk])
        _MACHINE = Workflow(name="conformance", entry=front, agents=[front, desk]).compile()
    return _MACHINE


class Together:
    """A model whose calls all wait until ``parties`` calls arrived, so overlapping
    runs have all read the session before any of them appends."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.event = asyncio.Event()
        self.agents: list[str] = []

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        self.arrived += 1
        self.agents.append(request.agent)
        if self.arrived >= self.parties:
            self.event.set()
        await asyncio.wait_for(self.event.wait(), 30)
        return ModelResponse((OutputMessage(f"answer {self.arrived}"),), Usage())


class LostAck:
    """A session whose next append commits and then raises (the acknowledgement is
    lost on the way back)."""

    def __init__(self, inner: Any, *, fail_after: int = 0) -> None:
        self.inner = inner
        self.session_id = inner.session_id
        self.skip = fail_after
        self.failed = 0

    async def load(self, *, limit: int | None = None) -> Any:
        return await self.inner.load(limit=limit)

    async def append(self, items: Any, **kw: Any) -> int:
        version: int = await self.inner.append(items, **kw)
        if items and self.failed == 0:
            if self.skip:
                self.skip -= 1
            else:
                self.failed += 1
                raise ConnectionResetError("connection reset after the commit")
        return version


def append_all(factory: Factory, session_id: str, tag: str, n: int) -> int:
    """Append ``n`` items with compare-and-append, retrying conflicts; the conflicts."""

    async def go() -> int:
        session = factory(session_id)
        conflicts = 0
        for k in range(n):
            while True:
                snap = await session.load(limit=0)
                try:
                    await session.append([user_says(f"{tag}-{k}")], operation_id=f"{tag}-{k}",
                                         expected_version=snap.version, current_agent=tag)
                    break
                except SessionConflict:
                    conflicts += 1
        await close_all(session)
        return conflicts

    return asyncio.run(go())


def other_process(factory: Factory, session_id: str, tag: str, n: int, ready: Any,
                   start: Any, done: Any) -> None:
    ready.set()
    start.wait(60)
    done.put(append_all(factory, session_id, tag, n))


# -- an SDK Runner conversation with a scripted model ------------------------------------------


def _sdk_script() -> list[list[Any]]:
    """What the scripted SDK model answers, call by call: reasoning before each answer,
    citations with logprobs, a tool call."""
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
        ResponseReasoningItem,
    )
    from openai.types.responses.response_output_text import (
        AnnotationFileCitation,
        AnnotationURLCitation,
        Logprob,
    )
    from openai.types.responses.response_reasoning_item import Summary

    def think(n: int) -> ResponseReasoningItem:
        return ResponseReasoningItem(
            id=f"rs_{n}", type="reasoning", encrypted_content=f"enc-{n}",
            summary=[Summary(type="summary_text", text=f"step {n}")])

    def say(n: int, text: str, annotations: list[Any]) -> ResponseOutputMessage:
        return ResponseOutputMessage(
            id=f"msg_{n}", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(
                type="output_text", text=text, annotations=annotations,
                logprobs=[Logprob(token=text[:1], bytes=[ord(text[0])], logprob=-0.25,
                                  top_logprobs=[])])])

    url = AnnotationURLCitation(type="url_citation", start_index=0, end_index=5,
                                url="https://example.com/px", title="Pixels")
    cite = AnnotationFileCitation(type="file_citation", file_id="file-1",
                                  filename="a.pdf", index=2)
    return [
        [think(1), say(1, "A pixel, per [1].", [url])],
        [think(2), ResponseFunctionToolCall(
            id="fc_2", type="function_call", call_id="call_2", name="lookup",
            arguments='{"q": "pixel"}', status="completed")],
        [think(3), say(3, "Found it in a.pdf.", [cite])],
        [think(4), say(4, "You're welcome.", [])],
    ]


async def sdk_conversation(session: Any) -> tuple[list[Any], list[Any]]:
    """Three turns of an SDK ``Runner`` over ``session`` (a user image, reasoning,
    citations, a tool call): the items stored, and what the model was sent each call."""
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.items import ModelResponse as SDKResponse
    from agents.models.interface import Model as SDKModel
    from agents.usage import Usage as SDKUsage

    script = _sdk_script()
    inputs: list[Any] = []

    class Scripted(SDKModel):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any,
                               **kwargs: Any) -> SDKResponse:
            inputs.append(json.loads(json.dumps(input)))
            return SDKResponse(output=script.pop(0), usage=SDKUsage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def lookup(q: str) -> str:
        """Look a word up."""
        return f"{q}: see a.pdf"

    agent = Agent(name="front", instructions="Describe images.", model=Scripted(),
                  tools=[lookup])
    config = RunConfig(tracing_disabled=True)
    picture: Any = [{"role": "user", "content": [
        {"type": "input_text", "text": "What is in this picture?"},
        {"type": "input_image", "image_url": PNG, "detail": "high"}]}]
    turns: list[Any] = [picture, "Look it up.", "Thanks!"]
    for turn in turns:
        await Runner.run(agent, turn, session=session, run_config=config)
    assert not script, "the scripted model was not asked as often as scripted"
    return list(await session.get_items()), inputs


def fresh_id() -> str:
    return f"conformance-{uuid.uuid4().hex[:12]}"
