"""Flows for the flows-on-Temporal tests: a then-chain, a branch, a route loop, fan-outs
over steps and over agents, approvals in an agent node and in a fan-out branch, a step
that raises. Module-level, as a worker needs them (steps and tools by import path)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

import stepswitch as ss
from stepswitch.runtime.model import ModelRequest, ModelResponse, OutputFunctionCall, OutputMessage
from tests._items import output_of, text_of


class Outline(BaseModel):
    text: str


class Check(BaseModel):
    good: bool
    genre: Literal["scifi", "other"]


class Plan(BaseModel):
    items: list[str]


@ss.step
def check(outline: Outline) -> Check:
    return Check(good="good" in outline.text, genre="scifi")


def is_good(c: Check) -> bool:
    return c.good


@ss.step
async def describe(ctx: ss.RunContext[dict[str, str]], c: Check) -> str:
    return f"{ctx.context['style']} {c.genre} story"


@ss.step
def split(text: str) -> Plan:
    return Plan(items=text.split())


@ss.step
def upper(word: str) -> str:
    return word.upper()


@ss.step
def joined(words: list[str]) -> str:
    return "+".join(words)


@ss.step
def refuse(c: Check) -> str:
    raise ValueError(f"no {c.genre} story today")


@ss.step
def liar(c: Check) -> Outline:
    return {"title": "not an outline"}  # type: ignore[return-value]


@ss.function_tool(needs_approval=True)
def publish(title: str) -> str:
    """Publish a story."""
    return f"published {title}"


def then_chain() -> ss.StateMachine:
    """agent → step → async step with context → agent."""
    outline = ss.Agent("outline", "Outline a story.", output_type=Outline)
    writer = ss.Agent("writer", "Write the story.")
    return ss.Workflow("chain", outline, flow=[
        ss.then(outline, check),
        ss.then(check, describe),
        ss.then(describe, writer),
        ss.then(writer, ss.END),
    ]).compile()


def gated_story(refusing: bool = False) -> ss.StateMachine:
    """A branch to an agent whose tool needs approval, otherwise END (``refusing``:
    otherwise a step that raises; the same agents, another flow)."""
    outline = ss.Agent("outline", "Outline a story.", output_type=Outline)
    story = ss.Agent("story", "Write and publish the story.", tools=[publish])
    edges = [
        ss.then(outline, check),
        ss.branch(check, when=is_good, then=story, otherwise=refuse if refusing else ss.END),
        ss.then(story, ss.END),
    ]
    if refusing:
        edges.append(ss.then(refuse, ss.END))
    return ss.Workflow("gated_story", outline, flow=edges).compile()


def failing() -> ss.StateMachine:
    """A step that raises: the run fails with its exception."""
    outline = ss.Agent("outline", "Outline a story.", output_type=Outline)
    return ss.Workflow("failing", outline, flow=[
        ss.then(outline, check),
        ss.then(check, refuse),
        ss.then(refuse, ss.END),
    ]).compile()


def typed_entry() -> ss.StateMachine:
    """A flow that starts at a step taking an ``Outline`` (the run's input as JSON)."""
    return ss.Workflow("typed_entry", check, flow=[
        ss.then(check, liar),
        ss.then(liar, ss.END),
    ]).compile()


def fan_steps() -> ss.StateMachine:
    return ss.Workflow("fan_steps", split, flow=[
        ss.fan_out(split, over="items", each=upper, then=joined, max_items=5, concurrency=2),
        ss.then(joined, ss.END),
    ]).compile()


fan_agents_flow = ss.Workflow("fan_agents", split, flow=[
    ss.fan_out(split, over="items", each=ss.Agent("translator", "Translate.", tools=[publish]),
               then=joined, max_items=4, concurrency=2),
    ss.then(joined, ss.END),
])
"""A fan-out over agents (two at once) whose agent has the gated tool (module-level: a
CLI worker loads it by path)."""


def fan_agents() -> ss.StateMachine:
    """``fan_agents_flow``: with ``ByInput`` the word "gate" makes its branch call the
    gated tool; with ``TwinCalls`` every branch calls it, under the same call id."""
    return fan_agents_flow.compile()


class Box:
    """A plain class: fine between steps in-process, no JSON to cross to a worker."""

    def __init__(self, text: str) -> None:
        self.text = text


@ss.step
def boxed(text: str) -> Box:
    return Box(text)


@ss.step
def unboxed(box: Box) -> str:
    return box.text


plain_values = ss.Workflow("plain_values", boxed, flow=[
    ss.then(boxed, unboxed),
    ss.then(unboxed, ss.END),
])


class ByInput:
    """Answers by the request, never by call order (fan-out branches run at once): an
    outline agent writes the outline its input asks for, a translator echoes its
    input in brackets (after publishing, for "gate"), others echo what they were sent."""

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        first = text_of(request.input[0])
        last = request.input[-1]
        if request.agent == "translator" and first == "gate" and last is request.input[0]:
            call = OutputFunctionCall("publish", json.dumps({"title": "gate"}), "c-gate")
            return ModelResponse((call,))
        if request.agent == "outline":
            return ModelResponse((OutputMessage(json.dumps({"text": first})),))
        return ModelResponse((OutputMessage(f"<{first}>"),))


def by_input() -> Any:
    return ByInput()


class TwinCalls:
    """Every fan-out branch's model asks to publish its word under one call id, call_0
    (as servers that number calls per response do), then says what the tool answered.
    Answers by the request only: the branches run at once."""

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        first = text_of(request.input[0])
        last = request.input[-1]
        if last is request.input[0]:
            call = OutputFunctionCall("publish", json.dumps({"title": first}), "call_0")
            return ModelResponse((call,))
        return ModelResponse((OutputMessage(f"<{first}: {output_of(last)}>"),))


twin_calls = TwinCalls()


class Grade(BaseModel):
    score: Literal["pass", "needs_improvement"]
    feedback: str


@ss.step
def regrade(g: Grade) -> str:
    return f"again: {g.feedback}"


def publish_loop() -> ss.StateMachine:
    """An agent node whose tool needs approval, visited twice by a route loop: each
    round pauses under the same node key."""
    editor = ss.Agent("editor", "Publish, then grade it.", tools=[publish], output_type=Grade)
    return ss.Workflow("publish_loop", editor, flow=[
        ss.route(editor, on="score", max_uses=2, cases={"needs_improvement": regrade,
                                                         "pass": ss.END}),
        ss.then(regrade, editor),
    ]).compile()
