"""``stepswitch explain [CODE]``: a diagnostic code's documentation, or the list of codes."""

from __future__ import annotations

import argparse
import sys

from stepswitch.analysis.codes import CODES, GROUPS, code_doc
from stepswitch.review.trail_codes import TRAIL_CODES, TRAIL_GROUPS, trail_code_doc


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("explain", help="print a diagnostic code's documentation")
    p.add_argument("code", nargs="?", metavar="CODE", help="e.g. SW201; omit to list codes")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.code is None:
        group = ""
        for code in CODES.values():
            if code.code[:3] != group:
                group = code.code[:3]
                print(f"{group}xx {GROUPS[group]}")
            print(f"  {code.code}  {code.severity:<7}  {code.name}: {code.summary}")
        group = ""
        for trail in TRAIL_CODES.values():  # stepswitch trail's codes: every one an error
            if trail.code[:3] != group:
                group = trail.code[:3]
                print(f"{group}xx stepswitch trail: {TRAIL_GROUPS[group]}")
            print(f"  {trail.code}  {'error':<7}  {trail.name}: {trail.summary}")
        from stepswitch.review.replay import REPLAY_CODES

        print("RP1xx stepswitch replay: divergences")
        for rp in REPLAY_CODES.values():
            print(f"  {rp.code}  {'error':<7}  {rp.name}: {rp.summary}")
        return 0
    wanted = args.code.strip().upper()
    if wanted.startswith("RP"):
        from stepswitch.review.replay import REPLAY_CODES, replay_code_doc

        if wanted in REPLAY_CODES:
            sys.stdout.write(replay_code_doc(wanted))
            return 0
    if wanted in TRAIL_CODES:
        sys.stdout.write(trail_code_doc(wanted))
        return 0
    if wanted not in CODES:
        print(f"stepswitch explain: error: unknown code {args.code!r}; run `stepswitch "
              "explain` to list the codes", file=sys.stderr)
        return 2
    sys.stdout.write(code_doc(wanted))
    return 0
