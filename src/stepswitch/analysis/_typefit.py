"""Does a value of type ``actual`` fit a parameter declared as ``declared``? Not API.

Deliberately forgiving: it answers False only when it can tell for sure (two plain
classes that are not subclasses, a union none of whose members fit, generics whose
origins differ). Anything it cannot judge fits, so the rules built on it do not cry
wolf.
"""

from __future__ import annotations

import types
import typing
from typing import Any

__all__ = ["fits", "show_type"]

_UNIONS = (typing.Union, types.UnionType)


def _is_top(tp: Any) -> bool:
    return tp is None or tp is Any or tp is object or isinstance(tp, typing.TypeVar)


def fits(actual: Any, declared: Any) -> bool:
    try:
        return _fits(actual, declared, 0)
    except Exception:  # exotic user types: no verdict is better than a false one
        return True


def _fits(actual: Any, declared: Any, depth: int) -> bool:
    if depth > 20 or _is_top(declared) or actual is Any:
        return True
    if typing.get_origin(declared) is typing.Annotated:
        return _fits(actual, typing.get_args(declared)[0], depth + 1)
    if typing.get_origin(actual) is typing.Annotated:
        return _fits(typing.get_args(actual)[0], declared, depth + 1)
    if typing.get_origin(actual) in _UNIONS:
        return all(_fits(m, declared, depth + 1) for m in typing.get_args(actual))
    if typing.get_origin(declared) in _UNIONS:
        return any(_fits(actual, m, depth + 1) for m in typing.get_args(declared))
    if actual == declared:
        return True
    d_origin = typing.get_origin(declared)
    a_origin = typing.get_origin(actual)
    if d_origin is typing.Literal or a_origin is typing.Literal:
        if d_origin is typing.Literal and a_origin is typing.Literal:
            return set(typing.get_args(actual)) <= set(typing.get_args(declared))
        if a_origin is typing.Literal:
            return all(isinstance(v, declared) for v in typing.get_args(actual)) if isinstance(
                declared, type) else True
        return not isinstance(actual, type)
    a_cls = a_origin if a_origin is not None else actual
    d_cls = d_origin if d_origin is not None else declared
    if not (isinstance(a_cls, type) and isinstance(d_cls, type)):
        return True
    if not issubclass(a_cls, d_cls):
        return False
    a_args, d_args = typing.get_args(actual), typing.get_args(declared)
    if a_origin is not None and d_origin is not None and len(a_args) == len(d_args):
        return all(
            _fits(a, d, depth + 1) for a, d in zip(a_args, d_args, strict=True)
            if a is not Ellipsis and d is not Ellipsis
        )
    return True


def show_type(tp: Any) -> str:
    if tp is None:
        return "None"
    if isinstance(tp, type) and typing.get_origin(tp) is None:
        return tp.__qualname__
    return repr(tp).replace("typing.", "")
