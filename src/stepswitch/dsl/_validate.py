"""Declaration-time checks: pydantic validates fields, this turns its errors into one
``UserError`` that names the declaration, its file:line, and every bad field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from stepswitch.dsl._site import Site
from stepswitch.errors import UserError


def validate_fields(
    schema: type[BaseModel],
    values: Mapping[str, Any],
    *,
    what: str,
    site: Site,
    expect: Mapping[str, str],
) -> BaseModel:
    """Validate ``values`` with ``schema``; raise ``UserError`` listing each bad field.

    ``expect`` maps a field name to a phrase saying what it takes, so a user reads
    "tools[0]: expected a @function_tool or agent.as_tool(...), got int 42" rather
    than pydantic's union-by-union account.
    """
    try:
        return schema.model_validate(dict(values))
    except ValidationError as exc:
        problems: list[str] = []
        seen: set[str] = set()
        for err in exc.errors():
            loc = err["loc"]
            field = str(loc[0]) if loc else "?"
            where = field + "".join(f"[{p}]" for p in loc[1:] if isinstance(p, int))
            if where in seen:
                continue
            seen.add(where)
            value = _value_at(values, loc)
            wanted = expect.get(field)
            if wanted is not None:
                problems.append(f"{where}: expected {wanted}, got {_describe(value)}")
            else:
                problems.append(f"{where}: {err['msg']}, got {_describe(value)}")
        raise UserError(f"{what} at {site}: " + "; ".join(problems)) from None


def _value_at(values: Mapping[str, Any], loc: tuple[int | str, ...]) -> Any:
    current: Any = values
    for part in loc:
        try:
            current = current[part]
        except (KeyError, IndexError, TypeError):
            # pydantic appends union member names to loc; stop at the last real value
            break
    return current


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def require_name(value: Any, *, what: str, field: str, site: Site) -> str:
    """A non-empty string name, or a ``UserError`` naming the field."""
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{what} at {site}: {field}: expected a non-empty string, "
                        f"got {_describe(value)}")
    return value
