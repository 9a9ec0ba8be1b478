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
from functools import cache
from typing import Any

__all__ = ["class_names", "literal_lines", "str_width"]

_INDENT = "    "
_ALWAYS_SHOWN = frozenset({"version"})
"""Fields written even at their default: a module states the IR version it was made for."""
_PIECE = 60
"""Target width of one piece of a long string (in columns)."""


def str_literal(text: str) -> str:
    """``text`` as a string literal the way ``ruff format`` writes one: in double quotes
    unless single quotes need fewer escapes. Every character is escaped as ``repr``
    escapes it alone (so the literal means exactly ``text``), and the chosen quote with a
    backslash."""
    shown = repr(text)
    if "'" not in text and '"' not in text:  # the common case: only the quotes change
        return '"' + shown[1:-1] + '"'
    quote = '"' if text.count('"') <= text.count("'") else "'"
    body = "".join(
        "\\" + ch if ch == quote else repr(ch)[1:-1] for ch in text
    )
    return quote + body + quote


def str_width(text: str) -> int:
    """The columns ``text`` takes in an editor (East Asian wide characters take two)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def literal_lines(
    value: Any,
    *,
    indent: int = 0,
    prefix: str = "",
    suffix: str = "",
    width: int = 100,
    classes: set[str] | None = None,
) -> list[str]:
    """Source lines for ``prefix + literal(value) + suffix`` at ``indent`` levels.

    The names of the dataclasses written are added to ``classes`` when it is given.
    """
    out: list[str] = []
    _Writer(width, classes if classes is not None else set()).lines(
        value, indent, prefix, suffix, out
    )
    return out


def class_names(value: Any) -> set[str]:
    """The names of every dataclass used in ``value`` (what the module must import)."""
    found: set[str] = set()
    literal_lines(value, classes=found)
    return found


class _Writer:
    """One layout run. Flat attempts stop as soon as they pass the line's budget, so a
    big table costs about its size, not its size times its depth."""

    def __init__(self, width: int, classes: set[str]) -> None:
        self.width = width
        self.classes = classes

    def lines(self, value: Any, indent: int, prefix: str, suffix: str, out: list[str]) -> None:
        pad = _INDENT * indent
        flat = self.flat(value, self.width - len(pad) - len(prefix) - len(suffix))
        if flat is not None:
            line = f"{pad}{prefix}{flat}{suffix}"
            if str_width(line) <= self.width:
                out.append(line)
                return
        if value is None or isinstance(value, bool | int | float):
            out.append(f"{pad}{prefix}{value!r}{suffix}")  # cannot break: written as is
            return
        if isinstance(value, str):
            self.string(value, indent, prefix, suffix, out)
            return
        opening, closing, entries = self.parts(value)
        out.append(f"{pad}{prefix}{opening}")
        inner = _INDENT * (indent + 1)
        for key, item, raw_key in entries:
            if raw_key is not None and str_width(inner + key) > self.width - 12:
                # a dict key too long for its line is split like any string:
                # (\n 'piece'\n 'piece'\n): value,
                key_lines: list[str] = []
                self.string(raw_key, indent + 1, "", "", key_lines)
                if len(key_lines) > 1:
                    out.extend(key_lines[:-1])
                    self.lines(item, indent + 1, "): ", ",", out)
                    continue
            self.lines(item, indent + 1, key, ",", out)
        out.append(f"{pad}{closing}{suffix}")

    def string(self, text: str, indent: int, prefix: str, suffix: str, out: list[str]) -> None:
        """A string split into implicitly concatenated pieces, each its own ``repr``."""
        pad = _INDENT * indent
        inner = _INDENT * (indent + 1)
        # room for the quotes and what may follow a dict key ("): False,")
        cols = max(16, min(_PIECE, self.width - len(inner) - 14))
        pieces = [str_literal(p) for p in _split(text, cols)]
        one = f"{pad}{prefix}{pieces[0]}{suffix}"
        if len(pieces) == 1 and (str_width(one) <= self.width or not prefix):
            out.append(one)
            return
        out.append(f"{pad}{prefix}(")
        out.extend(inner + p for p in pieces)
        out.append(f"{pad}){suffix}")

    def flat(self, value: Any, budget: int) -> str | None:
        """The one-line literal, or None once it would pass ``budget`` characters."""
        if value is None or isinstance(value, bool | int | str):
            text = str_literal(value) if isinstance(value, str) else repr(value)
            return text if len(text) <= budget else None
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(f"{value!r} has no Python literal")
            text = repr(value)
            return text if len(text) <= budget else None
        opening, closing, entries = self.parts(value)
        used = len(opening) + len(closing)
        out = [opening]
        for i, (key, item, _) in enumerate(entries):
            lead = f", {key}" if i else key
            used += len(lead)
            part = self.flat(item, budget - used)
            if part is None:
                return None
            used += len(part)
            out.append(lead + part)
        if isinstance(value, tuple) and len(value) == 1:
            out.append(",")
            used += 1
        if used > budget:
            return None
        out.append(closing)
        return "".join(out)

    def parts(self, value: Any) -> tuple[str, str, list[tuple[str, Any, str | None]]]:
        """Opening bracket, closing bracket and (key prefix, value, dict key) entries."""
        if isinstance(value, dict):
            entries: list[tuple[str, Any, str | None]] = []
            for k, v in value.items():
                if not isinstance(k, str):
                    raise TypeError(f"dict key {k!r}: only str keys are written as literals")
                entries.append((str_literal(k) + ": ", v, k))
            return "{", "}", entries
        if isinstance(value, list):
            return "[", "]", [("", v, None) for v in value]
        if isinstance(value, tuple):
            return "(", ")", [("", v, None) for v in value]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            name = type(value).__name__
            self.classes.add(name)
            shown: list[tuple[str, Any, str | None]] = []
            for field, has_default, default in _defaults(type(value)):
                v = getattr(value, field)
                if has_default and field not in _ALWAYS_SHOWN and _same(v, default):
                    continue  # rebuilt by the default
                shown.append((f"{field}=", v, None))
            return f"{name}(", ")", shown
        raise TypeError(f"{type(value).__name__} value {value!r} has no Python literal")


@cache
def _defaults(cls: type) -> tuple[tuple[str, bool, Any], ...]:
    """Per field of a dataclass: its name, whether it has a default, and that default."""
    out: list[tuple[str, bool, Any]] = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out.append((f.name, True, f.default))
        elif f.default_factory is not dataclasses.MISSING:
            out.append((f.name, True, f.default_factory()))
        else:
            out.append((f.name, False, None))
    return tuple(out)


def _same(a: Any, b: Any) -> bool:
    # 1 == True == 1.0 in Python; a default is only skipped when the type matches too.
    return type(a) is type(b) and bool(a == b)


def _split(text: str, limit: int = _PIECE) -> list[str]:
    """``text`` in pieces of about ``limit`` columns, broken after spaces or newlines."""
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end, cols, cut = start, 0, -1
        while end < len(text):
            ch = text[end]
            w = str_width(repr(ch)) - 2  # as written inside the literal: \n, \x00, 漢
            if cols + w > limit and end > start:
                break
            cols += w
            end += 1
            if ch in " \n":
                cut = end
        if end < len(text) and cut > start + limit // 3:
            end = cut
        pieces.append(text[start:end])
        start = end
    return pieces or [""]
