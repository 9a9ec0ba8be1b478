"""``stepswitch replay TRAIL --workflow TARGET``: replay a recorded run on the workflow as
it is now (recorded model outputs and tool outputs; no tool runs, no model call) and
report the first divergence. A recorded case (``run --record NAME.trail.json``) replays
its trail, on the workflow it names unless ``--workflow`` says otherwise. Exit 0 same, 1
diverged, 2 usage (a corrupt trail, a workflow that does not load)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from stepswitch.errors import TargetError
from stepswitch.targets.context import load_machine

__all__ = ["add_parser", "render", "run"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a recorded run on today's workflow and report the first divergence",
        description="Feed a recorded run's model outputs and tool outputs to the workflow "
        "as it is now and report where it first goes another way (RPxxx codes; "
        "`stepswitch explain RP101`).",
    )
    p.add_argument("trail", metavar="TRAIL", help="a saved RunState, a JSON list of items, "
                   "or a file written by `run --record FILE` (a recording, or a "
                   "*.trail.json case) ('-' reads stdin)")
    p.add_argument("--workflow", metavar="TARGET", default=None,
                   help="the workflow to replay on (path/file.py:NAME); default, for a "
                   "case: the workflow it names")
    p.add_argument("--format", choices=("text", "json", "github"), default="text",
                   help="output format (default: text)")
    p.set_defaults(func=run)


def render(fmt: str, file: str, label: str, found: Any) -> str:
    from stepswitch.review.replay import REPLAY_CODES

    if fmt == "json":
        doc: dict[str, Any] = {"file": file, "workflow": label, "same": found is None,
                               "divergence": None}
        if found is not None:
            doc["divergence"] = {"code": found.code, "name": REPLAY_CODES[found.code].name,
                                 "message": found.message, "turn": found.turn,
                                 "where": found.where, "agent": found.agent}
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if found is None:
        return f"{file}: replayed on {label}: same\n"
    name = REPLAY_CODES[found.code].name
    if fmt == "github":
        message = found.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return (f"::error file={file},title={found.code} {name}::turn {found.turn} at "
                f"{found.where}: {message}\n")
    return (f"{file}:{found.where}: {found.code} {name}: {found.message}\n"
            f"{file}: replayed on {label}: diverged at turn {found.turn}\n")


def run(args: argparse.Namespace) -> int:
    from stepswitch.review.replay import ReplayError, read_recording, replay

    try:
        if args.trail == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.trail, "rb") as f:
                data = f.read()
    except OSError as exc:
        given = args.workflow
        if (given is not None and not given.endswith(".py") and ".py:" not in given
                and (args.trail.endswith(".py") or ".py:" in args.trail)):
            raise TargetError(f"{args.trail}: a TARGET where the recorded run goes, and "
                              f"--workflow {given} names no workflow: the two are swapped "
                              f"(stepswitch replay {given} --workflow {args.trail})") from None
        raise TargetError(f"{args.trail}: cannot read: {exc.strerror or exc}") from None
    target = args.workflow if args.workflow is not None else _case_workflow(args.trail, data)
    machine, label, context = load_machine(target)
    try:
        found = replay(read_recording(data), machine, context=context)
    except ReplayError as exc:
        raise TargetError(f"{args.trail}: {exc}") from None
    sys.stdout.write(render(args.format, args.trail, label, found))
    return 0 if found is None else 1


def _case_workflow(file: str, data: bytes) -> str:
    """The workflow a recorded case names (a relative path from the case's folder)."""
    from pathlib import Path

    from stepswitch._json import loads
    from stepswitch.review.cases import resolve_target
    from stepswitch.review.file_kinds import case_trail

    try:
        case = case_trail(loads(data))
    except (json.JSONDecodeError, UnicodeDecodeError):  # a JSONLimitError too
        case = None
    if case is None:
        raise TargetError(f"{file}: --workflow TARGET is needed (only a recorded case, "
                          "`run --record NAME.trail.json`, names its workflow)")
    folder = Path(".") if file == "-" else Path(file).parent
    return resolve_target(case[1], folder)
