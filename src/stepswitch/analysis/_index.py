"""The graph as the rules read it: agents numbered in declaration order, edges
bucketed by source and kind, adjacency lists and their components built once per
analysis and shared. Not API."""

from __future__ import annotations

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
        # Targets as numbers, per agent: every handoff, the unbudgeted handoffs, every
        # agent tool, the agent tools without max_depth.
        h: list[list[int]] = [[] for _ in range(n)]
        hu: list[list[int]] = [[] for _ in range(n)]
        t: list[list[int]] = [[] for _ in range(n)]
        tu: list[list[int]] = [[] for _ in range(n)]
        pos = self.pos
        for edge in graph.edges():
            i, j = pos[edge.source], pos[edge.target]
            spec = edge.spec
            if isinstance(spec, AgentToolSpec):
                self.tools[i].append(edge)
                t[i].append(j)
                if spec.max_depth is None:
                    tu[i].append(j)
            else:
                self.handoffs[i].append(edge)
                h[i].append(j)
                if spec.max_uses is None:
                    hu[i].append(j)
        # Share one list when two graphs are the same, so components are computed once.
        every = [a + b for a, b in zip(h, t, strict=True)] if any(t) else h
        if t == tu:
            nesting = every
        elif not any(tu):
            nesting = h
        else:
            nesting = [a + b for a, b in zip(h, tu, strict=True)]
        self._adjacency: dict[str, list[list[int]]] = {
            "handoff": h,
            "unbudgeted": h if hu == h else hu,
            "all": every,
            "nesting": nesting,
        }
        self._components: dict[int, Components] = {}

    def __len__(self) -> int:
        return len(self.names)

    def adjacency(self, key: str) -> list[list[int]]:
        """Targets per agent: ``handoff`` (every handoff), ``unbudgeted`` (handoffs
        without max_uses), ``all`` (every edge), ``nesting`` (every handoff and the agent
        tools without max_depth: a cycle there holding an agent tool is unbounded
        recursion)."""
        return self._adjacency[key]

    def components(self, key: str) -> Components:
        """Strongly connected components of one adjacency, computed once."""
        succ = self._adjacency[key]
        cached = self._components.get(id(succ))
        if cached is None:
            cached = self._components[id(succ)] = strongly_connected(succ)
        return cached
