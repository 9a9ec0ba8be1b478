"""Schema derivation for @function_tool: every supported parameter type and docstring style."""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any, Literal

import pytest
from pydantic import BaseModel

import stepswitch as ss


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    zip_code: str


@dataclasses.dataclass
class Point:
    x: int
    y: int


def props(tool: ss.FunctionTool) -> dict[str, Any]:
    return tool.params_json_schema["properties"]  # type: ignore[no-any-return]


def resolve(tool: ss.FunctionTool, schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    return tool.params_json_schema["$defs"][ref.rsplit("/", 1)[-1]]  # type: ignore[no-any-return]


def test_scalar_types_map_to_json_types() -> None:
    @ss.function_tool
    def f(a: int, b: float, c: bool, d: str) -> str:
        return ""

    p = props(f)
    assert [p[k]["type"] for k in "abcd"] == ["integer", "number", "boolean", "string"]
    assert f.params_json_schema["required"] == ["a", "b", "c", "d"]
    assert f.params_json_schema["additionalProperties"] is False
    assert f.schema_problems == ()


def test_enum_and_literal_become_enums() -> None:
    @ss.function_tool
    def f(color: Color, mode: Literal["fast", "slow"]) -> str:
        return ""

    assert resolve(f, props(f)["color"])["enum"] == ["red", "blue"]
    assert props(f)["mode"]["enum"] == ["fast", "slow"]


def test_optional_is_nullable_and_still_required_in_strict_mode() -> None:
    @ss.function_tool
    def f(note: str | None = None) -> str:
        return ""

    types = {branch.get("type") for branch in props(f)["note"]["anyOf"]}
    assert types == {"string", "null"}
    assert f.params_json_schema["required"] == ["note"]
    assert "default" not in props(f)["note"]


def test_lists_nested_models_and_dataclasses() -> None:
    @ss.function_tool
    def f(tags: list[str], address: Address, where: Point) -> str:
        return ""

    assert props(f)["tags"] == {"items": {"type": "string"}, "title": "Tags", "type": "array"}
    addr = resolve(f, props(f)["address"])
    assert addr["required"] == ["street", "zip_code"]
    assert addr["additionalProperties"] is False
    point = resolve(f, props(f)["where"])
    assert set(point["properties"]) == {"x", "y"}
    assert f.schema_problems == ()


def test_open_dict_parameter_is_recorded_as_a_strict_mode_problem() -> None:
    @ss.function_tool
    def f(counts: dict[str, int]) -> str:
        return ""

    assert [p.rule for p in f.schema_problems] == ["open-object"]
    assert f.schema_problems[0].path == "#/properties/counts"


def test_non_strict_tool_keeps_the_raw_schema_and_no_problems() -> None:
    @ss.function_tool(strict=False)
    def f(counts: dict[str, int]) -> str:
        return ""

    assert f.schema_problems == ()
    assert "additionalProperties" in props(f)["counts"]


def test_google_docstring() -> None:
    @ss.function_tool
    def f(order_id: int, note: str) -> str:
        """Look up an order.

        Args:
            order_id: The order's number.
            note: Free text.
        """
        return ""

    assert f.description == "Look up an order."
    assert props(f)["order_id"]["description"] == "The order's number."
    assert props(f)["note"]["description"] == "Free text."


def test_numpy_docstring() -> None:
    @ss.function_tool
    def f(order_id: int) -> str:
        """Look up an order.

        Parameters
        ----------
        order_id : int
            The order's number.
        """
        return ""

    assert f.description == "Look up an order."
    assert props(f)["order_id"]["description"] == "The order's number."


def test_sphinx_docstring() -> None:
    @ss.function_tool
    def f(order_id: int) -> str:
        """Look up an order.

        :param order_id: The order's number.
        :returns: a summary
        """
        return ""

    assert f.description == "Look up an order."
    assert props(f)["order_id"]["description"] == "The order's number."


class Ctx:
    user: str = "ann"


def test_context_parameter_is_not_in_the_schema() -> None:
    @ss.function_tool
    def f(ctx: ss.RunContext[Ctx], order_id: int) -> str:
        return ctx.context.user

    assert list(props(f)) == ["order_id"]
    assert f.takes_context
    assert f.context_type is Ctx


def test_annotations_naming_function_locals_still_work() -> None:
    class Local:
        pass

    @ss.function_tool
    def f(ctx: ss.RunContext[Local], order_id: int) -> str:
        return ""

    assert list(props(f)) == ["order_id"]
    assert f.takes_context
    assert props(f)["order_id"]["type"] == "integer"


def test_async_tool_and_overrides() -> None:
    @ss.function_tool(name="find", description="Find it.", needs_approval=True)
    async def f(q: str) -> str:
        return q

    assert (f.name, f.description, f.is_async, f.needs_approval) == ("find", "Find it.", True, True)


def test_tool_stays_callable() -> None:
    @ss.function_tool
    def add(a: int, b: int) -> int:
        return a + b

    assert add(2, 3) == 5
    params = add.params_model.model_validate({"a": "2", "b": 3})
    assert add.arguments_of(params) == {"a": 2, "b": 3}


def test_not_callable_is_a_user_error_naming_the_line() -> None:
    with pytest.raises(ss.UserError, match=r"test_tools\.py:\d+: expected a function, got int 42"):
        ss.function_tool(42)  # type: ignore[call-overload]


def test_bad_needs_approval_names_the_field() -> None:
    with pytest.raises(ss.UserError, match="needs_approval: expected a bool or a function"):

        @ss.function_tool(needs_approval="yes")  # type: ignore[call-overload, untyped-decorator]
        def f(a: int) -> str:
            return ""


def test_context_parameter_must_come_first() -> None:
    with pytest.raises(ss.UserError, match="RunContext parameter must come first"):

        @ss.function_tool
        def f(a: int, ctx: ss.RunContext[None]) -> str:
            return ""


class Opaque:
    """A plain class: pydantic has no schema for it."""


def test_a_parameter_type_without_a_schema_is_named_in_one_line() -> None:
    def lookup(order_id: int, handle: Opaque) -> str:
        """Look."""
        return ""

    with pytest.raises(ss.UserError) as info:
        ss.function_tool(lookup)
    message = str(info.value)
    assert "\n" not in message
    assert re.search(r"function_tool 'lookup' at .*test_tools\.py:\d+: parameter 'handle'", message)
    assert "(Opaque) has no JSON schema" in message
