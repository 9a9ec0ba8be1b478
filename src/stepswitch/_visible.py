"""Text from untrusted hands made safe to show on a terminal or in a diagram: control
characters, bidirectional overrides, invisible format characters and lone surrogates
are written as escapes (``\\r``, ``\\x1b``, ``\\u202e``, ``\\ud800``), so what a person
reads is what the program holds.

A model's tool arguments shown in an approval prompt are the reason: a carriage
return or a right-to-left override can make ``amount: 5000`` read as ``amount: 5``.
A shared leaf module: imports nothing of stepswitch.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

_NAMED = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}

# C0 and C1 controls, DEL; bidi marks, embeddings, overrides and isolates; zero-width
# and other invisible format characters; the line and paragraph separators; surrogates
_HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str, *, keep: str = "") -> str:
    """``text`` with every hidden or misleading character escaped (a backslash that is
    already there stays as it is, so JSON reads unchanged), except those in ``keep``
    (``"\n\t"`` for running text)."""
    if _HIDDEN.search(text) is None:
        return text
    if not keep:
        return _HIDDEN.sub(_escape, text)
    return _HIDDEN.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)
