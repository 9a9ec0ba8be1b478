"""The graph as the rules read it: agents numbered in declaration order, edges
bucketed by source and kind, adjacency lists and their components built once per
analysis and shared. Not API."""

from __future__ import annotations

from collections.abc import Callable

from stepswitch.analysis._graphalgo import strongly_connected
from stepswitch.graph.spec import AgentSpec, AgentToolSpec
from stepswitch.graph.workflow_graph import Edge, WorkflowGraph

__all__ = ["Index"]

Components = tuple[list[list[int]], list[int]]


class Index:
    def __init__(self, graph: WorkflowGraph) -> None:
        self.graph = graph
        self.names: tuple[str, ...] = graph.agent_names()
        self.pos: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.agents: list[AgentSpec] = [graph.agent(n) for n in self.names]
        n = len(self.names)
        self.handoffs: list[list[Edge]] = [[] for _ in range(n)]
        self.tools: list[list[Edge]] = [[] for _ in range(n)]
        pos = self.pos
        for edge in graph.edges():
            bucket = self.handoffs if edge.kind == "handoff" else self.tools
            bucket[pos[edge.source]].append(edge)
        self._adjacency: dict[str, list[list[int]]] = {}
        self._components: dict[str, Components] = {}

    def __len__(self) -> int:
        return len(self.names)

    def adjacency(self, key: str, keep: Callable[[Edge], bool] | None = None,
                  *, handoffs: bool = True, tools: bool = True) -> list[list[int]]:
        """Targets per agent over the chosen edges, cached under ``key``."""
        cached = self._adjacency.get(key)
        if cached is not None:
            return cached
        pos = self.pos
        succ: list[list[int]] = []
        for i in range(len(self.names)):
            row: list[int] = []
            if handoffs:
                row.extend(pos[e.target] for e in self.handoffs[i] if keep is None or keep(e))
            if tools:
                row.extend(pos[e.target] for e in self.tools[i] if keep is None or keep(e))
            succ.append(row)
        self._adjacency[key] = succ
        return succ

    def components(self, key: str) -> Components:
        """Components of a cached adjacency (call ``adjacency(key, ...)`` first)."""
        cached = self._components.get(key)
        if cached is None:
            cached = self._components[key] = strongly_connected(self._adjacency[key])
        return cached

    # The graphs several rules share.
    def all_edges(self) -> list[list[int]]:
        return self.adjacency("all")

    def handoff_edges(self) -> list[list[int]]:
        return self.adjacency("handoff", tools=False)

    def nesting_edges(self) -> list[list[int]]:
        """Every handoff, and the agent tools without ``max_depth``: a cycle here that
        holds an agent tool is unbounded recursion."""
        return self.adjacency("nesting", _unbounded_tool_or_handoff)


def _unbounded_tool_or_handoff(edge: Edge) -> bool:
    return not isinstance(edge.spec, AgentToolSpec) or edge.spec.max_depth is None
