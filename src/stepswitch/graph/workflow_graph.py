"""``WorkflowGraph``: a typed facade over a frozen networkx ``MultiDiGraph``.

Nodes are agent names (the first agent of each name; duplicates are the analyzer's
business). Edges are typed: ``handoff`` (control moves, no return) and
``agent_tool`` (a nested run that returns). Edges whose target names no agent are
kept aside as ``dangling`` so nothing is lost and the analyzer can locate them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from stepswitch._dataclass import dataclass
from stepswitch._gc import gc_paused
from stepswitch.flow_ir import FlowFacts
from stepswitch.graph.bindings import Bindings, BuiltWorkflow
from stepswitch.graph.facts import flow_facts, machine_facts, reach
from stepswitch.graph.spec import (
    AgentSpec,
    AgentToolSpec,
    HandoffSpec,
    ToolSpec,
    WorkflowSpec,
    is_gated,
)
from stepswitch.ir import StateFacts

if TYPE_CHECKING:  # networkx loads only when a caller asks for a networkx graph
    from networkx import DiGraph, MultiDiGraph

__all__ = ["Edge", "EdgeKind", "WorkflowGraph"]

EdgeKind = Literal["handoff", "agent_tool"]


@dataclass(frozen=True, slots=True)
class Edge:
    """One handoff or agent-tool edge, with where it sits in the spec."""

    source: str
    target: str
    kind: EdgeKind
    index: int
    """Position in the source agent's ``handoffs`` or ``agent_tools``."""
    spec: HandoffSpec | AgentToolSpec

    @property
    def tool_name(self) -> str:
        return self.spec.tool_name

    @property
    def spec_path(self) -> str:
        """Where the edge sits in the spec, e.g. ``agents.triage.handoffs[1]``."""
        field = "handoffs" if self.kind == "handoff" else "agent_tools"
        return f"agents.{self.source}.{field}[{self.index}]"

    @property
    def max_uses(self) -> int | None:
        return self.spec.max_uses if isinstance(self.spec, HandoffSpec) else None

    @property
    def gated(self) -> bool:
        """``is_enabled`` may hide the edge on some turn (drawn dashed)."""
        return is_gated(self.spec)


