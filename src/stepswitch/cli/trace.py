"""``stepswitch trace FILE.jsonl``: a recorded trace as an indented tree.

``stepswitch run … --trace FILE.jsonl`` writes the spans; this prints them with
durations, token counts and the step each turn took. Reading needs no OpenTelemetry
package.
"""

from __future__ import annotations

import argparse
import sys

from stepswitch.errors import UserError
from stepswitch.otel import format_tree, read_spans


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("trace", help="print a trace written by `run --trace` as a tree")
    p.add_argument("file", metavar="FILE.jsonl", help="spans as JSON lines")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        spans = read_spans(  # a UserError names the file and line: exit 2
            args.file, cut_off=lambda note: print(f"stepswitch: warning: {note}",
                                                  file=sys.stderr),
        )
    except UserError:
        kind = _other_file(args.file)
        if kind is None:
            raise
        raise UserError(f"{args.file}: not a trace (one span per line): it is {kind}") from None
    if not spans:  # exit 2, worded as every other command's error
        raise UserError(f"{args.file} holds no spans")
    sys.stdout.write(format_tree(spans) + "\n")
    return 0


def _other_file(path: str) -> str | None:
    """What a file of stepswitch's own that holds no spans is, and which command reads
    it (a saved run or a recording given to ``trace``, say)."""
    from stepswitch._files import FileRefused, read_regular
    from stepswitch._json import loads
    from stepswitch.review.file_kinds import case_trail, other_kind
    from stepswitch.runtime.record import RECORD_FORMAT
    from stepswitch.runtime.state_json import FORMAT as STATE_FORMAT

    try:  # a regular file only: opening a FIFO to look would wait for a writer
        doc = loads(read_regular(path))
    except (FileRefused, OSError, ValueError):
        return None
    if isinstance(doc, dict) and doc.get("format") == STATE_FORMAT:
        return ("a saved run state, which `stepswitch trail FILE` checks and `stepswitch run "
                "TARGET --resume FILE` resumes")
    if (isinstance(doc, dict) and doc.get("format") == RECORD_FORMAT) or case_trail(doc):
        return ("a recorded run (`run --record`), which `stepswitch replay FILE` replays and "
                "`stepswitch trail FILE` checks")
    if isinstance(doc, list) and doc and all(isinstance(i, dict) and "type" in i for i in doc):
        return "a list of items, which `stepswitch trail FILE` and `stepswitch replay` read"
    return other_kind(doc)
