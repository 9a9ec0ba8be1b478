"""The support workflow on the hosted Agents API, run durably on Temporal: each model
call (a session create, a write-back and the wait for the session's next stop) is an
activity, the approval a ``decide`` update. The run's items, pins included, equal an
in-process run's against a server given the same script, and the history replays."""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import Client

from graphs.support import support
from stepswitch.models import AgentsAPIModel, AgentsAPIServer
from stepswitch.models.script import call, message
from tests.temporal.drive import in_process, on_temporal


def _script() -> list[Any]:
    return [
        [call("lookup_order", {"order_id": 42})],
        [message("Handing you to refunds."), call("transfer_to_refund", {})],
        [call("process_refund", {"order_id": 42, "reason": "damaged"})],
        [message("Refunded order 42.")],
    ]


def test_the_support_workflow_on_the_agents_api_runs_durably(dev_server: str) -> None:
    machine = support.compile()
    with AgentsAPIServer(_script()) as local_server:
        local = in_process(machine, "refund 42", lambda: AgentsAPIModel(
            "gpt-test", local_server.client()))
    with AgentsAPIServer(_script()) as server:

        async def go() -> Any:
            client = await Client.connect(dev_server)
            return await on_temporal(client, machine, "refund 42",
                                     lambda: AgentsAPIModel("gpt-test", server.client()))

        durable, _ = asyncio.run(go())
        server.assert_complete()
        assert server.session()["status"] == "idle"
        assert len(server.applied) == 3  # each write-back applied once
    assert durable.error is None and local.error is None
    assert durable.final_output == local.final_output == "Refunded order 42."
    assert durable.last_agent == local.last_agent == "refund"
    assert durable.items == local.items
    assert [i["type"] for i in durable.items].count("responses_item") == 4  # one pin a turn
