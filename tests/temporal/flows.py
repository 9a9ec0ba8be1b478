"""Workflows for the durability tests, importable by a worker in another process: a
handoff workflow (``durable``) and a flow (``durable_flow``: a step, the same clerk's
work as an agent node, a step).

Its tools count every execution in an SQLite file (``$STEPSWITCH_LEDGER``), outside
the worker, so a test can see what ran even after it killed the worker. ``model``
answers by how far the conversation is, not by call count, so a new worker picks up
where the killed one left off; it holds the second call until ``$STEPSWITCH_GO``
exists, so the test can kill the worker while that call is in flight.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

from pydantic import BaseModel

import stepswitch as ss
from stepswitch.runtime.model import ModelRequest, ModelResponse, OutputItem
from stepswitch.testing import assistant_message, function_call


def record(name: str) -> None:
    with sqlite3.connect(os.environ["STEPSWITCH_LEDGER"], timeout=10) as db:
        db.execute("CREATE TABLE IF NOT EXISTS ran (name TEXT)")
        db.execute("INSERT INTO ran VALUES (?)", (name,))


def counts(path: str) -> dict[str, int]:
    with sqlite3.connect(path, timeout=10) as db:
        rows = db.execute("SELECT name, COUNT(*) FROM ran GROUP BY name").fetchall()
    return dict(rows)


@ss.function_tool
def reserve(item: str) -> str:
    """Reserve an item."""
    record("reserve")
    return f"reserved {item}"


@ss.function_tool(needs_approval=True)
def charge(amount: int) -> str:
    """Charge the customer."""
    record("charge")
    return f"charged {amount}"


clerk = ss.Agent("clerk", instructions="Reserve, then charge.", tools=[reserve, charge])
durable = ss.Workflow("durable", entry=clerk, agents=[clerk], max_turns=6)


class Order(BaseModel):
    """What the first step makes of the request."""

    item: str
    quantity: int


@ss.step
def take_order(request: str) -> Order:
    """Read the request (counted: it must run once)."""
    record("take_order")
    return Order(item=request.split()[-1], quantity=1)


@ss.step
async def receipt(summary: str) -> str:
    """The receipt the run ends with (counted: it must run once)."""
    record("receipt")
    return f"receipt: {summary}"


packer = ss.Agent("packer", instructions="Reserve, then charge.", tools=[reserve, charge])
durable_flow = ss.Workflow("durable_flow", take_order, flow=[
    ss.then(take_order, packer),
    ss.then(packer, receipt),
    ss.then(receipt, ss.END),
], max_turns=6)


class ByProgress:
    """Answers by how many tool outputs the conversation holds."""

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        done = sum(1 for i in request.input if i.type == "tool_call_output_item")
        if done == 0:
            out: list[OutputItem] = [function_call("reserve", {"item": "lamp"}, call_id="c1")]
        elif done == 1:
            go = os.environ.get("STEPSWITCH_GO")
            while go and not Path(go).exists():
                await asyncio.sleep(0.05)
            out = [function_call("charge", {"amount": 30}, call_id="c2")]
        else:
            out = [assistant_message("reserved and charged")]
        return ModelResponse(tuple(out))


model = ByProgress()
