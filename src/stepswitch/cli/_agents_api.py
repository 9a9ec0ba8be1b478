"""``--api agents``: ``stepswitch run``, ``chat`` and ``worker`` on the hosted Agents API.

The model is an ``AgentsAPIModel`` on ``--base-url`` (default ``$OPENAI_BASE_URL``, else
OpenAI) named by ``--model``. Before anything runs, the workflow is checked for this
target (SW650-SW654): what a session cannot express is reported as the located lines
``stepswitch check`` prints, and the command exits 1 without creating a session.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["API_CHOICES", "agents_model", "refuse_inexpressible"]

API_CHOICES = ("responses", "chat", "agents")
"""``--api``: the Responses API, Chat Completions, or the hosted Agents API."""


def agents_model(name: str, base_url: str | None, api_key: str) -> Any:
    """The ``AgentsAPIModel`` the flags name (the client is made on first use)."""
    from stepswitch.models.agents_api import AgentsAPIModel

    return AgentsAPIModel(name, base_url=base_url, api_key=api_key)


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
