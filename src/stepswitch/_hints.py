"""Reading a callable's type hints the way every stage reads them. Not API.

A leaf: the DSL reads a tool's, a step's or a guardrail's parameters with it, the
analyzer a flow predicate's, and the SDK reader an SDK function's; none of them
imports another for it.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

__all__ = ["resolved_hints"]


def resolved_hints(fn: Any) -> dict[str, Any]:
    """Type hints of a callable, resolving string annotations when they resolve."""
    plain = inspect.isfunction(fn) or inspect.ismethod(fn) or isinstance(fn, type)
    target = fn if plain else type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        pass
    # A string annotation naming something get_type_hints cannot see (a class local to
    # the declaring function, under `from __future__ import annotations`): evaluate
    # each one alone, reading unknown names as Any, so the rest stays precise.
    raw = dict(getattr(target, "__annotations__", {}) or {})
    namespace = _LenientNamespace(getattr(target, "__globals__", {}))
    hints: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            try:
                value = eval(value, {}, namespace)  # the user's own annotation text
            except Exception:
                value = Any
        hints[key] = value
    return hints


class _LenientNamespace(dict[str, Any]):
    """Globals, then builtins, then ``Any`` for any other name."""

    def __init__(self, globals_: dict[str, Any]) -> None:
        super().__init__()
        self._globals = globals_

    def __missing__(self, key: str) -> Any:
        if key in self._globals:
            return self._globals[key]
        import builtins

        return getattr(builtins, key, Any)
