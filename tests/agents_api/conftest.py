"""Fixtures for the Agents API tests: a started ``AgentsAPIServer`` per test, and the
helpers every file uses (a model on it, a run on each surface, a tool ledger)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.models import AgentsAPIModel, AgentsAPIServer


@pytest.fixture
def server() -> Iterator[AgentsAPIServer]:
    """A scripted Agents API server on 127.0.0.1 with an empty script."""
    with AgentsAPIServer(idle_timeout=120.0) as started:
        yield started


def model_on(server: AgentsAPIServer, *, max_retries: int = 2, **options: Any) -> AgentsAPIModel:
    """An ``AgentsAPIModel`` driving the real ``openai`` client against ``server``."""
    return AgentsAPIModel("gpt-test", server.client(max_retries=max_retries), **options)


def run_on(machine: Any, input: Any, model: Any, mode: str, **kwargs: Any) -> tuple[Any, list[Any]]:
    """The result (or the raised error) and, when streamed, the events."""
    if mode == "run_sync":
        return machine.run_sync(input, model=model, **kwargs), []
    if mode == "run":
        return asyncio.run(machine.run(input, model=model, **kwargs)), []

    async def consume() -> tuple[Any, list[Any]]:
        streamed = machine.run_streamed(input, model=model, **kwargs)
        events = [e async for e in streamed.stream_events()]
        return streamed, events

    return asyncio.run(consume())


def without_pins(items: Any) -> list[Any]:
    """Items with the sessions' pins left out (what a local run of the same script has)."""
    return [i for i in items if not (i.type == "responses_item"
                                     and i.item.get("type") == "agents_api.pin")]


def pins(items: Any) -> list[dict[str, Any]]:
    return [i.item for i in items if i.type == "responses_item"
            and i.item.get("type") == "agents_api.pin"]


class Ledger:
    """What the tools ran, in order: the count a resume must not grow."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.ran if n == name)


def ledger_workflow(ledger: Ledger) -> ss.StateMachine:
    """Support in small: triage looks up, hands off to refund, whose refund needs a yes."""

    @ss.function_tool
    def lookup_order(order_id: int) -> str:
        """Look up an order."""
        ledger.ran.append(("lookup_order", order_id))
        return f"order {order_id}: shipped"

    @ss.function_tool(needs_approval=True)
    def process_refund(order_id: int) -> dict[str, Any]:
        """Refund an order."""
        ledger.ran.append(("process_refund", order_id))
        return {"refunded": order_id, "ok": True}

    refund = ss.Agent(name="refund", instructions="You refund orders.", tools=[process_refund])
    triage = ss.Agent(name="triage", instructions="You triage.", tools=[lookup_order],
                      handoffs=[refund])
    return ss.Workflow("ledger", entry=triage, agents=[triage, refund]).compile()
