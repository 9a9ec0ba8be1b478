"""``stepswitch test [PATH…]``: replay every recorded case (``*.trail.json``) on the
workflow it names, check its expectations, and optionally write JUnit XML. Exit 0 all
pass, 1 a case fails, 2 usage (no case found, or a case that cannot run: not a case, a
workflow that does not load, an expectation of the wrong kind)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from stepswitch.errors import TargetError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "test",
        help="replay the recorded cases (*.trail.json) and check their expectations",
        description="Run a folder of recorded cases: each replays its trail on the "
        "workflow as it is now and checks its expectations (see docs/review.md).",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", default=["."],
                   help="case files or folders searched for *.trail.json (default: .)")
    p.add_argument("--junit", metavar="FILE", default=None,
                   help="write JUnit XML (one testcase per case file) to FILE")
    p.add_argument("--format", choices=("text", "json", "github"), default="text",
                   help="output format (default: text)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from stepswitch.review.cases import CaseError, CaseResult, find_cases, junit_xml, run_case

    try:
        paths = find_cases(list(args.paths))
    except CaseError as exc:
        raise TargetError(str(exc)) from None
    if not paths:
        raise TargetError(f"no *.trail.json case under {' '.join(args.paths)}")
    results: list[CaseResult] = []
    errors: dict[Path, str] = {}
    machines: dict[str, Any] = {}
    for path in paths:
        try:
            results.append(run_case(path, machines))
        except CaseError as exc:
            errors[path] = str(exc)
    if args.junit:
        try:
            Path(args.junit).write_text(junit_xml(results, errors), "utf-8")
        except OSError as exc:
            raise TargetError(f"--junit {args.junit}: cannot write: "
                              f"{exc.strerror or exc}") from None
    failed = [r for r in results if not r.ok]
    if args.format == "json":
        doc = {"cases": [{"file": str(r.path), "ok": r.ok, "failures": list(r.failures),
                          "seconds": round(r.seconds, 4)} for r in results],
               "errors": {str(p): m for p, m in errors.items()},
               "passed": len(results) - len(failed), "failed": len(failed)}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        for r in results:
            for failure in r.failures:
                if args.format == "github":
                    text = failure.replace("%", "%25").replace("\n", "%0A")
                    print(f"::error file={r.path},title=stepswitch test::{text}")
                else:
                    print(f"{r.path}: FAIL: {failure}")
        print(f"{len(results) - len(failed)} passed, {len(failed)} failed"
              + (f", {len(errors)} could not run (stderr says why)" if errors else ""))
    for message in errors.values():
        print(f"stepswitch test: error: {message}", file=sys.stderr)
    if errors:
        return 2
    return 1 if failed else 0
