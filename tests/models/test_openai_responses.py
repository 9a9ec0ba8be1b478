"""Responses API specifics: reading a Response object."""

from __future__ import annotations

from typing import Any

import pytest

from stepswitch.errors import ModelBehaviorError, ModelProviderError
from stepswitch.models.openai_responses import parse_response
from stepswitch.runtime.model import OutputFunctionCall, OutputMessage, OutputResponsesItem


def test_reasoning_items_are_kept_verbatim_and_message_parts_joined() -> None:
    data = {
        "id": "resp_9",
        "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "content": [
                    {"type": "output_text", "text": "Hello, "},
                    {"type": "output_text", "text": "world."},
                ],
            },
            {"type": "function_call", "name": "f", "call_id": "c1", "arguments": "{}"},
        ],
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    response = parse_response(data)
    assert response.output == (
        OutputResponsesItem({"type": "reasoning", "id": "rs_1", "summary": []}),
        OutputMessage("Hello, world."),
        OutputFunctionCall("f", "{}", "c1"),
    )
    assert (response.usage.total_tokens, response.response_id) == (7, "resp_9")


@pytest.mark.parametrize(
    ("data", "phrase"),
    [
        ({"output": "nope"}, "no output list"),
        ({"output": [3]}, "output\\[0\\] is not an object"),
        ({"output": [{"type": "message"}]}, "no content list"),
        ({"output": [{"type": "function_call", "name": "f"}]}, "without name or call_id"),
    ],
)
def test_malformed_responses(data: dict[str, Any], phrase: str) -> None:
    with pytest.raises(ModelBehaviorError, match=phrase):
        parse_response(data)


def test_a_failed_response_is_a_provider_error() -> None:
    with pytest.raises(ModelProviderError, match="failed: overloaded"):
        parse_response({"status": "failed", "error": {"message": "overloaded"}, "output": []})
