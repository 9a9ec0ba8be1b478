"""What a workflow read from another framework's app sets that stepswitch does not carry.

``from_sdk`` records one :class:`NotCarried` per such setting on the workflow it makes
(``Workflow.not_carried``); the spec keeps them and the analyzer reports each as SW610 at
the site of the object it belongs to, so ``check`` can never say "passed" over a dropped
setting without saying so.
"""

from __future__ import annotations

from stepswitch._dataclass import dataclass
from stepswitch._site import Site

__all__ = ["NotCarried"]


@dataclass(frozen=True, slots=True)
class NotCarried:
    """One setting stepswitch reads but does not carry out."""

    attribute: str
    """The framework's own name for it: ``FunctionTool.tool_input_guardrails``."""
    owner: str
    """What it is set on: ``tool 'lookup' of agent 'Clerk'``."""
    detail: str
    """What it is set to and what happens instead, in a few words."""
    path: str
    """Where in the spec: ``agents.Clerk.tools.lookup``."""
    site: Site
