"""``stepswitch trail FILE``: check a recorded run's pins, and with ``--workflow`` that
every step is a move the machine allows.

FILE is a saved ``RunState`` (``run --state``), a file ``run --record`` writes (a recording,
or a recorded case: its recording is checked), a JSON list of items in the Responses API
input format, or a hosted Agents API session's item list (see
:mod:`stepswitch.review.trail_agents`). Exit 0 clean, 1 findings, 2 when FILE is not a
trail, is a run of another workflow than ``--workflow``'s, or the workflow does not load.
"""

from __future__ import annotations

import argparse
import os
import sys

from stepswitch._files import MAX_FILE_BYTES, FileRefused, read_regular
from stepswitch._visible import visible
from stepswitch.errors import TargetError
from stepswitch.review.trail import TrailError, check_trail, read_trail
from stepswitch.review.trail_formats import TRAIL_FORMATS
from stepswitch.targets.load import compile_one

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "trail",
        help="check a recorded run (a saved state, a `run --record` file or a list of "
        "items) for pins that do not line up",
        description="Check a recorded run: every call has exactly one output with its "
        "call_id, no output without a call, no reused id, pending calls kept apart; with "
        "--workflow, every step is one the machine allows.",
    )
    p.add_argument("file", metavar="FILE", help="a saved RunState (JSON), a file written by "
                   "`run --record FILE` (a recording or a case), a JSON list of Responses "
                   "API input items, or an Agents API session's item list ('-' reads "
                   "stdin)")
    p.add_argument("--workflow", metavar="TARGET", default=None,
                   help="check the steps against this workflow (path/file.py:NAME)")
    p.add_argument("--agent", metavar="NAME", default=None,
                   help="the agent the run started at (default: where a saved state's run "
                   "started, else the workflow's entry)")
    p.add_argument("--unknown-tool", choices=("raise", "return_error"), default="raise",
                   help="the run's RunConfig(unknown_tool=...): with return_error, calls of "
                   "tools an agent lacks were answered with an error and are allowed")
    p.add_argument("--max-turns", type=int, default=None, metavar="N",
                   help="the max_turns the run was given, when run() was passed one "
                   "(default: a saved state's own, else the workflow's)")
    p.add_argument("--on-max-turns", action="store_true",
                   help="the run had a RunConfig(on_max_turns=...) handler: its final message "
                   "after the last allowed turn is no finding")
    p.add_argument("--key-env", metavar="VAR", default=None,
                   help="read a signed state's HMAC key from this environment variable")
    p.add_argument("--format", choices=sorted(TRAIL_FORMATS), default="text",
                   help="output format (default: text)")
    p.set_defaults(func=run)


def _read(path: str) -> bytes:
    if path == "-":
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise TargetError(f"-: stdin holds more than {MAX_FILE_BYTES // 2**20} MiB; "
                              "not a recorded run")
        return data
    try:
        return read_regular(path)  # a FIFO or /dev/zero: refused, never read
    except FileRefused as exc:
        raise TargetError(f"{path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    key = None
    if args.key_env is not None:
        value = os.environ.get(args.key_env)
        if not value:
            raise TargetError(f"--key-env {args.key_env}: the variable is not set")
        key = value.encode("utf-8")
    machine = label = None
    if args.workflow is not None:
        loaded, compiled = compile_one(args.workflow)
        label, machine = loaded.label, compiled.ir
        if args.agent is not None and machine.state(args.agent) is None:
            raise TargetError(f"--agent {args.agent}: {label} has no agent of that name")
    data = _read(args.file)
    session = _agents_session(data, args, machine is not None)
    if session is not None:
        return session
    try:
        trail = read_trail(data, key=key)
    except TrailError as exc:
        raise TargetError(f"{args.file}: {exc}") from None
    if machine is not None and trail.workflow is not None and trail.workflow != machine.name:
        # its steps would all be findings against the wrong tables; say so, as --resume does
        what = "saved run" if trail.source == "state" else "recorded run"
        raise TargetError(f"{args.file}: the {what} is of workflow {trail.workflow!r}, not "
                          f"{machine.name!r} ({label}); name its own with --workflow, or drop "
                          "--workflow to check its pins only")
    report = check_trail(trail, machine, start=args.agent, unknown_tool=args.unknown_tool,
                         max_turns="machine" if args.max_turns is None else args.max_turns,
                         on_max_turns=args.on_max_turns)
    sys.stdout.write(TRAIL_FORMATS[args.format](args.file, trail, report, label))
    return 0 if report.ok else 1


def _agents_session(data: bytes, args: argparse.Namespace, with_workflow: bool) -> int | None:
    """Check a hosted Agents API session's item list (None: the file is another trail)."""
    import json

    from stepswitch._json import loads
    from stepswitch.review.trail_agents import (
        check_agents_trail,
        is_agents_trail,
        read_agents_trail,
    )

    try:
        doc = loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None  # read_trail says what is wrong with it
    if not is_agents_trail(doc):
        return None
    if with_workflow:
        raise TargetError(f"{args.file}: an Agents API session's items name no agents, so "
                          "its steps cannot be checked against a workflow; drop --workflow "
                          "(its pins are checked)")
    try:
        read = read_agents_trail(doc)
    except TrailError as exc:
        raise TargetError(f"{args.file}: {exc}") from None
    report = check_agents_trail(read)
    out = TRAIL_FORMATS[args.format](args.file, read.trail, report, None)
    actors = read.actors()
    if args.format == "json":
        body = json.loads(out)
        body["source"] = "agents_api"
        body["actors"] = actors
        out = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    elif actors:
        out += "".join(f"{args.file}: actor {visible(a)}: {n} item(s)\n"
                       for a, n in actors.items())
    sys.stdout.write(out)
    return 0 if report.ok else 1
