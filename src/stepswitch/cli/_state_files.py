"""The run's state file: ``--state FILE`` and ``--resume FILE`` of ``stepswitch run``.

A saved run is read back only when it is intact, of this workflow, unfinished and not
taken by another resume (at most once); it is written atomically (a temporary file,
then a rename), and the ``--resume`` file is rewritten with the run's new state, so
running the command again never repeats what the run did.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from stepswitch._files import FileRefused, read_regular
from stepswitch._visible import visible
from stepswitch.cli._console import call_text
from stepswitch.errors import StateError, UserError
from stepswitch.runtime.approvals import owner_of
from stepswitch.runtime.items import ToolApprovalItem, ToolCallOutputItem
from stepswitch.runtime.state import RunState

__all__ = ["check_state_path", "flow_edge", "read_state", "save", "save_paths"]

def flow_edge(args: argparse.Namespace | None, source: str) -> tuple[str, int | None]:
    """Where flow node ``source``'s exit is declared, and its max_uses, for the messages
    of a spent flow budget. The spec (IR has no locations) is built again only then,
    not on every run."""
    edges: dict[str, tuple[str, int | None]] | None = getattr(args, "flow_edges", None)
    if edges is None:
        workflow = getattr(args, "workflow", None)
        flow = workflow.to_spec().flow if workflow is not None else None
        edges = {e.source: (str(e.location), e.max_uses) for e in flow or ()}
        if args is not None:
            args.flow_edges = edges
    return edges.get(source, ("its declaration", None))


def read_state(path: str, machine: Any, args: argparse.Namespace | None = None) -> RunState:
    """The saved run at ``path``, refused unless it is intact and of ``machine``'s workflow.

    Checked here, not only when the run resumes: a state whose calls all await approval
    may pause again before the machine ever sees it.
    """
    try:  # a FIFO or a device is never read, nor a file past the size bound
        text = read_regular(path).decode("utf-8")
    except FileRefused as exc:
        raise UserError(f"--resume {path}: {exc}; name a saved run") from None
    except UnicodeDecodeError:
        raise UserError(f"--resume {path}: not a saved run (not UTF-8 text)") from None
    try:
        state = RunState.from_json(text)
    except StateError as exc:
        raise UserError(f"--resume {path}: {exc}") from None
    if state.workflow != machine.name:
        raise UserError(
            f"--resume {path}: the saved run is of workflow {state.workflow!r}, "
            f"not {machine.name!r}"
        )
    if state.status == "finished":
        raise UserError(
            f"--resume {path}: the saved run already finished (resuming it would run it "
            "again); start a new run with --input"
        )
    if state.resumed:
        raise UserError(f"--resume {path}: {_taken(state)}")
    if state.flow is not None and state.flow.spent is not None:
        source, _, target = state.flow.spent.partition("->")
        where = flow_edge(args, source)[0]
        raise UserError(
            f"--resume {path}: the saved run stopped when flow edge {source} → "
            f"{target.strip('<>')} had used up its max_uses, and resuming would take it again; "
            f"raise max_uses at {where}, or let the loop end sooner, and start a new run "
            "with --input"
        )
    return state


def _taken(state: RunState) -> str:
    """Why a state saved as its resume began (and never saved again: the process was
    killed) is not resumed: what it was about to run may have run."""
    started = _approved_unanswered(state)
    what = (f"approved call(s) {', '.join(started)} had started and may have run"
            if started else "what it was about to run may have run")
    return (f"a run resumed this saved run and stopped before it could save where it got "
            f"to (killed?): {what}, so it is not run again (at most once); check what it "
            "did, then start a new run with --input")


def _approved_unanswered(state: RunState) -> list[str]:
    """The approved calls of ``state`` (nested runs' included) that have no output yet:
    ``name(arguments) [call id]``."""
    out: list[str] = []
    for item in state.items:
        if not isinstance(item, ToolApprovalItem):
            continue
        owner = owner_of(state, item.run_path)
        if owner is None:
            continue
        decision = owner.decisions.get(item.call_id)
        key = (item.agent, item.name)
        approved = (decision.approved if decision is not None
                    else owner.always.get(key, state.always.get(key, False)))
        answered = any(isinstance(i, ToolCallOutputItem) and i.call_id == item.call_id
                       for i in owner.items)
        if approved and not answered:
            out.append(f"{call_text(item)} [{visible(item.call_id)}]")
    return out


def save_paths(args: argparse.Namespace) -> list[str]:
    """Where the run's state goes: ``--state``, and the ``--resume`` file, which a resumed
    run consumes (rewritten with the new state, so running the command again never
    repeats what this run did)."""
    paths = [p for p in (args.state, args.resume) if p]
    if len(paths) == 2 and Path(paths[0]).absolute() == Path(paths[1]).absolute():
        paths.pop()
    return paths


def save(args: argparse.Namespace, state: RunState) -> list[str]:
    """Write ``state`` everywhere it goes; the paths written."""
    paths = save_paths(args)
    for path in paths:
        _write_state(path, state, "--state" if path == args.state else "--resume")
    return paths


def check_state_path(path: str, flag: str = "--state") -> None:
    """Refuse a ``--state`` the run could not be saved to, before anything runs: a run
    that pauses has already called the model and run tools, and would be lost."""
    target = Path(path).absolute()
    if target.is_dir():
        raise UserError(f"{flag} {path}: is a folder; name a file to save the run to")
    if target.exists() and not target.is_file():  # /dev/stdout, a FIFO: replaced, not written
        raise UserError(f"{flag} {path}: not a regular file; name a file to save the run to")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise UserError(f"{flag} {path}: cannot write there ({folder} is not a writable folder)")


def _write_state(path: str, state: RunState, flag: str = "--state") -> None:
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(state.to_json(indent=2), encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise UserError(f"{flag} {path}: cannot write it: {exc.strerror or exc}") from None
    except StateError as exc:  # text JSON cannot hold exactly (see stepswitch._json.dumps)
        raise UserError(f"{flag} {path}: {exc}") from None
