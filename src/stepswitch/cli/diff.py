"""``stepswitch diff BASE HEAD``: what changed between two versions of a workflow, sorted
by whom it breaks.

BASE and HEAD are TARGETs or ``git:REF:TARGET``. Exit 0, or 1 when a ``--fail-on``
category has a change, 2 for a usage, git or import error.
"""

from __future__ import annotations

import argparse
import sys

from stepswitch.errors import TargetError
from stepswitch.review.diff import CATEGORIES, Category, diff_specs
from stepswitch.review.diff_formats import DIFF_FORMATS, Compared
from stepswitch.targets.sides import LoadedSpec, load_side, parse_side


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two versions of a workflow, sorted by whom each change breaks",
        description="Compare two workflows. BASE and HEAD are TARGETs (path/file.py:NAME, "
        "package.module:NAME, a file) or git:REF:TARGET, read from git without touching "
        "the work tree. Categories: " + ", ".join(CATEGORIES) + ".",
    )
    p.add_argument("base", metavar="BASE")
    p.add_argument("head", metavar="HEAD")
    p.add_argument("--format", choices=sorted(DIFF_FORMATS), default="text",
                   help="output format (default: text)")
    p.add_argument("--fail-on", default="", metavar="CATEGORIES",
                   help="exit 1 when one of these categories changed, comma-separated "
                   "(e.g. state,safety; 'all' for any change)")
    p.set_defaults(func=run)


def parse_categories(text: str) -> list[Category]:
    wanted = [c.strip().lower() for c in text.split(",") if c.strip()]
    if "all" in wanted:
        return list(CATEGORIES)
    bad = [c for c in wanted if c not in CATEGORIES]
    if bad:
        raise TargetError(f"--fail-on: unknown categor{'y' if len(bad) == 1 else 'ies'} "
                          f"{', '.join(map(repr, bad))}; choose from "
                          f"{', '.join(CATEGORIES)}, or all")
    return [c for c in CATEGORIES if c in wanted]


def _diff(b: LoadedSpec, h: LoadedSpec) -> Compared:
    # app_old.py:wf against app.py:wf: a function or type of the file is the same one
    # when its name in the file is (module names differ, qualnames are compared)
    return Compared(b.label, h.label, diff_specs(b.spec, h.spec, modules=(b.module, h.module)))


def _pairs(base: list[LoadedSpec], head: list[LoadedSpec]) -> list[Compared]:
    """One workflow on each side: compared whatever their names. Several: paired by
    ``file.py:NAME``; one found on a single side is added or removed. Each side's
    ``[tool.stepswitch] policies`` are in its spec (:func:`load_side`)."""
    if len(base) == 1 and len(head) == 1:
        return [_diff(base[0], head[0])]
    heads = {h.key: h for h in head}
    keys = {b.key for b in base}
    out = []
    for b in base:
        h = heads.get(b.key)
        out.append(Compared(b.label, None, None) if h is None else _diff(b, h))
    out.extend(Compared(None, h.label, None) for h in head if h.key not in keys)
    return out


def run(args: argparse.Namespace) -> int:
    failing = parse_categories(args.fail_on)
    base_side, head_side = parse_side(args.base), parse_side(args.head)
    # each side carries its own pyproject's policies (a git side: its commit's), proved
    # as its own: a rule removed from the table since is a safety change
    base = load_side(base_side)
    head = load_side(head_side)
    pairs = _pairs(base, head)
    if args.format == "mermaid" and (len(pairs) != 1 or pairs[0].diff is None):
        raise TargetError("--format mermaid draws one workflow: name one on each side "
                          "(FILE.py:NAME)")
    sys.stdout.write(DIFF_FORMATS[args.format](pairs, failing))
    changed = {c for p in pairs for c in p.categories()}
    return 1 if changed & set(failing) else 0
