"""``AgentsAPIServer`` speaks the Agents API's wire format to the real ``openai`` client:
what it accepts, what it refuses (as the API documents), and what it records."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from stepswitch.errors import UserError
from stepswitch.models import AgentsAPIServer
from stepswitch.models.script import call, message, raw_reply


def sessions(server: AgentsAPIServer) -> Any:
    return server.client(max_retries=0).beta.agents.sessions


def test_a_session_goes_idle_with_its_answer_and_lists_its_items(
    server: AgentsAPIServer,
) -> None:
    server.add([message("Hello there.")], [message("Again.")])

    async def main() -> Any:
        s = sessions(server)
        created = await s.create(environment={"type": "none"}, agent={"model": "m"},
                                 input="hi", metadata={"ticket": "T-1"})
        assert created.status == "idle" and created.metadata == {"ticket": "T-1"}
        page = await s.items.list(created.id, order="asc", limit=1)
        first = [i.type for i in page.data]
        everything = [i async for i in s.items.list(created.id, order="asc", limit=1)]
        await s.events.create(created.id, events=[{
            "type": "agent.session.input.message",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "more"}]}]}])
        again = await s.retrieve(created.id)
        return first, everything, again

    first, everything, again = asyncio.run(main())
    assert first == ["message"]
    assert [(i.role, i.output_text) for i in everything] == [
        ("user", ""), ("assistant", "Hello there.")]
    assert again.status == "idle" and len(server.items()) == 4
    server.assert_complete()


def test_what_the_api_refuses(server: AgentsAPIServer) -> None:
    server.add([call("lookup", {"id": 1})])

    async def main() -> list[tuple[int, str]]:
        s = sessions(server)
        refused: list[tuple[int, str]] = []

        async def expect(coro: Any) -> None:
            try:
                await coro
            except openai.APIStatusError as exc:
                body = exc.body if isinstance(exc.body, dict) else {}
                refused.append((exc.status_code, str(body.get("message"))))
            else:
                raise AssertionError("accepted")

        await expect(s.create(environment={"type": "none"}, agent={"model": "m"}))
        await expect(s.create(environment={"type": "none"}, agent={"model": "m"}, input="x",
                              metadata={f"k{i}": "v" for i in range(17)}))
        created = await s.create(environment={"type": "none"}, agent={"model": "m"},
                                 input="x")
        await expect(s.update(created.id, extra_body={"agent": {"instructions": "new"}}))
        [action] = created.required_actions
        result = {"type": "agent.session.input.tool_result", "turn_id": action.turn_id,
                  "call_id": action.call_id, "success": True, "output": "ok"}
        await expect(s.events.create(created.id, events=[{**result, "call_id": "nope"}]))
        await expect(s.events.create(created.id, events=[{
            "type": "agent.session.input.message",
            "input": [{"role": "user", "content": []}]}]))
        server.add([message("done")])
        await s.events.create(created.id, events=[result], idempotency_key="k1")
        await s.events.create(created.id, events=[result], idempotency_key="k1")  # replayed
        await expect(s.events.create(created.id, events=[{**result, "output": "other"}],
                                     idempotency_key="k1"))
        await expect(s.retrieve("sess_missing"))
        return refused

    refused = asyncio.run(main())
    assert [status for status, _ in refused] == [400, 400, 400, 400, 400, 409, 404]
    assert "input is required" in refused[0][1]
    assert "more than the 16 allowed" in refused[1][1]
    assert "agent.instructions cannot be updated" in refused[2][1]
    assert refused[3][1] == "Unknown pending tool call: nope"
    assert "requires_action; a message needs an idle session" in refused[4][1]
    assert len(server.applied) == 1  # the replay was not applied again
    assert [k for _, k in server.write_backs] == [None, "k1", "k1", "k1"]


def test_the_beta_header_is_required(server: AgentsAPIServer) -> None:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{server.url}/agents/sessions/sess_1", method="GET",
                                     headers={"Authorization": "Bearer test"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 400
    assert b"OpenAI-Beta: agents=v1" in caught.value.read()


def test_a_script_it_cannot_serve_is_a_user_error_and_running_dry_fails_the_session(
    server: AgentsAPIServer,
) -> None:
    with pytest.raises(UserError, match="a raw reply has no meaning on the Agents API"):
        server.add(raw_reply("{}"))

    async def main() -> Any:
        return await sessions(server).create(environment={"type": "none"},
                                             agent={"model": "m"}, input="x")

    failed = asyncio.run(main())
    assert failed.status == "failed" and "script exhausted" in (failed.error or "")
    with pytest.raises(AssertionError, match="asked for a model step, none is left"):
        server.assert_complete()
