"""Benchmark: the cost stepswitch adds around a real HTTP model call.

Measures, with the real ``openai`` client against ``OpenAIServer`` on 127.0.0.1:
- model calls per second through each adapter (Responses / Chat, plain / streamed),
  each request carrying a history of H items (tool calls and outputs);
- the pure conversion cost (items → request body) for long histories, no I/O.
Run: .venv/bin/python bench/bench_openai_http.py [--calls 200] [--history 20 200 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.openai_chat import chat_params
from stepswitch.models.openai_responses import responses_params
from stepswitch.models.script import call, message
from stepswitch.runtime.items import ToolCallItem, ToolCallOutputItem, UserInputItem
from stepswitch.runtime.model import ModelRequest, ToolDefinition

TOOL = ToolDefinition(
    "lookup_order",
    "Look up an order by id.",
    {
        "type": "object",
        "properties": {"order_id": {"type": "integer"}},
        "required": ["order_id"],
        "additionalProperties": False,
    },
)


def request(history: int) -> ModelRequest:
    items: list[Any] = [UserInputItem("where are my orders?")]
    for i in range(history // 2):
        items.append(ToolCallItem("triage", "lookup_order", f"c{i}", f'{{"order_id": {i}}}'))
        items.append(ToolCallOutputItem("triage", f"c{i}", f"order {i}: shipped"))
    return ModelRequest("triage", "You triage.", tuple(items), (TOOL,), None)


async def calls_per_second(cls: Any, stream: bool, calls: int, history: int) -> float:
    step = [message("Order 42 shipped on Monday."), call("lookup_order", {"order_id": 42})]
    with OpenAIServer([step] * calls) as server:
        model = cls("gpt-bench", server.client())
        req = request(history)
        start = time.perf_counter()
        for _ in range(calls):
            if stream:
                async for _event in model.stream_response(req):
                    pass
            else:
                await model.get_response(req)
        return calls / (time.perf_counter() - start)


def conversion_ms(history: int, repeat: int = 20) -> tuple[float, float]:
    """Best of ``repeat`` runs (the least disturbed by other load), in milliseconds."""
    req = request(history)
    out = []
    for build in (responses_params, chat_params):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            build(req, "m")
            times.append(time.perf_counter() - start)
        out.append(min(times) * 1000)
    return out[0], out[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--history", type=int, nargs="+", default=[20, 200, 2000])
    args = parser.parse_args()
    print(f"model calls per second over loopback HTTP ({args.calls} calls each)")
    for history in args.history[:2]:
        for name, cls in (
            ("responses", OpenAIResponsesModel),
            ("chat", OpenAIChatCompletionsModel),
        ):
            for stream in (False, True):
                rate = asyncio.run(calls_per_second(cls, stream, args.calls, history))
                mode = "streamed" if stream else "plain"
                print(f"  {name:<9} {mode:<8} history={history:<5} {rate:8.1f} calls/s")
    print("request building (items → body), no I/O, best of 20")
    for history in args.history:
        r, c = conversion_ms(history)
        print(f"  history={history:<6} responses {r:8.3f} ms   chat {c:8.3f} ms")


if __name__ == "__main__":
    main()
