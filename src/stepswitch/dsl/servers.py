"""``ToolServer``: what ``Agent(mcp_servers=[...])`` holds.

A server declaration whose tools the agent gets as function tools; the kinds there
are live in :mod:`stepswitch.mcp` (``ss.MCPServerStdio``, ``ss.MCPServerStreamableHttp``),
which builds on the DSL's ``FunctionTool``. The DSL checks and builds an agent's
servers through this base alone, so it never imports ``stepswitch.mcp``: the
dependency points one way, from the servers to the DSL.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepswitch._site import Site
    from stepswitch.dsl.tools import FunctionTool
    from stepswitch.graph.spec import Location, MCPServerSpec

__all__ = ["ToolServer"]


class ToolServer(ABC):
    """A declared server that gives an agent tools (subclassed by ``stepswitch.mcp``)."""

    name: str
    site: Site
    """Where the server was declared."""

    @abstractmethod
    def to_spec(
        self, location: Callable[[Site], Location]
    ) -> tuple[MCPServerSpec, list[FunctionTool]]:
        """The server as a spec value, and the function tools it offers the agent, in
        order (``location`` turns a declaration site into the spec's ``Location``)."""
