"""JSON from untrusted hands, parsed with limits: model-sent tool arguments, saved
run states, scripted transcripts; and JSON text that is always UTF-8 (:func:`dumps`).

``json.loads`` alone lets such text crash the process that reads it: nesting a few
thousand levels deep is a ``RecursionError`` (or a value that crashes whatever walks
it next), and an integer of more than 4,300 digits is a bare ``ValueError``.
:func:`loads` turns both into :class:`JSONLimitError`, a ``json.JSONDecodeError``
with a position, so every caller's existing "not valid JSON" path reports them.

Text decoded with ``surrogateescape`` (``--input $'caf\\xe9'``, a file name read from
disk) holds lone surrogates: ``json.dumps(..., ensure_ascii=False)`` passes them
through and the text then cannot be written as UTF-8 (a state, a session row, a
span). :func:`dumps` writes each surrogate as its JSON escape (``\\udce9``), which
``json.loads`` reads back as the same code point: the text round-trips exactly, and
everything else is written byte for byte as before. The one thing JSON cannot keep is
a high surrogate followed by a low one (two code points, not the character they
encode in UTF-16): an escaped pair reads back as that one character, so it is refused
(:class:`JSONTextError`) rather than changed.

A shared leaf module: imports nothing of stepswitch.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "JSONLimitError",
    "JSONTextError",
    "dumps",
    "escape_surrogates",
    "loads",
]

MAX_DEPTH = 200
"""Deepest nesting of arrays and objects accepted (pydantic-core's own limit)."""

MAX_INT_DIGITS = 4300
"""Most digits in an integer (Python's default ``int_max_str_digits``)."""

_TOKENS = r'"(?:[^"\\]|\\.)*"|[\[\]{}]'
_BIG_INT = rf"-?\d{{{MAX_INT_DIGITS + 1},}}"
"""Patterns of the slow paths (a deep document, an error), compiled when first used
(``re`` keeps them), not by a runner's import (bench/README.md)."""


class JSONLimitError(json.JSONDecodeError):
    """Valid-looking JSON past a limit: nested too deeply or an integer too long."""


class JSONTextError(ValueError):
    """Text JSON cannot hold exactly: a surrogate pair held as two code points."""


_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_surrogates(text: str) -> str:
    """``text`` with each surrogate written as ``\\uXXXX``, for free text that must be
    UTF-8 and need not read back (a span's status description)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape, text)


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)`` with each lone surrogate
    written as its ``\\uXXXX`` escape, so the text always encodes as UTF-8 and reads
    back exactly; :class:`JSONTextError` for a surrogate pair (see the module)."""
    text = json.dumps(value, ensure_ascii=False, **options)
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    # json.dumps leaves a surrogate only inside a string literal, where its escape means
    # the same code point (a backslash before it is always written as an escaped pair)
    pair = _PAIR.search(text)
    if pair is not None:
        high, low = (ord(c) for c in pair.group())
        joined = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        raise JSONTextError(
            f"text holds the surrogate pair U+{high:04X} U+{low:04X} as two code points; "
            f"JSON would read it back as one character (U+{joined:X}): join it first "
            "(text.encode('utf-16', 'surrogatepass').decode('utf-16'))"
        )
    return _SURROGATE.sub(_escape, text)


def loads(text: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` within the limits; past one, :class:`JSONLimitError`.

    Bytes are decoded as UTF-8 first (``UnicodeDecodeError`` when they are not)."""
    doc = text.decode("utf-8") if isinstance(text, bytes | bytearray) else text
    _check_depth(doc, max_depth)
    try:
        return json.loads(doc)
    except json.JSONDecodeError:
        raise
    except RecursionError:  # a recursion limit set below max_depth: same verdict
        raise JSONLimitError(
            f"nested too deeply for this interpreter (limit {sys.getrecursionlimit()})", doc, 0
        ) from None
    except ValueError:
        # the only other ValueError json raises: int() past int_max_str_digits
        found = re.search(_BIG_INT, doc)
        raise JSONLimitError(
            f"an integer has more than {MAX_INT_DIGITS} digits", doc, found.start() if found else 0
        ) from None


def _check_depth(doc: str, max_depth: int) -> None:
    # cheap first: a document with few brackets cannot be deep
    if doc.count("[") + doc.count("{") <= max_depth:
        return
    depth = 0
    for match in re.finditer(_TOKENS, doc, re.DOTALL):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > max_depth:
                raise JSONLimitError(
                    f"nested deeper than {max_depth} levels", doc, match.start()
                )
        elif token in "]}":
            depth -= 1
