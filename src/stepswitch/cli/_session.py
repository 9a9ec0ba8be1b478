"""``--session URL --session-id ID`` for ``run`` and ``chat``."""

from __future__ import annotations

import argparse
from typing import Any

from stepswitch.errors import SessionError, UserError

__all__ = ["add_session_flags", "open_cli_session"]

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
    """The session the flags name; ``UserError`` (exit 2) for a bad URL or id. Nothing is
    read or written until the run uses it."""
    from stepswitch.sessions import open_session

    if url is None:
        if session_id is not None:
            raise UserError("--session-id needs --session URL (where the conversation is kept)")
        return None
    try:
        return open_session(url, DEFAULT_ID if session_id is None else session_id)
    except SessionError as exc:
        raise UserError(f"--session: {exc}") from None
