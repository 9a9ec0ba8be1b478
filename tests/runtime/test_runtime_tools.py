"""Argument parsing and tool output text."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.runtime.tools import (
    ArgumentError,
    output_text,
    parse_arguments,
    parse_typed,
    parse_typed_output,
)


@ss.function_tool
def add(a: int, b: int = 2) -> int:
    """Add."""
    return a + b


def test_parse_arguments_is_lax_and_ignores_extras() -> None:
    params = parse_arguments(add, '{"a": "3", "zzz": 1}')
    assert add.arguments_of(params) == {"a": 3, "b": 2}


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("{", "Invalid JSON input for tool add: Expecting property name"),
        ('"a"', "expected a JSON object, got a string"),
        ("{}", "a: Field required"),
        ('{"a": []}', "a: Input should be a valid integer (got [])"),
    ],
)
def test_bad_arguments_name_the_problem(raw: str, fragment: str) -> None:
    with pytest.raises(ArgumentError) as info:
        parse_arguments(add, raw)
    assert fragment in str(info.value)


class Reason(BaseModel):
    reason: str


def test_parse_typed() -> None:
    assert parse_typed("handoff h", Reason, '{"reason": "x"}') == Reason(reason="x")
    with pytest.raises(ArgumentError, match="Invalid arguments for handoff h: reason"):
        parse_typed("handoff h", Reason, "{}")


@dataclass
class P:
    x: int


def test_output_text() -> None:
    assert output_text("s") == "s"
    assert output_text(Reason(reason="r")) == '{"reason":"r"}'
    assert output_text(P(1)) == '{"x": 1}'
    assert output_text({"a": [1]}) == '{"a": [1]}'
    assert output_text(None) == "null"
    assert output_text(3.5) == "3.5"
    assert output_text({"s": {1, 2}}).startswith("{'s'")


def test_parse_typed_output_strict() -> None:
    assert parse_typed_output(Reason, False, '{"reason": "r"}') == Reason(reason="r")
    assert parse_typed_output(int, True, '{"response": 3}') == 3
    with pytest.raises(ValueError):
        parse_typed_output(int, True, '{"response": "3"}')
    with pytest.raises(ValueError):
        parse_typed_output(int, True, "[3]")