class WorkflowGraph:
    """The workflow as a graph, with the queries the analyzer and renderers need."""

    def __init__(
        self,
        spec: WorkflowSpec,
        bindings: Bindings | None = None,
        nearby_steps: tuple[str, ...] = (),
    ) -> None:
        self.spec = spec
        self.bindings = bindings if bindings is not None else Bindings({})
        self.nearby_steps = nearby_steps
        """Steps declared where the workflow was, in its flow or not: did-you-mean names."""
        with gc_paused():
            self._index(spec)
        self._nx: MultiDiGraph[str] | None = None
        self._facts: dict[str, StateFacts] | None = None
        self._flow_facts: dict[str, FlowFacts] | None = None
        self.derived: dict[Hashable, Any] = {}
        """What later stages work out from this graph, kept with it so that each is
        worked out once per graph however many stages ask (the lowered machine, a
        view's scene): the graph is frozen, so what it gives stays true. The keys are
        each stage's own; a stage never changes a value it finds here."""
        self._ungated: WorkflowGraph | None = None
        self._gated: bool | None = None

    def _index(self, spec: WorkflowSpec) -> None:
        agents: dict[str, AgentSpec] = {}
        for agent in spec.agents:
            agents.setdefault(agent.name, agent)
        dangling: list[Edge] = []
        out: dict[str, tuple[Edge, ...]] = {}
        for name, agent in agents.items():
            known: list[Edge] = []
            for edge in _edges_of(agent):
                (known if edge.target in agents else dangling).append(edge)
            out[name] = tuple(known)
        self._agents = agents
        self._out = out
        self._dangling = tuple(dangling)

    @property
    def nx(self) -> MultiDiGraph[str]:
        """The graph as a frozen networkx ``MultiDiGraph`` (built on first use): nodes
        are agent names with ``spec`` and ``entry`` attributes; edges carry ``kind``,
        ``tool_name``, ``max_uses`` and the ``edge`` itself, keyed ``"<kind>:<index>"``."""
        if self._nx is None:
            import networkx

            graph: MultiDiGraph[str] = networkx.MultiDiGraph()
            entry = self.spec.entry
            for name, agent in self._agents.items():
                graph.add_node(name, spec=agent, entry=name == entry)
            for edge in self.edges():
                graph.add_edge(
                    edge.source,
                    edge.target,
                    key=f"{edge.kind}:{edge.index}",
                    kind=edge.kind,
                    tool_name=edge.tool_name,
                    max_uses=edge.max_uses,
                    edge=edge,
                )
            self._nx = networkx.freeze(graph)
        return self._nx

    def facts(self) -> dict[str, StateFacts]:
        """What each agent can do (end a run, pause, run only nested), by name: the
        pass ``lower()`` stores in the IR (:mod:`stepswitch.graph.facts`), done once."""
        if self._facts is None:
            with gc_paused():
                self._facts = machine_facts(self.spec)
        return self._facts

    def flow_facts(self) -> dict[str, FlowFacts]:
        """What each node of the flow can do (is it reached, can a run end from it, can
        its run pause), by name; empty without a flow. ``lower()`` stores the same pass
        on the flow IR's nodes."""
        if self._flow_facts is None:
            self._flow_facts = flow_facts(self.spec, self.facts())
        return self._flow_facts

    def has_gates(self) -> bool:
        """Some tool, agent tool or handoff has an ``is_enabled`` other than True."""
        if self._gated is None:  # asked by several rules; the graph never changes
            self._gated = any(
                p.is_enabled is not True  # is_gated, inline: one pass over every part
                for a in self._agents.values()
                for parts in (a.tools, a.handoffs, a.agent_tools) for p in parts)
        return self._gated

    def ungated(self) -> WorkflowGraph:
        """The workflow with every gated part (``is_enabled`` not True) left out: the
        runs in which no gate opens. The analyzer reasons on both graphs (gated edges
        present, and absent); this one is made on first use."""
        if self._ungated is None:
            agents = tuple(
                a.model_copy(update={
                    "tools": tuple(t for t in a.tools if not is_gated(t)),
                    "handoffs": tuple(h for h in a.handoffs if not is_gated(h)),
                    "agent_tools": tuple(t for t in a.agent_tools if not is_gated(t)),
                }) if any(is_gated(p) for p in _parts(a))
                else a
                for a in self.spec.agents
            )
            self._ungated = WorkflowGraph(self.spec.model_copy(update={"agents": agents}),
                                          self.bindings, self.nearby_steps)
        return self._ungated

    @classmethod
    def from_built(cls, built: BuiltWorkflow) -> WorkflowGraph:
        return cls(built.spec, built.bindings, built.nearby_steps)

    # -- nodes --------------------------------------------------------------------------

    @property
    def entry(self) -> str | None:
        """The entry agent's name, when it names an agent of the workflow."""
        entry = self.spec.entry
        return entry if entry is not None and entry in self._agents else None

    def agent_names(self) -> tuple[str, ...]:
        """Agent names in declaration order (each once)."""
        return tuple(self._agents)

    def agent(self, name: str) -> AgentSpec:
        """The spec of the (first) agent of that name; ``KeyError`` if none."""
        return self._agents[name]

    def __contains__(self, name: object) -> bool:
        return name in self._agents

    def __len__(self) -> int:
        return len(self._agents)

    # -- edges --------------------------------------------------------------------------

    def edges(self, kind: EdgeKind | None = None) -> Iterator[Edge]:
        """Every edge whose target exists, in declaration order."""
        for edges in self._out.values():
            for edge in edges:
                if kind is None or edge.kind == kind:
                    yield edge

    def out_edges(self, name: str, kind: EdgeKind | None = None) -> tuple[Edge, ...]:
        """Edges leaving ``name`` whose target exists."""
        edges = self._out.get(name, ())
        if kind is None:
            return edges
        return tuple(e for e in edges if e.kind == kind)

    @property
    def dangling(self) -> tuple[Edge, ...]:
        """Edges whose target names no agent of the workflow."""
        return self._dangling

    def successors(self, name: str, kind: EdgeKind | None = None) -> tuple[str, ...]:
        """Distinct targets of ``name``'s edges, in declaration order."""
        seen: dict[str, None] = {}
        for edge in self.out_edges(name, kind):
            seen.setdefault(edge.target, None)
        return tuple(seen)

    def reachable(self, start: str | None = None) -> frozenset[str]:
        """Agents reachable from ``start`` (default: the entry) through any edge."""
        origin = start if start is not None else self.entry
        if origin is None or origin not in self._agents:
            return frozenset()
        names = list(self._agents)
        pos = {name: i for i, name in enumerate(names)}
        succ = [[pos[e.target] for e in self._out[name]] for name in names]
        seen = reach([pos[origin]], succ)
        return frozenset(name for name, hit in zip(names, seen, strict=True) if hit)

    def subgraph(self, kind: EdgeKind) -> DiGraph[str]:
        """A simple directed graph of one edge kind over all agents."""
        import networkx

        graph: DiGraph[str] = networkx.DiGraph()
        graph.add_nodes_from(self._agents)
        graph.add_edges_from((e.source, e.target) for e in self.edges(kind))
        return graph

    def summary(self) -> str:
        """One line: counts of agents, edges and tools (an edge to no agent counted, and
        said: the summary of a broken workflow must not read as if it had fewer)."""
        counts: dict[str, str] = {}
        kinds: tuple[tuple[EdgeKind, str], ...] = (
            ("handoff", "handoff(s)"), ("agent_tool", "agent tool(s)"))
        for kind, word in kinds:
            fine = sum(1 for _ in self.edges(kind))
            broken = sum(1 for e in self._dangling if e.kind == kind)
            counts[kind] = f"{fine + broken} {word}" + (
                f" ({broken} to no agent)" if broken else "")
        every = [t for a in self._agents.values() for t in a.tools]
        tools = sum(1 for t in every if t.opaque is None)
        approvals = sum(1 for t in every if t.opaque is None and t.needs_approval != "never")
        # an MCP server or computer tool read from an SDK app is no function tool, and a
        # hosted tool runs on OpenAI's side
        opaque = len(every) - tools
        hosted = sum(len(a.hosted_tools) for a in self._agents.values())
        others = f"{hosted} hosted tool(s) OpenAI runs, " if hosted else ""
        if opaque:
            others += f"{opaque} server or computer tool(s) stepswitch does not run, "
        return (
            f"workflow {self.spec.name!r}: {len(self._agents)} agent(s), entry "
            f"{self.spec.entry!r}, {counts['handoff']}, {counts['agent_tool']}, "
            f"{tools} function tool(s) ({approvals} need approval), {others}"
            f"max_turns={self.spec.max_turns}"
        )


def _parts(agent: AgentSpec) -> Iterator[ToolSpec | HandoffSpec | AgentToolSpec]:
    yield from agent.tools
    yield from agent.handoffs
    yield from agent.agent_tools


def _edges_of(agent: AgentSpec) -> Iterator[Edge]:
    """The agent's handoffs and agent tools a run can take: one whose ``is_enabled`` is
    the constant False is never offered, so it is no edge (SW107 finds an agent only it
    led to)."""
    for i, h in enumerate(agent.handoffs):
        if h.is_enabled is not False:
            yield Edge(agent.name, h.target, "handoff", i, h)
    for i, t in enumerate(agent.agent_tools):
        if t.is_enabled is not False:
            yield Edge(agent.name, t.target, "agent_tool", i, t)
