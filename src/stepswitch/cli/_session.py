"""``--session URL --session-id ID`` for ``run`` and ``chat``."""

from __future__ import annotations

import argparse
import os
import shlex
from typing import Any

from stepswitch.errors import SessionError, UserError

__all__ = [
    "add_session_flags",
    "check_resumed_session",
    "continue_script",
    "load_cli_session",
    "model_responses_in",
    "open_cli_session",
    "refuse_flow",
    "session_flags",
]

DEFAULT_ID = "default"


def add_session_flags(p: argparse.ArgumentParser, *, default_help: str) -> None:
    p.add_argument(
        "--session", metavar="URL",
        help="keep the conversation in a session: sqlite:///path.db, postgresql://… or "
        f"redis://… ({default_help})",
    )
    p.add_argument(
        "--session-id", metavar="ID",
        help=f"which conversation in the session store (default: {DEFAULT_ID!r})",
    )


def open_cli_session(url: str | None, session_id: str | None) -> Any:
    """The session the flags name (see :func:`load_cli_session`)."""
    return load_cli_session(url, session_id)[0]


def load_cli_session(
    url: str | None, session_id: str | None, *, machine: Any = None, items: bool = False
) -> tuple[Any, Any]:
    """The session the flags name and its snapshot (version and current agent, no
    items); ``(None, None)`` without ``--session``. ``UserError`` (exit 2) for a bad URL
    or id, or a store that cannot be reached: it is read once here, so a server that is
    down is a flag error before any banner, not a failed run. With ``machine`` (a new
    run, not a resumed one), a conversation held by an agent the workflow does not
    have is refused here, in flags. With ``items`` the one read takes the history too."""
    import asyncio

    from stepswitch.sessions import open_session, sqlite_file

    if url is None:
        if session_id is not None:
            raise UserError("--session-id needs --session URL (where the conversation is kept)")
        return None, None
    sid = DEFAULT_ID if session_id is None else session_id
    if sqlite_file(url) == ":memory:":
        raise UserError("--session sqlite:///:memory: lives only in this process: the "
                        "conversation would be lost when the command exits; give a file "
                        "(sqlite:///chat.db)")
    try:
        session = open_session(url, sid)
        snap = asyncio.run(session.load(limit=None if items else 0))
    except SessionError as exc:
        raise UserError(f"--session: {exc.summary}") from None
    agent = snap.current_agent
    if machine is not None and agent and agent not in {s.agent for s in machine.ir.states}:
        raise UserError(
            f"--session-id {sid}: the conversation continues at agent {agent!r}, which "
            f"workflow {machine.name!r} does not have; start another conversation with a "
            "new --session-id"
        )
    return session, snap


_MODEL_OUTPUT = frozenset({"message_output_item", "tool_call_item", "handoff_call_item",
                           "responses_item"})


def model_responses_in(items: Any) -> list[tuple[str, ...]]:
    """The model responses ``items`` hold, each as what it said and called: one run of
    consecutive items the model produced, the tools' outputs or the user's next message
    between two. A nested agent-tool run's calls are not among a session's items."""
    responses: list[tuple[str, ...]] = []
    inside = False
    for item in items:
        made = getattr(item, "type", None) in _MODEL_OUTPUT
        if made:
            said = getattr(item, "content", None) if item.type == "message_output_item" else None
            part = said if isinstance(said, str) else _name_of(item)
            if inside:
                responses[-1] += (part,)
            else:
                responses.append((part,))
        inside = made
    return responses


def _step_says(step: Any) -> tuple[str, ...] | None:
    output = getattr(step, "output", None)
    if output is None:  # an error or raw step: never in a session
        return None
    return tuple(str(o.content) if o.type == "message" else _name_of(o) for o in output)


def _name_of(item: Any) -> str:
    """A call's name; for a verbatim Responses item (a reasoning item), its type."""
    if item.type == "responses_item":
        return str(item.item.get("type", ""))
    return str(getattr(item, "name", ""))


