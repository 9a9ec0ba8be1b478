"""The support workflow over real HTTP: the official ``openai`` client talks to a
scripted OpenAI-compatible server on 127.0.0.1, on both wire APIs.

The run looks the order up, hands off to the refund agent, pauses for a human's
approval of the refund, crosses a "process boundary" as JSON, and resumes. To use a
real model instead, drop the server and pass ``OpenAIResponsesModel("gpt-4.1")``
(it reads ``OPENAI_API_KEY``).

Run: .venv/bin/python examples/support_over_http.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for graphs.support

import stepswitch as ss
from graphs.support import support
from stepswitch.models import (
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    OpenAIServer,
)
from stepswitch.models.script import call, error_reply, message
from stepswitch.runtime.events import RawResponsesStreamEvent, RunItemStreamEvent

SCRIPT = [
    error_reply(429, retry_after=0.05),  # the client retries this by itself
    [call("lookup_order", {"order_id": 42})],
    [message("Let me pass you to our refund specialist."), call("transfer_to_refund", {})],
    [call("process_refund", {"order_id": 42, "reason": "arrived damaged"})],
    [message("Done: order 42 is refunded in full.")],
]


async def main() -> None:
    machine = support.compile()
    for api, cls in (("responses", OpenAIResponsesModel), ("chat", OpenAIChatCompletionsModel)):
        with OpenAIServer(SCRIPT) as server:
            model = cls("gpt-4.1", server.client())
            print(f"== {api} API at {server.url}")
            streamed = machine.run_streamed("I want a refund for order 42", model=model)
            deltas = 0
            async for event in streamed.stream_events():
                if isinstance(event, RawResponsesStreamEvent):
                    deltas += 1
                elif isinstance(event, RunItemStreamEvent):
                    item = event.item
                    print(f"  {event.name:<18} {item.agent:<7} {getattr(item, 'name', '')}")
            print(f"  ({deltas} raw stream events)")
            [pending] = streamed.interruptions
            print(f"  paused: {pending.name}({pending.arguments}) waits for approval")

            saved = streamed.to_state().to_json()  # e.g. written to a file or a database
            state = ss.RunState.from_json(saved)
            state.approve(pending)
            result = await machine.run(state, model=model)
            print(f"  final output: {result.final_output}")
            server.assert_complete()
            last = server.model_requests()[-1]
            print(
                f"  {len(server.requests)} HTTP requests; the last carried "
                f"{len(last.body.get('input') or last.body.get('messages'))} history entries"
            )


if __name__ == "__main__":
    asyncio.run(main())
