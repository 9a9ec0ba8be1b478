"""Declaration-time checks: pydantic validates fields, this turns its errors into one
``UserError`` that names the declaration, its file:line, and every bad field.

The callers first check their fields plainly (a few type tests that accept only what
the pydantic models accept too) and call :func:`validate_fields` only when that fails,
so the models (:mod:`stepswitch.dsl._arg_models`) are built only for a declaration
that may be wrong."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from stepswitch._site import Site
from stepswitch.errors import UserError


def validate_fields(
    schema: Literal["AgentArgs", "AgentToolArgs", "HandoffArgs", "WorkflowArgs"],
    values: Mapping[str, Any],
    *,
    what: str,
    site: Site,
    expect: Mapping[str, str],
) -> None:
    """Validate ``values`` with the model ``schema`` names (in
    :mod:`stepswitch.dsl._arg_models`); raise ``UserError`` listing each bad field.

    ``expect`` maps a field name to a phrase saying what it takes, so a user reads
    "tools[0]: expected a @function_tool or agent.as_tool(...), got int 42" rather
    than pydantic's union-by-union account.
    """
    from pydantic import ValidationError

    from stepswitch.dsl import _arg_models

    try:
        getattr(_arg_models, schema).model_validate(dict(values))
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


def plain_int(value: Any, *, optional: bool = True) -> bool:
    """``value`` is an int of at least 1 (or None when ``optional``): a field the models
    check with ``int | None = Field(ge=1)``."""
    return (optional and value is None) or (type(value) is int and value >= 1)


def plain_str(value: Any, *, optional: bool = True, nonempty: bool = False) -> bool:
    """``value`` is a str (non-empty when ``nonempty``), or None when ``optional``."""
    return (optional and value is None) or (type(value) is str and (not nonempty or value != ""))


def plain_fn(value: Any) -> bool:
    """``value`` is None or callable: an optional ``Callable`` field."""
    return value is None or callable(value)


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
