"""JSON schemas for tools and outputs, and the rules of OpenAI's strict mode.

``strictify`` turns a pydantic JSON schema into the form OpenAI strict structured
output accepts, and lists every rule the schema breaks instead of raising at the
first: the analyzer turns those problems into located diagnostics, long before a
run would fail on them.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

from stepswitch._dataclass import dataclass

__all__ = [
    "SchemaProblem",
    "StrictSchema",
    "json_schema_of",
    "output_schema_of",
    "strictify",
    "unschematizable",
]

_MAX_DEPTH = 100
_MAX_NODES = 100_000


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """One strict-mode rule a schema breaks."""

    rule: str
    """Stable rule name: ``open-object``, ``root-anyof``, ``root-not-object``, ``untyped``,
    ``ref-siblings``, ``too-deep``, ``too-large``, ``not-serializable``."""
    path: str
    """Where in the schema, as a JSON-pointer-like path (``#/properties/tags``)."""
    message: str


@dataclass(frozen=True, slots=True)
class StrictSchema:
    """A schema rewritten for strict mode, and the rules it still breaks."""

    schema: dict[str, Any]
    problems: tuple[SchemaProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def json_schema_of(tp: Any) -> dict[str, Any]:
    """The JSON schema pydantic derives for a type."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp.model_json_schema()
    from pydantic import TypeAdapter  # its module loads for the compiler, not for a runner

    return TypeAdapter(tp).json_schema()


def is_object_type(tp: Any) -> bool:
    """True for types whose schema is an object at the root (pydantic models, TypedDicts)."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return True
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__annotations__")


def unschematizable(tp: Any, exc: Exception) -> SchemaProblem:
    """The problem of a type with no JSON schema, in one line: the first sentence of
    pydantic's error (the rest is advice on pydantic's own API, which would mislead
    here and break a diagnostic's one-line message)."""
    text = str(exc).strip()
    reason = text.splitlines()[0].split(". ")[0].rstrip(".") if text else type(exc).__name__
    return SchemaProblem("not-serializable", "#", f"no JSON schema for {tp!r}: {reason}")


def output_schema_of(tp: Any) -> tuple[StrictSchema, bool]:
    """The strict schema sent for an ``output_type``, and whether it is wrapped.

    As in the Agents SDK, a type that is not an object at the root (``list[int]``,
    ``int``, a dataclass) is wrapped as ``{"response": T}`` and unwrapped on parse.
    """
    try:
        raw = json_schema_of(tp)
    except Exception as exc:  # pydantic raises several types for unschematizable types
        return StrictSchema({}, (unschematizable(tp, exc),)), False
    wrapped = not is_object_type(tp)
    if wrapped:
        defs = raw.pop("$defs", None)
        raw = {
            "type": "object",
            "properties": {"response": raw},
            "required": ["response"],
            "title": "response",
        }
        if defs:
            raw["$defs"] = defs
    return strictify(raw), wrapped


def strictify(schema: dict[str, Any]) -> StrictSchema:
    """Rewrite ``schema`` for OpenAI strict mode; report what cannot be made strict."""
    out = copy.deepcopy(schema)
    problems: list[SchemaProblem] = []
    if not out:
        out = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
        return StrictSchema(out, ())
    if "anyOf" in out or "oneOf" in out:
        problems.append(
            SchemaProblem("root-anyof", "#", "the root of a strict schema must be one object, "
                          "not a union (anyOf)")
        )
    elif out.get("type") != "object":
        problems.append(
            SchemaProblem("root-not-object", "#", f"the root of a strict schema must be an "
                          f"object, not {out.get('type', 'an untyped value')!r}")
        )
    counter = [0]
    _visit(out, out, "#", 0, problems, counter)
    return StrictSchema(out, tuple(problems))


def _visit(
    node: Any,
    root: dict[str, Any],
    path: str,
    depth: int,
    problems: list[SchemaProblem],
    counter: list[int],
) -> None:
    if not isinstance(node, dict):
        return
    counter[0] += 1
    if depth > _MAX_DEPTH:
        problems.append(SchemaProblem("too-deep", path, f"nested deeper than {_MAX_DEPTH}"))
        return
    if counter[0] > _MAX_NODES:
        problems.append(SchemaProblem("too-large", path, f"more than {_MAX_NODES} nodes"))
        return

    for defs_key in ("$defs", "definitions"):
        defs = node.get(defs_key)
        if isinstance(defs, dict):
            for name, sub in defs.items():
                _visit(sub, root, f"{path}/{defs_key}/{name}", depth + 1, problems, counter)

    if "oneOf" in node and "anyOf" not in node:
        node["anyOf"] = node.pop("oneOf")
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        node.pop("allOf")
        node.update(all_of[0])
    if "default" in node and node["default"] is None:
        node.pop("default")
    if "$ref" in node and len(node) > 1:
        _inline_ref(node, root, path, problems)

    kind = node.get("type")
    if kind == "object" or "properties" in node:
        extra = node.get("additionalProperties")
        if extra not in (None, False):
            problems.append(
                SchemaProblem(
                    "open-object",
                    path,
                    "an object with open keys (additionalProperties, e.g. dict[str, X] or "
                    "**kwargs) is not allowed in strict mode; use a model with named fields",
                )
            )
        node["additionalProperties"] = False
        props = node.get("properties")
        if isinstance(props, dict):
            node["required"] = list(props)
            for name, sub in props.items():
                _visit(sub, root, f"{path}/properties/{name}", depth + 1, problems, counter)
        else:
            node["properties"] = {}
            node["required"] = []
    items = node.get("items")
    if isinstance(items, dict):
        _visit(items, root, f"{path}/items", depth + 1, problems, counter)
    prefix = node.get("prefixItems")
    if isinstance(prefix, list):
        for i, sub in enumerate(prefix):
            _visit(sub, root, f"{path}/prefixItems/{i}", depth + 1, problems, counter)
    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        for i, sub in enumerate(any_of):
            _visit(sub, root, f"{path}/anyOf/{i}", depth + 1, problems, counter)
    if path != "#" and _untyped(node):
        problems.append(
            SchemaProblem(
                "untyped",
                path,
                "a value with no type (Any, object) is not allowed in strict mode; give it a type",
            )
        )


def _untyped(node: dict[str, Any]) -> bool:
    typed_keys = ("type", "$ref", "anyOf", "allOf", "enum", "const", "properties", "items")
    return not any(key in node for key in typed_keys)


def _inline_ref(
    node: dict[str, Any], root: dict[str, Any], path: str, problems: list[SchemaProblem]
) -> None:
    ref = node["$ref"]
    if not isinstance(ref, str) or not ref.startswith("#/"):
        problems.append(SchemaProblem("ref-siblings", path, f"cannot resolve $ref {ref!r}"))
        return
    target: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(target, dict) or part not in target:
            problems.append(SchemaProblem("ref-siblings", path, f"dangling $ref {ref!r}"))
            return
        target = target[part]
    if not isinstance(target, dict):
        problems.append(SchemaProblem("ref-siblings", path, f"$ref {ref!r} is not a schema"))
        return
    node.pop("$ref")
    for key, value in target.items():
        node.setdefault(key, copy.deepcopy(value))
