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


def refuse_inexpressible(workflow: Any, model: Any, command: str) -> int | None:
    """1 (after printing each finding) when the workflow has what the Agents API cannot
    express; None when it may run there."""
    if getattr(model, "api", None) != "agents":
        model = getattr(model, "_model", model)  # the CLI's unstreamed wrapper
    if getattr(model, "api", None) != "agents":
        return None
    report = workflow.check(select=["SW65"], target=model)
    errors = [d for d in report.diagnostics if d.severity == "error"]
    if not errors:
        return None
    for d in errors:
        print(d.format_line(), file=sys.stderr)
    print(f"stepswitch {command}: {len(errors)} finding(s) above: the hosted Agents API "
          "cannot run this workflow as written (see `stepswitch explain CODE`); nothing "
          "was sent", file=sys.stderr)
    return 1
