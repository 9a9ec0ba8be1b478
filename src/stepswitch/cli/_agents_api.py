"""``--api agents``: ``stepswitch run``, ``chat`` and ``worker`` on the hosted Agents API.

The model is an ``AgentsAPIModel`` on ``--base-url`` (default ``$OPENAI_BASE_URL``, else
OpenAI) named by ``--model``. Before anything runs, the workflow is checked for this
target (SW650-SW654): what a session cannot express is reported as the located lines
``stepswitch check`` prints, and the command exits 1 without creating a session.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from stepswitch.errors import UserError

__all__ = ["API_CHOICES", "add_wait_timeout", "agents_model", "refuse_inexpressible",
           "wait_timeout"]

API_CHOICES = ("responses", "chat", "agents")
"""``--api``: the Responses API, Chat Completions, or the hosted Agents API."""

_WAIT = "--wait-timeout"


def add_wait_timeout(p: argparse.ArgumentParser) -> None:
    """``--wait-timeout SECONDS``, the ``AgentsAPIModel``'s ``wait_timeout``."""
    p.add_argument(
        _WAIT, type=float, metavar="SECONDS",
        help="with --api agents: how long to read a session's events for one turn, and "
        "as long again to wait for it to stop once they break off, before the run fails "
        "(default: 600)",
    )


def wait_timeout(args: argparse.Namespace, name: str, *, yours: bool = False) -> float | None:
    """``--wait-timeout`` when given, checked; an error when the flags make no
    ``AgentsAPIModel`` for it to bound, rather than a flag read by nothing: another
    ``--api``, a scripted model, or a model object of the user's (``yours``: its own
    ``wait_timeout=`` is where that is set)."""
    value: float | None = getattr(args, "wait_timeout", None)
    if value is None:
        return None
    scripted = name.startswith("scripted:")
    if yours or scripted or args.api != "agents":
        why = (f"--model {name} is a model object of yours (set its wait_timeout= there)"
               if yours else
               f"--model {name} answers in this process, with no session to wait for"
               if scripted else "add --api agents")
        raise UserError(f"{_WAIT} bounds the wait for a hosted Agents API session: {why}, "
                        f"or drop {_WAIT}")
    if not 0 < value < math.inf:
        raise UserError(f"{_WAIT} must be a positive number of seconds, got {value:g}")
    return value


def agents_model(name: str, base_url: str | None, api_key: str,
                 wait: float | None = None) -> Any:
    """The ``AgentsAPIModel`` the flags name (the client is made on first use)."""
    from stepswitch.models.agents_api import AgentsAPIModel

    options: dict[str, Any] = {} if wait is None else {"wait_timeout": wait}  # or its own
    return AgentsAPIModel(name, base_url=base_url, api_key=api_key, **options)


def refuse_inexpressible(workflow: Any, model: Any, command: str, api: str) -> int | None:
    """1 (after printing each finding) when the workflow has what the Agents API cannot
    express; None when it may run there.

    ``--api agents`` asks for this check whatever the model: a scripted transcript or a
    model object of the user's (``FILE.py:NAME``) answers in this process and speaks no
    wire API, so the flag only checks there, and a note on stderr says so rather than
    let the flag pass unread."""
    inner = model if getattr(model, "api", None) == "agents" else getattr(model, "_model", model)
    hosted = getattr(inner, "api", None) == "agents"  # (the CLI's unstreamed wrapper)
    if not hosted and api != "agents":
        return None
    # the model itself when it is the adapter: its metadata and multi_agent are checked
    report = workflow.check(select=["SW65"], target=inner if hosted else "agents-api")
    errors = [d for d in report.diagnostics if d.severity == "error"]
    if errors:
        for d in errors:
            print(d.format_line(), file=sys.stderr)
        print(f"stepswitch {command}: {len(errors)} finding(s) above: the hosted Agents API "
              "cannot run this workflow as written (see `stepswitch explain CODE`); nothing "
              "was sent", file=sys.stderr)
        return 1
    if not hosted:
        print(f"stepswitch {command}: note: --api agents: the workflow was checked for the "
              "hosted Agents API, but this model answers in this process, not through a "
              "session (--api chooses the wire for a model name)", file=sys.stderr)
    return None
