"""Python literals for IR values, laid out to fit a line width (an internal helper).

:func:`literal_lines` turns a value built from ``str``/``int``/``float``/``bool``/
``None``, lists, tuples, dicts and IR dataclasses into source lines that fit
``width`` columns, the way a formatter would lay them out: flat when it fits,
otherwise one element per line with a trailing comma. Every string goes through
``repr()`` (long ones are split into implicitly concatenated pieces, each its own
``repr``), so no user text is ever pasted into code. Dataclass fields equal to their
default are left out, which keeps the tables short and still rebuilds an equal value.

Not API: ``stepswitch.compiler.codegen`` is the only user.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Iterator
from typing import Any

__all__ = ["class_names", "literal_lines", "str_width"]

_INDENT = "    "
_ALWAYS_SHOWN = frozenset({"version"})
"""Fields written even at their default: a module states the IR version it was made for."""
_PIECE = 60
"""Target width of one piece of a long string (in columns)."""


def str_width(text: str) -> int:
    """The columns ``text`` takes in an editor (East Asian wide characters take two)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def literal_lines(
    value: Any, *, indent: int = 0, prefix: str = "", suffix: str = "", width: int = 100
) -> list[str]:
    """Source lines for ``prefix + literal(value) + suffix`` at ``indent`` levels."""
    pad = _INDENT * indent
    flat = _flat(value)
    if flat is not None:
        line = f"{pad}{prefix}{flat}{suffix}"
        if str_width(line) <= width:
            return [line]
    if isinstance(value, str):
        pieces = [repr(p) for p in _split(value)]
        if len(pieces) == 1:
            return [f"{pad}{prefix}{pieces[0]}{suffix}"]  # one unbreakable piece
        inner = _INDENT * (indent + 1)
        return [f"{pad}{prefix}(", *(inner + p for p in pieces), f"{pad}){suffix}"]
    opening, closing, entries = _parts(value)
    lines = [f"{pad}{prefix}{opening}"]
    for key, item in entries:
        lines.extend(literal_lines(item, indent=indent + 1, prefix=key, suffix=",", width=width))
    lines.append(f"{pad}{closing}{suffix}")
    return lines


def class_names(value: Any) -> set[str]:
    """The names of every dataclass used in ``value`` (what the module must import)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            found.add(type(v).__name__)
            stack.extend(getattr(v, f.name) for f in _shown_fields(v))
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return found


def _flat(value: Any) -> str | None:
    """The one-line literal, or None when it holds a newline (it never does: repr)."""
    if value is None or isinstance(value, bool | int | str):
        return repr(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value!r} has no Python literal")
        return repr(value)
    opening, closing, entries = _parts(value)
    body = ", ".join(key + str(_flat(item)) for key, item in entries)
    if isinstance(value, tuple) and len(value) == 1:
        body += ","
    return f"{opening}{body}{closing}"


def _parts(value: Any) -> tuple[str, str, list[tuple[str, Any]]]:
    """Opening bracket, closing bracket and (key prefix, value) entries of a container."""
    if isinstance(value, dict):
        entries: list[tuple[str, Any]] = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"dict key {k!r}: only str keys are written as literals")
            entries.append((repr(k) + ": ", v))
        return "{", "}", entries
    if isinstance(value, list):
        return "[", "]", [("", v) for v in value]
    if isinstance(value, tuple):
        return "(", ")", [("", v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [(f"{f.name}=", getattr(value, f.name)) for f in _shown_fields(value)]
        return f"{type(value).__name__}(", ")", fields
    raise TypeError(f"{type(value).__name__} value {value!r} has no Python literal")


def _shown_fields(value: Any) -> Iterator[dataclasses.Field[Any]]:
    """The fields that differ from their defaults (the rest rebuild by themselves)."""
    for f in dataclasses.fields(value):
        v = getattr(value, f.name)
        if f.name in _ALWAYS_SHOWN:
            yield f
            continue
        if f.default is not dataclasses.MISSING and _same(v, f.default):
            continue
        if f.default_factory is not dataclasses.MISSING and _same(v, f.default_factory()):
            continue
        yield f


def _same(a: Any, b: Any) -> bool:
    # 1 == True == 1.0 in Python; a default is only skipped when the type matches too.
    return type(a) is type(b) and bool(a == b)


def _split(text: str) -> list[str]:
    """``text`` in pieces of about ``_PIECE`` columns, broken after spaces or newlines."""
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end, cols, cut = start, 0, -1
        while end < len(text) and cols < _PIECE:
            ch = text[end]
            cols += str_width(repr(ch)) - 2
            end += 1
            if ch in " \n":
                cut = end
        if end < len(text) and cut > start + _PIECE // 3:
            end = cut
        pieces.append(text[start:end])
        start = end
    return pieces or [""]
