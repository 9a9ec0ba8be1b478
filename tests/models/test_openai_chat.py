"""Chat Completions specifics: folding streamed deltas into one message."""

from __future__ import annotations

from typing import Any

import pytest

from stepswitch.errors import ModelBehaviorError
from stepswitch.models.openai_chat import _Accumulator, parse_completion
from stepswitch.runtime.model import OutputFunctionCall, OutputMessage


def chunk(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": delta}], **extra}


def test_interleaved_tool_call_deltas_fold_by_index() -> None:
    acc = _Accumulator()
    for c in [
        chunk({"role": "assistant", "content": "Check"}),
        chunk({"content": "ing both."}),
        chunk(
            {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": ""}}]}
        ),
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x"'}}
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}),
        {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {
            "id": "chatcmpl-1",
            "choices": [],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        },
    ]:
        acc.add(c)
    response = acc.finish()
    assert response.output == (
        OutputMessage("Checking both."),
        OutputFunctionCall("f", '{"x": 1}', "a"),
        OutputFunctionCall("g", "{}", "b"),
    )
    assert response.usage.total_tokens == 7
    assert response.response_id == "chatcmpl-1"


def test_an_empty_stream_is_a_model_behavior_error() -> None:
    with pytest.raises(ModelBehaviorError, match="no chunks"):
        _Accumulator().finish()


@pytest.mark.parametrize(
    "data",
    [
        {"choices": []},
        {"choices": [{"nomessage": 1}]},
        {"choices": [{"message": {"tool_calls": [{"function": {"name": "f"}}]}}]},
    ],
)
def test_malformed_completions(data: dict[str, Any]) -> None:
    with pytest.raises(ModelBehaviorError, match="malformed response"):
        parse_completion(data)
