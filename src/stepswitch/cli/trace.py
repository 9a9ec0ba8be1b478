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
    spans = read_spans(args.file)  # a UserError names the file and line: exit 2
    if not spans:  # exit 2, worded as every other command's error
        raise UserError(f"{args.file} holds no spans")
    sys.stdout.write(format_tree(spans) + "\n")
    return 0
