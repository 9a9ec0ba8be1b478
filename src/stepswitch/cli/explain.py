"""``stepswitch explain [CODE]``: a diagnostic code's documentation, or the list of codes.

CODE is a code (``SW201``, any case), a code's name (``unbudgeted-handoff-cycle``), or a
prefix that lists its codes (``SW2``, ``SW2xx``, ``TR``), as ``check --select`` takes it.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from stepswitch.analysis.codes import CODES, GROUPS, code_doc
from stepswitch.review.trail_codes import TRAIL_CODES, TRAIL_GROUPS, trail_code_doc


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("explain", help="print a diagnostic code's documentation")
    p.add_argument(
        "code", nargs="?", metavar="CODE",
        help="a code (e.g. SW201), its name, or a prefix (e.g. SW2) to list; omit to list all",
    )
    p.set_defaults(func=run)


@dataclass(frozen=True, slots=True)
class _Entry:
    code: str
    severity: str
    name: str
    summary: str
    group: str
    """The heading of the code's group in the list."""
    doc: Callable[[str], str]


def _entries() -> list[_Entry]:
    """Every code ``explain`` knows, check's first, then trail's and replay's, each
    table in code order."""
    from stepswitch.review.replay import REPLAY_CODES, replay_code_doc

    found = [
        _Entry(c.code, c.severity, c.name, c.summary, f"{c.code[:3]}xx {GROUPS[c.code[:3]]}",
               code_doc)
        for c in sorted(CODES.values(), key=lambda c: c.code)
    ]
    found += [  # stepswitch trail's codes: every one an error
        _Entry(t.code, "error", t.name, t.summary,
               f"{t.code[:3]}xx stepswitch trail: {TRAIL_GROUPS[t.code[:3]]}", trail_code_doc)
        for t in sorted(TRAIL_CODES.values(), key=lambda t: t.code)
    ]
    found += [
        _Entry(r.code, "error", r.name, r.summary, "RP1xx stepswitch replay: divergences",
               replay_code_doc)
        for r in sorted(REPLAY_CODES.values(), key=lambda r: r.code)
    ]
    return found


def _print_list(entries: list[_Entry]) -> None:
    group = ""
    for entry in entries:
        if entry.group != group:
            group = entry.group
            print(group)
        print(f"  {entry.code}  {entry.severity:<7}  {entry.name}: {entry.summary}")


def run(args: argparse.Namespace) -> int:
    entries = _entries()
    wanted = (args.code or "").strip()
    if not wanted:
        _print_list(entries)
        return 0
    upper = wanted.upper()
    for entry in entries:
        if upper == entry.code or wanted.lower() == entry.name:
            sys.stdout.write(entry.doc(entry.code))
            return 0
    prefix = upper[:2] + upper[2:].rstrip("X")  # "SW2xx" lists what "SW2" does
    listed = [e for e in entries if e.code.startswith(prefix)]
    if 2 <= len(prefix) < 5 and listed:  # a code's prefix, not a whole code
        _print_list(listed)
        return 0
    # a code with a letter for a digit (SW2O1), or a name with a typo; a wrong number
    # (SW999) is not near any one code, and gets no guess
    digits = upper[:2] + upper[2:].translate(str.maketrans("OIL", "011"))
    by_name = difflib.get_close_matches(wanted.lower(), [e.name for e in entries], n=1,
                                        cutoff=0.8)
    match = next((e for e in entries if e.code == digits or [e.name] == by_name), None)
    hint = f"; did you mean {match.code} ({match.name})?" if match is not None else ""
    print(f"stepswitch: error: unknown code {wanted!r}{hint} (run `stepswitch explain` to "
          "list the codes)", file=sys.stderr)
    return 2
