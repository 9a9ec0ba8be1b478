"""The position graph the SW8xx policies and the SW9xx cost bound search (see
``policies``): an agent's turn or a flow node as a position, its handoffs, agent tools,
flow node runs and flow edges as steps, built once per analysis."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from stepswitch.analysis._context import Ctx, where
from stepswitch.analysis.diagnostic import TraceStep
from stepswitch.graph.spec import AgentSpec, FlowEdgeSpec, WorkflowSpec

__all__ = ["RunGraph", "run_graph"]

Lazy = tuple[str, str, int]
"""A handoff (``"h"``) or agent tool (``"t"``) of an agent, by position: made into a
trace step only when it lies on a printed path (10,000 agents have many edges)."""

Step = tuple[str, TraceStep | Lazy, str | None]
"""An edge of the position graph: target, the trace step taking it, and why code
(not the model) decides it (None: the model or nothing decides)."""


class RunGraph:
    """The position graph of one workflow, built once per analysis."""

    def __init__(self, spec: WorkflowSpec) -> None:
        self.spec = spec
        self.agents: dict[str, AgentSpec] = {}
        for agent in spec.agents:
            self.agents.setdefault(agent.name, agent)
        self.steps = {s.name: s for s in spec.steps}
        self.succ: dict[str, list[Step]] = {}
        for name, agent in self.agents.items():
            out: list[Step] = []
            # a part whose is_enabled is the constant False is never offered: no step
            for i, h in enumerate(agent.handoffs):
                if h.target in self.agents and h.is_enabled is not False:
                    out.append((f"a:{h.target}", ("h", name, i), None))
            for i, t in enumerate(agent.agent_tools):
                if t.target in self.agents and t.is_enabled is not False:
                    out.append((f"a:{t.target}", ("t", name, i), None))
            self.succ[f"a:{name}"] = out
        self.offering: dict[str, list[str]] = {}
        """Per tool name, the agents that offer it (as a function or agent tool)."""
        for name, agent in self.agents.items():
            for ft in agent.tools:
                if ft.is_enabled is not False:
                    self.offering.setdefault(ft.name, []).append(name)
            for at in agent.agent_tools:
                if at.is_enabled is not False:
                    self.offering.setdefault(at.tool_name, []).append(name)
        self.entry: str | None = None
        self._reachable: set[str] | None = None
        self.covers: dict[str, dict[str, frozenset[str]]] = {}
        """Per policy target, what it covers (:func:`covered`)."""
        if spec.flow is not None:
            self._flow(spec, spec.flow)
        elif spec.entry is not None and spec.entry in self.agents:
            self.entry = f"a:{spec.entry}"

    def _flow(self, spec: WorkflowSpec, flow: Sequence[FlowEdgeSpec]) -> None:
        nodes = {*self.agents, *self.steps}
        for name in nodes:
            out: list[Step] = []
            if name in self.agents:
                agent = self.agents[name]
                out.append((f"a:{name}", TraceStep(
                    f"flow node {name!r} runs its agent", where(agent.location,
                                                                f"agents.{name}")), None))
            self.succ[f"n:{name}"] = out
        for i, edge in enumerate(flow):
            src = f"n:{edge.source}"
            if src not in self.succ:
                continue
            loc = where(edge.location, f"flow[{i}]")
            by_step = edge.source in self.steps and edge.source not in self.agents
            decided_by = f"step {edge.source!r}'s output" if by_step else None
            pairs: list[tuple[str | None, str, str | None]] = []
            if edge.kind == "then":
                pairs.append((edge.target, f"flow: then {edge.target or 'END'}", None))
            elif edge.kind == "branch":
                pred = edge.predicate.display or edge.predicate.path if edge.predicate else "?"
                by_pred = f"the branch predicate {pred}"
                pairs.append((edge.target, f"flow: branch ({pred} holds) to "
                              f"{edge.target or 'END'}", by_pred))
                pairs.append((edge.otherwise, f"flow: branch ({pred} fails) to "
                              f"{edge.otherwise or 'END'}", by_pred))
            elif edge.kind == "route":
                for case in edge.cases:
                    pairs.append((case.target, f"flow: route {edge.field} == {case.value} to "
                                  f"{case.target or 'END'}", decided_by))
            else:
                pairs.append((edge.each, f"flow: fan out over {edge.field} to {edge.each}",
                               decided_by))
                pairs.append((edge.target, f"flow: fan-out results to "
                              f"{edge.target or 'END'}", None))
            for node, text, why in pairs:
                if node is not None and f"n:{node}" in self.succ:
                    self.succ[src].append((f"n:{node}", TraceStep(text, loc), why))
        if spec.entry is not None and f"n:{spec.entry}" in self.succ:
            self.entry = f"n:{spec.entry}"

    def reachable(self) -> set[str]:
        """Every position a run can reach from the entry (nested runs' included)."""
        if self._reachable is None:
            seen: set[str] = set()
            if self.entry is not None:
                seen.add(self.entry)
                queue = deque([self.entry])
                while queue:
                    node = queue.popleft()
                    for target, _, _ in self.succ.get(node, ()):
                        if target not in seen:
                            seen.add(target)
                            queue.append(target)
            self._reachable = seen
        return self._reachable

    def made(self, step: TraceStep | Lazy) -> TraceStep:
        if isinstance(step, TraceStep):
            return step
        kind, name, i = step
        agent = self.agents[name]
        if kind == "h":
            h = agent.handoffs[i]
            return TraceStep(f"hands off to {h.target!r} ({h.tool_name})",
                             where(h.location, f"agents.{name}.handoffs[{i}]"))
        t = agent.agent_tools[i]
        return TraceStep(f"calls agent tool {t.tool_name} (a nested run of {t.target!r})",
                         where(t.location, f"agents.{name}.agent_tools[{i}]"))

    def start_step(self, node: str) -> TraceStep:
        kind, name = node[0], node[2:]
        if kind == "a":
            agent = self.agents[name]
            return TraceStep(f"agent {name!r}", where(agent.location, f"agents.{name}"))
        step = self.steps.get(name)
        if step is not None:
            return TraceStep(f"flow step {name!r}", where(step.location, f"steps.{name}"))
        agent = self.agents[name]
        return TraceStep(f"flow node {name!r}", where(agent.location, f"agents.{name}"))

    def search(
        self,
        start: str,
        goal: Callable[[str], bool],
        *,
        decided_only: bool,
        avoid: frozenset[str] = frozenset(),
    ) -> tuple[str, list[TraceStep], list[str]] | None:
        """The shortest path from ``start`` to a position where ``goal`` holds, never
        entering ``avoid``: that position, its steps and the reasons code decides edges
        on it."""
        if start in avoid:
            return None
        parent: dict[str, tuple[str, TraceStep | Lazy, str | None] | None] = {start: None}
        queue = deque([start])
        succ = self.succ
        while queue:
            node = queue.popleft()
            if goal(node):
                steps: list[TraceStep] = []
                whys: list[str] = []
                cur = node
                while (link := parent[cur]) is not None:
                    prev, step, why = link
                    steps.append(self.made(step))
                    if why is not None:
                        whys.append(why)
                    cur = prev
                steps.append(self.start_step(start))
                steps.reverse()
                whys.reverse()
                return node, steps, whys
            for target, step, why in succ.get(node, ()):
                if target in parent or target in avoid or (decided_only and why is not None):
                    continue
                parent[target] = (node, step, why)
                queue.append(target)
        return None


def run_graph(ctx: Ctx) -> RunGraph:
    cached = ctx.memo.get("run_graph")
    if cached is None:
        cached = ctx.memo["run_graph"] = RunGraph(ctx.graph.spec)
    result: RunGraph = cached
    return result
