"""Models by name (OpenAIProvider) and in-process transcripts (TranscriptModel)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from stepswitch.errors import ModelBehaviorError, ModelProviderError, UserError
from stepswitch.models import (
    OpenAIChatCompletionsModel,
    OpenAIProvider,
    OpenAIResponsesModel,
    OpenAIServer,
    TranscriptModel,
)
from stepswitch.models.script import call, error_reply, message, raw_reply
from stepswitch.runtime.items import UserInputItem
from stepswitch.runtime.model import (
    ModelRequest,
    OutputFunctionCall,
    OutputMessage,
    ResponseCompleted,
)

REQ = ModelRequest("triage", None, (UserInputItem("hi"),), (), None)


def test_provider_makes_models_for_its_api_sharing_one_client(openai_server: OpenAIServer) -> None:
    openai_server.add([message("a")], [message("b")])
    provider = OpenAIProvider(api="chat", base_url=openai_server.url, api_key="k", max_retries=0)
    one, two = provider.get_model("m1"), provider.get_model("m2")
    assert isinstance(one, OpenAIChatCompletionsModel)
    assert one.client is two.client
    asyncio.run(one.get_response(REQ))
    asyncio.run(two.get_response(REQ))
    assert [r.body["model"] for r in openai_server.requests] == ["m1", "m2"]
    assert all(r.api == "chat" for r in openai_server.requests)


def test_provider_needs_a_key_when_it_makes_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="no OpenAI API key"):
        OpenAIProvider().get_model("x")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert isinstance(OpenAIProvider().get_model("x"), OpenAIResponsesModel)


def test_provider_rejects_an_unknown_api() -> None:
    with pytest.raises(UserError, match="api must be"):
        OpenAIProvider(api="soap")  # type: ignore[arg-type]


def run(model: TranscriptModel) -> Any:
    return asyncio.run(model.get_response(REQ))


def test_transcript_replays_steps_and_fills_call_ids(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            [
                [{"type": "function_call", "name": "lookup_order", "arguments": {"order_id": 1}}],
                {
                    "output": [{"type": "message", "text": "done"}],
                    "usage": {"input_tokens": 2, "output_tokens": 3},
                },
            ]
        )
    )
    model = TranscriptModel.from_file(path)
    first = run(model)
    assert first.output == (OutputFunctionCall("lookup_order", '{"order_id": 1}', "call_0_0"),)

    async def streamed() -> list[Any]:
        return [e async for e in model.stream_response(REQ)]

    [done] = asyncio.run(streamed())
    assert isinstance(done, ResponseCompleted)
    assert done.response.output == (OutputMessage("done"),)
    assert done.response.usage.total_tokens == 5
    with pytest.raises(UserError, match=r"t.json: the script has 2 step\(s\).*model call 3"):
        run(model)


def test_transcript_error_and_raw_steps() -> None:
    model = TranscriptModel(
        [
            error_reply(401),
            error_reply(429),
            raw_reply("{oops"),
            raw_reply('{"choices": [{"message": {"content": "hey"}}]}'),
            [call("f", {}, "c")],
        ]
    )
    with pytest.raises(UserError, match="401"):
        run(model)
    with pytest.raises(ModelProviderError, match="429"):
        run(model)
    with pytest.raises(ModelBehaviorError, match="not valid JSON"):
        run(model)
    assert run(model).output == (OutputMessage("hey"),)
    assert run(model).output == (OutputFunctionCall("f", "{}", "c"),)
    assert model.remaining == 0
