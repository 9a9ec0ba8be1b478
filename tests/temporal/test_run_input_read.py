"""The workflow reads a run's input without Temporal's converter when every field holds
exactly its type; it must read it as the converter does, and leave the rest to it."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.converter import value_to_type

from stepswitch.temporal import RunInput
from stepswitch.temporal._workflow import _PLAIN_FIELDS, _plain_input, read_input

ITEMS = [{"role": "user", "content": "hi"}, {"type": "function_call_output", "call_id": "c",
                                              "output": "x"}]

PLAIN: list[dict[str, Any]] = [
    {"input": "hi"},
    {"input": ITEMS},
    {"input": []},
    {"input": "hi", "session_id": "s", "context": {"user": [1, 2]}, "max_turns": 3,
     "state": "{}", "digest": "d" * 64, "usage": [1, 2, 3, 4], "runs": 2,
     "traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"},
    {"input": "hi", "session_id": None, "context": None, "max_turns": None, "state": None,
     "digest": None, "usage": None, "runs": 1, "traceparent": None},
    {"input": "hi", "from_a_newer_client": [1]},  # unknown keys are left out
    {"input": "hi", "usage": []},
]

# values the converter reads some other way (or refuses): the plain reading leaves them
OTHER: list[dict[str, Any]] = [
    {"input": "hi", "max_turns": 3.0},
    {"input": "hi", "max_turns": True},
    {"input": "hi", "runs": None},
    {"input": "hi", "runs": False},
    {"input": "hi", "max_turns": "x"},
    {"input": "hi", "session_id": 5},
    {"input": "hi", "digest": ["d"]},
    {"input": "hi", "usage": [1, 2.0]},
    {"input": "hi", "usage": "1234"},
    {"input": "hi", "traceparent": 1},
]


@pytest.mark.parametrize("raw", PLAIN)
def test_the_plain_reading_is_the_converters(raw: dict[str, Any]) -> None:
    plain = _plain_input(raw)
    assert plain is not None
    assert plain == value_to_type(RunInput, raw)
    assert read_input(raw) == plain
    if isinstance(raw["input"], list):  # copies, as the converter makes
        assert all(a is not b for a, b in zip(plain.input, raw["input"], strict=True))


@pytest.mark.parametrize("raw", OTHER)
def test_other_values_are_left_to_the_converter(raw: dict[str, Any]) -> None:
    assert _plain_input(raw) is None
    try:
        expected: Any = value_to_type(RunInput, raw)
    except (TypeError, ValueError):
        with pytest.raises(Exception, match="the run's input is not a RunInput"):
            read_input(raw)
    else:
        assert read_input(raw) == expected


def test_every_field_of_run_input_has_a_plain_reading() -> None:
    assert set(RunInput.__dataclass_fields__) == _PLAIN_FIELDS