def continue_script(model: Any, snap: Any, state: Any = None) -> None:
    """A scripted transcript continues after the session's earlier model calls when the
    script made them (its first steps say what the session's responses say): each
    ``stepswitch run`` or ``chat`` is a new process whose script would otherwise start
    over and replay its first answer. A script whose steps differ (one per command) starts
    at its first step. Says which on stderr."""
    import sys

    earlier = model_responses_in(snap.items)
    if state is not None and state.session is not None:  # this run's own are in calls_made
        if snap.version != state.session.version:
            return  # the session moved on since: the resume is refused, nothing to continue
        own = len(model_responses_in(state.items[: state.session.synced]))
        earlier = earlier[: len(earlier) - own]
    if not earlier:
        return
    # compared as what was said and called, in any order within one response
    steps = [_step_says(step) for step in model.steps[: len(earlier)]]
    if [sorted(s) if s is not None else None for s in steps] != [sorted(e) for e in earlier]:
        return
    model.skip(len(earlier))
    made = state.calls_made if state is not None else 0
    at = len(earlier) + 1 + made
    # the steps a resumed run made before it paused are skipped too (by calls_made)
    before = (f", and the next {made} this run's before it paused" if made else "")
    print(f"{model.name}: its first {len(earlier)} step(s) are the session's earlier model "
          f"call(s){before}; the script continues at step {at}", file=sys.stderr)


def refuse_flow(machine: Any, why: str) -> None:
    """``UserError`` when ``machine`` is a flow: sessions are for handoff workflows. Called
    before any banner is printed and before any session store is opened."""
    if machine.ir.flow is not None:
        raise UserError(
            f"workflow {machine.name!r} is a flow: {why}, and sessions are for handoff "
            "workflows (a flow starts at its first node each run; see docs/sessions.md)"
        )


def check_resumed_session(state: Any, path: str, url: str | None,
                          session_id: str | None) -> None:
    """The ``--session``/``--session-id`` a saved run needs, said in flags (the runtime's
    own errors speak of ``session=``)."""
    pin = state.session
    if pin is None:
        if url is not None:
            raise UserError(
                f"--resume {path}: this run was not taken with a session; drop --session "
                "(a session joins a run when the run starts)"
            )
        return
    flags = f"--session URL --session-id {shlex.quote(pin.session_id)}"
    if url is None:
        raise UserError(
            f"--resume {path}: this run was taken with session {pin.session_id!r}: pass "
            f"{flags} to resume it, so its turns are appended there"
        )
    given = DEFAULT_ID if session_id is None else session_id
    if given != pin.session_id:
        raise UserError(
            f"--resume {path}: this run belongs to session {pin.session_id!r}, not "
            f"{given!r}: pass --session-id {shlex.quote(pin.session_id)}"
        )
    file = _sqlite_file(url)
    if file is not None and pin.version > 0 and not os.path.exists(file):
        # opening it would make an empty store here, which the resume then conflicts with
        raise UserError(
            f"--session {url}: there is no such file ({os.path.abspath(file)}), but this "
            f"run's session {pin.session_id!r} had items when it was taken: pass the store "
            "it was taken with (a relative sqlite:/// path is read from the current folder)"
        )


def _sqlite_file(url: str) -> str | None:
    """The file on disk a ``sqlite:///`` URL names (as the store opens it), else None."""
    from stepswitch.sessions import sqlite_file

    file = sqlite_file(url)
    return None if file == ":memory:" else file


def session_flags(args: argparse.Namespace) -> str:
    """`` --session URL --session-id ID`` as given, for a command that continues the run."""
    url = getattr(args, "session", None)
    session_id = getattr(args, "session_id", None)
    if url is None:
        return ""
    file = _sqlite_file(url)
    if file is not None and not os.path.isabs(file):  # the command works from any folder
        url = "sqlite:///" + os.path.abspath(file)
    out = f" --session {shlex.quote(url)}"
    if session_id is not None:
        out += f" --session-id {shlex.quote(session_id)}"
    return out
