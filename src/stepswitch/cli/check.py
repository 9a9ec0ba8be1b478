"""``stepswitch check TARGET…``: every diagnostic of each workflow, for people and CI.

Exit 0 when no workflow has errors (or with ``--exit-zero``), 1 when one has, 2 for a
usage or import problem.
"""

from __future__ import annotations

import argparse
import sys

from stepswitch.cli._check_cache import CACHE_DIR, cached_check

FORMAT_NAMES = ("github", "json", "sarif", "text")
"""The keys of :data:`stepswitch.cli.formats.FORMATS`, named here so that a check answered
from the cache need not import the formatters (a test keeps the two equal)."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check",
        help="report every diagnostic of each workflow (exit 1 on errors)",
        description="Statically check workflows. A TARGET is path/file.py:NAME, "
        "package.module:NAME, or a file or folder (every Workflow in it).",
    )
    p.add_argument("targets", nargs="+", metavar="TARGET")
    p.add_argument("--format", choices=FORMAT_NAMES, default="text",
                   help="output format (default: text)")
    p.add_argument("--select", action="append", default=None, metavar="CODES",
                   help="only these codes or prefixes, comma-separated (e.g. SW1,SW201)")
    p.add_argument("--ignore", action="append", default=None, metavar="CODES",
                   help="drop these codes or prefixes, comma-separated")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when there are errors")
    p.add_argument("--max-model-calls", type=_positive, default=None, metavar="N",
                   help="error (SW204) when a run's worst-case model calls exceed N")
    p.add_argument("--target", choices=("agents-api",), default=None,
                   help="also check what this backend cannot express (agents-api: the "
                   "hosted Agents API, SW650-SW654); inferred from agents whose own model "
                   "is an AgentsAPIModel")
    p.add_argument("--no-cache", action="store_true",
                   help=f"check everything anew: neither read nor write {CACHE_DIR}/")
    p.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _codes(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [c.strip().upper() for v in values for c in v.split(",") if c.strip()]


def run(args: argparse.Namespace) -> int:
    # the key is the command line as given (main() keeps it), which is what a re-check
    # is answered by before any parser is built (_check_cache.replay)
    words = list(args.argv[1:])
    return cached_check(words, args.targets, lambda: _check(args), use=not args.no_cache)


def _check(args: argparse.Namespace) -> int:
    from stepswitch.analysis.codes import invalid_prefixes
    from stepswitch.cli.formats import FORMATS, CheckedWorkflow, text
    from stepswitch.targets.load import load_targets

    select, ignore = _codes(args.select), _codes(args.ignore)
    for flag, codes in (("--select", select), ("--ignore", ignore)):
        bad = invalid_prefixes(codes or ())
        if bad:
            print(f"stepswitch check: error: {flag}: {', '.join(bad)} match(es) no diagnostic "
                  "code (see `stepswitch explain`)", file=sys.stderr)
            return 2
    from stepswitch.errors import UserError
    from stepswitch.policies import (
        policies_from_pyproject,
        prices_from_pyproject,
        unmatched_scopes,
        unread_pyprojects,
    )

    try:
        policies = policies_from_pyproject()
        prices = prices_from_pyproject()
    except UserError as exc:
        if args.format in ("sarif", "github"):
            # a code-scanning upload and the run's page need the log and the annotation
            # a bad pyproject made the check fail with, as for a TARGET that did not import
            from stepswitch.cli.formats import github, sarif

            sys.stdout.write((sarif if args.format == "sarif" else github)([], [str(exc)]))
        print(f"stepswitch check: error: {exc}", file=sys.stderr)
        return 2
    checked: list[CheckedWorkflow] = []
    names: set[str] = set()  # the workflows read, for the rules scoped to others
    folders: dict[Path, None] = {}  # their modules' folders, for a pyproject there
    failures: list[str] = []  # modules of a folder that did not import; the rest is checked
    skipped: list[str] = []  # files of a folder with nothing to check, and why
    import warnings
    from pathlib import Path

    try:
        with warnings.catch_warnings():
            # what from_sdk warns of at import is each an SW610 finding in the report: the
            # warning itself would only say it twice, on stderr
            warnings.filterwarnings("ignore", message=r"from_sdk: .* is not carried out by "
                                    r"stepswitch", category=UserWarning)
            for loaded in load_targets(args.targets, failures=failures, skipped=skipped):
                names.add(loaded.workflow.name)
                file = getattr(sys.modules.get(loaded.module), "__file__", None)
                if isinstance(file, str):
                    folders.setdefault(Path(file).parent, None)
                own = [p for p in policies if p.applies_to(loaded.workflow.name)]
                report = loaded.workflow.check(
                    select=select, ignore=ignore, max_model_calls=args.max_model_calls,
                    policies=own, prices=prices, target=args.target,
                )
                checked.append((loaded.label, report))
    except UserError as exc:  # a TARGET that names nothing or does not import
        if args.format not in ("sarif", "github"):
            raise  # said on stderr by main(), exit 2
        failures.append(exc.summary)
    if args.format == "text" and failures:
        # the summary must not read "passed" above a run that exits 2
        sys.stdout.write(text(checked, unimported=len(failures)))
    elif args.format in ("sarif", "github") and failures:
        # a code-scanning upload needs a whole log, and the run's page an annotation,
        # even when nothing imported: the failures are in them (and on stderr)
        from stepswitch.cli.formats import github, sarif

        sys.stdout.write((sarif if args.format == "sarif" else github)(checked, failures))
    elif checked:
        sys.stdout.write(FORMATS[args.format](checked))
    for note in skipped + unmatched_scopes(policies, names) + unread_pyprojects(list(folders)):
        print(f"stepswitch: note: {note}", file=sys.stderr)
    for failure in failures:
        print(f"stepswitch: error: {failure}", file=sys.stderr)
    if failures:
        return 2
    failed = any(not report.ok for _, report in checked)
    return 1 if failed and not args.exit_zero else 0

