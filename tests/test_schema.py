"""stepswitch.schema: strict-mode rewriting, in particular ``$ref`` inlining.

pydantic writes a model-typed field that has a description as ``{"$ref": …,
"description": …}``; strict mode forbids keys beside ``$ref``, so the referenced schema
is inlined there. A reference that cannot be inlined is a located problem, not a crash.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

import stepswitch as ss
from stepswitch.schema import strictify


class Address(BaseModel):
    street: str
    city: str


@ss.function_tool
def ship(order_id: int, to: Address) -> str:
    """Ship an order.

    Args:
        order_id: The order.
        to: Where to ship it.
    """
    return f"shipped {order_id} to {to.city}"


def test_a_described_model_field_is_inlined_where_its_ref_was() -> None:
    to = ship.params_json_schema["properties"]["to"]
    assert "$ref" not in to
    assert to["description"] == "Where to ship it."
    assert to["properties"] == {
        "street": {"title": "Street", "type": "string"},
        "city": {"title": "City", "type": "string"},
    }
    assert to["required"] == ["street", "city"]
    assert to["additionalProperties"] is False


def test_the_inlined_schema_is_a_copy_not_shared_with_defs() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}}},
        "properties": {
            "a": {"$ref": "#/$defs/A", "description": "first"},
            "b": {"$ref": "#/$defs/A", "description": "second"},
        },
    }
    out = strictify(schema)
    assert out.ok, out.problems
    a, b = out.schema["properties"]["a"], out.schema["properties"]["b"]
    assert (a["description"], b["description"]) == ("first", "second")
    a["properties"]["x"]["type"] = "changed"
    assert b["properties"]["x"]["type"] == "string"
    assert schema["properties"]["a"] == {"$ref": "#/$defs/A", "description": "first"}


def test_a_ref_that_cannot_be_inlined_is_a_located_problem() -> None:
    schema = {
        "type": "object",
        "$defs": {"S": "not a schema"},
        "properties": {
            "far": {"$ref": "https://example.com/s.json", "description": "remote"},
            "gone": {"$ref": "#/$defs/Missing", "description": "dangling"},
            "odd": {"$ref": "#/$defs/S", "description": "a string"},
        },
    }
    problems = {(p.path, p.message) for p in strictify(schema).problems}
    assert problems == {
        ("#/properties/far", "cannot resolve $ref 'https://example.com/s.json'"),
        ("#/properties/gone", "dangling $ref '#/$defs/Missing'"),
        ("#/properties/odd", "$ref '#/$defs/S' is not a schema"),
    }
    assert all(p.rule == "ref-siblings" for p in strictify(schema).problems)
