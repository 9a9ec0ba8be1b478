"""``stepswitch compile TARGET -o FILE [--check]``: write a workflow's generated runner.

With ``--check`` nothing is written: exit 1 (with a short diff) when FILE differs from
what would be generated now, 0 when it is current — the CI gate for checked-in runners.
A workflow the analyzer finds errors in exits 1 too, listing them, as ``check`` does.
"""

from __future__ import annotations

import argparse
import difflib
import shlex
import sys
from pathlib import Path

from stepswitch.errors import CompileError, TargetError
from stepswitch.targets.load import compile_target, load_targets, refuse_own_source

__all__ = ["add_parser", "run"]

DIFF_LINES = 40
"""At most this many diff lines are shown; the rest is counted."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compile",
        help="generate a standalone runner module for one workflow",
        description="Generate a standalone, typed Python runner module for one workflow.",
    )
    p.add_argument("target", metavar="TARGET", help="file.py:NAME or package.module:NAME")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the module to write (- for stdout)")
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 with a diff when FILE is not what would be generated",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from stepswitch.compiler.codegen import codegen

    loaded = load_targets([args.target], runner=args.output)
    if len(loaded) != 1:
        names = ", ".join(w.label for w in loaded)
        raise TargetError(
            f"{args.target}: names {len(loaded)} workflows ({names}); compile one at a time "
            "with file.py:NAME"
        )
    one = loaded[0]
    refuse_own_source(args.output, one)
    try:
        machine = compile_target(one.workflow)
    except CompileError as exc:  # findings, as `stepswitch check` counts them: exit 1
        print(f"stepswitch: error: {one.label}: {exc}", file=sys.stderr)
        return 1
    source = codegen(machine, source=f"{one.module}:{one.attribute}")
    if args.output == "-":
        if args.check:
            raise TargetError("-o -: --check compares against a file; name it")
        sys.stdout.write(source)
        return 0
    out = Path(args.output)
    if args.check:
        # the command that regenerates it is this one without --check
        again = f"stepswitch compile {shlex.quote(args.target)} -o {shlex.quote(args.output)}"
        return _check(out, source, again)
    # only a regular file is read (to leave an up-to-date one untouched); a device, a
    # pipe or a FIFO is written to and never read: reading /dev/stdout or a FIFO
    # waits forever, and /dev/zero never ends
    regular = out.is_file()
    try:
        if regular and out.read_text(encoding="utf-8") == source:
            print(f"{args.output}: up to date")
            return 0
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as file:
            file.write(source)
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise TargetError(f"{args.output}: cannot write: {reason}") from None
    # a runner written to /dev/stdout or a pipe is the output: the note goes aside
    note = sys.stdout if out.is_file() else sys.stderr
    print(f"{args.output}: wrote the runner of {one.label}", file=note)
    how = _how_to_run(out, one.module)
    if how:
        print(f"note: {how}", file=note)
    return 0


def _how_to_run(out: Path, module: str) -> str | None:
    """How to run a runner that ``python RUNNER`` alone cannot: one written below the
    folder its workflow's module is imported from (``-o out/runner.py`` beside
    ``wf.py``). None when ``python RUNNER`` works."""
    import os

    from stepswitch.targets.load import _STARTUP_PATH

    top = sys.modules.get(module.partition(".")[0])
    file = getattr(top, "__file__", None)
    if not isinstance(file, str):
        return None
    root = os.path.dirname(os.path.realpath(file))
    if os.path.basename(file) == "__init__.py":
        root = os.path.dirname(root)
    here = os.path.dirname(os.path.realpath(out.absolute()))
    if here == root or root in _STARTUP_PATH or not here.startswith(root + os.sep):
        return None
    from stepswitch._site import display_path

    cwd = os.path.realpath(os.getcwd())
    shown = display_path(root)
    place = "the working directory" if root == cwd else shown
    parts = os.path.relpath(os.path.realpath(out.absolute()), root).removesuffix(".py")
    dotted = parts.replace(os.sep, ".")
    return (f"{out} imports {module!r} from {place}, which `python {out}` alone does not "
            f"put on sys.path: run it from {'here' if root == cwd else 'there'} as "
            f"`python -m {dotted}`, or with PYTHONPATH={'.' if root == cwd else shown}")


def _check(out: Path, source: str, again: str) -> int:
    if out.exists() and not out.is_file():
        raise TargetError(f"{out}: not a regular file; --check compares the runner with a file")
    try:
        current = out.read_text(encoding="utf-8")
    except FileNotFoundError:
        print(f"{out}: missing; generate it with `{again}`")
        return 1
    except (OSError, UnicodeDecodeError) as exc:
        raise TargetError(f"{out}: cannot read: {exc}") from None
    if current == source:
        print(f"{out}: up to date")
        return 0
    diff = list(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            source.splitlines(keepends=True),
            fromfile=f"{out} (checked in)",
            tofile=f"{out} (generated now)",
            n=1,
        )
    )
    shown = diff[:DIFF_LINES]
    sys.stdout.writelines(line if line.endswith("\n") else line + "\n" for line in shown)
    if len(diff) > DIFF_LINES:
        print(f"... {len(diff) - DIFF_LINES} more diff lines")
    print(f"{out}: stale; regenerate it with `{again}`")
    return 1
