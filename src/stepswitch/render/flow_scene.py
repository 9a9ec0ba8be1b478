"""Diagrams of a flow: agents and steps, with their branches, routes, fan-outs and joins.

Both views draw the same shapes: a step is a subroutine box, a ``branch`` a decision
labelled with its predicate's name (``yes`` / ``no`` edges), a ``route`` a decision on
its field with one edge per case, a ``fan_out`` a trapezium (``each element``) whose
branches meet again at a ``join`` (results in element order). Edge budgets show as
``≤N``. The graph view reads the spec (so a broken flow still draws, with its
diagnostics on the nodes and decisions they concern); the machine view reads the flow
IR, the same data the interpreter and the generated runner read, and adds each agent
state's step switch (RunAgain, Interruption into ``paused``, resume). Which nodes can
pause, and a node the entry does not reach or from which no run can end, come from
the flow facts ``lower()`` stored (the graph view reads the same pass on the graph).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from stepswitch._dataclass import dataclass
from stepswitch.flow_ir import FlowExit, FlowFacts
from stepswitch.graph.spec import WorkflowSpec
from stepswitch.graph.workflow_graph import WorkflowGraph
from stepswitch.ir import MachineIR
from stepswitch.render.machine import runs_again
from stepswitch.render.scene import (
    END_ID,
    PAUSED_ID,
    START_ID,
    Mark,
    NodeKind,
    ReportLike,
    Scene,
    SceneEdge,
    SceneEdgeKind,
    SceneNode,
    _agent_lines,
    _agent_tool_label,
    _handoff_label,
    _severity,
    code_lines,
)

__all__ = ["build_flow_machine_scene", "build_flow_scene"]


@dataclass(slots=True)
class _Node:
    name: str
    kind: str  # agent | step | missing
    lines: list[str]
    exit: FlowExit | None
    exit_at: int | None = None
    """The index of the exit's edge in ``spec.flow`` (for diagnostics)."""


def _budget(label: str, ex: FlowExit) -> str:
    if ex.max_uses is None:
        return label
    return f"{label} ≤{ex.max_uses}".strip()


def _marks_by_path(report: ReportLike | None) -> dict[str, list[Mark]]:
    found: dict[str, list[Mark]] = {}
    if report is None:
        return found
    for d in report.diagnostics:
        path = str(getattr(d.location, "path", "") or "")
        found.setdefault(path, []).append(
            Mark(str(d.code), _severity(d.severity), str(d.message)))
    return found


def _draw(
    title: str,
    entry: str | None,
    nodes: dict[str, _Node],
    *,
    marks: dict[str, list[Mark]],
    view: str,
    extra_edges: Iterable[SceneEdge] = (),
    paused: Sequence[str] = (),
    runs_again: Sequence[str] = (),
) -> Scene:
    ids = {name: f"f{i}" for i, name in enumerate(nodes)}
    workflow_marks = [m for p, ms in marks.items() if p in ("workflow", "workflow.entry")
                      for m in ms]
    scene_nodes = [SceneNode(START_ID, "start", "start", code_lines(workflow_marks),
                             marks=tuple(workflow_marks))]
    edges: list[SceneEdge] = []
    if entry is not None and entry in ids:
        edges.append(SceneEdge(START_ID, ids[entry], "start"))
    extra: list[SceneNode] = []

    def to(name: str | None) -> str:
        return END_ID if name is None else ids[name]

    for name, node in nodes.items():
        nid = ids[name]
        own = marks.get(f"steps.{name}", []) + marks.get(f"agents.{name}", [])
        kind: NodeKind = (
            "agent" if node.kind == "agent" else "step" if node.kind == "step" else "missing")
        scene_nodes.append(SceneNode(
            nid, kind, name if kind != "missing" else f"? {name}",
            tuple(node.lines) + code_lines(own), name == entry, marks=tuple(own)))
        ex = node.exit
        if ex is None:
            continue
        at = node.exit_at
        exit_marks = tuple(marks.get(f"flow[{at}]", [])) if at is not None else ()
        did = f"d{len(extra)}"
        if ex.kind == "then":
            # the machine view names the step: a move to the next node is a flow edge
            # (`then`), drawn like branch/route/fan-out edges, not as a Handoff between
            # agents of one run
            label = _budget("", ex) if view == "graph" else _budget(
                "Final" if ex.target is None else "then", ex)
            edges.append(SceneEdge(nid, to(ex.target), "final" if ex.target is None else "flow",
                                   _codes(label, exit_marks), marks=exit_marks))
        elif ex.kind == "branch":
            pred = (ex.predicate or "?").rsplit(":", 1)[-1].rsplit(".", 1)[-1]
            extra.append(SceneNode(did, "branch", f"{pred}?", code_lines(exit_marks),
                                   marks=exit_marks))
            edges.append(SceneEdge(nid, did, "flow"))
            edges.append(SceneEdge(did, to(ex.target), "flow", _budget("yes", ex)))
            edges.append(SceneEdge(did, to(ex.otherwise), "flow", _budget("no", ex)))
        elif ex.kind == "route":
            extra.append(SceneNode(did, "route", f"route on {ex.field}",
                                   code_lines(exit_marks), marks=exit_marks))
            edges.append(SceneEdge(nid, did, "flow"))
            by_target: dict[str | None, list[str]] = {}
            for value, target in ex.cases:
                by_target.setdefault(target, []).append(value)
            for target, values in by_target.items():
                edges.append(SceneEdge(did, to(target), "flow", _budget(" | ".join(values), ex)))
        else:
            lines = [f"≤{ex.max_items} items" if ex.max_items is not None else "unbounded"]
            if ex.concurrency is not None:
                lines.append(f"{ex.concurrency} at once")
            extra.append(SceneNode(did, "fan_out", f"fan out over {ex.field}",
                                   tuple(lines) + code_lines(exit_marks), marks=exit_marks))
            jid = f"j{len(extra)}"
            # named for its fan-out, so that a step of the flow called "join" is not drawn
            # as a second node of the same name
            extra.append(SceneNode(jid, "join", f"join of {ex.field}",
                                   ("results in element order",)))
            edges.append(SceneEdge(nid, did, "flow"))
            if ex.each is not None and ex.each in ids:
                edges.append(SceneEdge(did, ids[ex.each], "flow", "each element"))
                edges.append(SceneEdge(ids[ex.each], jid, "flow"))
            edges.append(SceneEdge(jid, to(ex.target), "final" if ex.target is None else "flow",
                                   "" if view == "graph" or ex.target else "Final"))
    for name in runs_again:
        edges.append(SceneEdge(ids[name], ids[name], "run_again", "RunAgain"))
    if paused:
        extra.append(SceneNode(PAUSED_ID, "paused", "paused", ("awaiting approval",)))
        for name in paused:
            edges.append(SceneEdge(ids[name], PAUSED_ID, "interrupt", "Interruption"))
            edges.append(SceneEdge(PAUSED_ID, ids[name], "resume", "resume"))
    edges.extend(extra_edges)
    scene_nodes.extend(extra)
    scene_nodes.append(SceneNode(END_ID, "end", "end"))
    return Scene(title, tuple(scene_nodes), tuple(edges),
                 view="graph" if view == "graph" else "machine")


def _fact_lines(facts: FlowFacts) -> list[str]:
    """What the node's stored facts say that a diagram must not hide."""
    lines = [] if facts.reachable else ["unreachable from the entry"]
    if not facts.can_end:
        lines.append("no run from here can end")
    return lines


def _codes(label: str, found: Sequence[Mark]) -> str:
    return label + "".join(f" [{m.code}]" for m in found)


def _exit_of(spec: WorkflowSpec, k: int) -> FlowExit:
    e = (spec.flow or ())[k]
    return FlowExit(
        kind=e.kind, target=e.target, otherwise=e.otherwise,
        predicate=e.predicate.path if e.predicate is not None else None, field=e.field,
        cases=tuple((c.value, c.target) for c in e.cases), each=e.each,
        max_items=e.max_items, concurrency=e.concurrency, max_uses=e.max_uses)


def build_flow_scene(graph: WorkflowGraph, *, report: ReportLike | None = None) -> Scene:
    """The graph view of a workflow with a flow (drawn from the spec)."""
    spec = graph.spec
    steps = {s.name: s for s in reversed(spec.steps)}
    order: list[str] = []
    if spec.entry is not None:
        order.append(spec.entry)
    for e in spec.flow or ():
        order.extend(n for n in (e.source, *e.targets(), e.each) if n is not None)
    nodes: dict[str, _Node] = {}
    for name in order:
        if name in nodes:
            continue
        if name in steps:
            s = steps[name]
            lines = [f"step: {s.input_type.display or 'value'} → "
                     f"{s.output_type.display or 'value'}"]
            if s.is_async:
                lines.append("async")
            nodes[name] = _Node(name, "step", lines, None)
        elif name in graph:
            nodes[name] = _Node(name, "agent", _agent_lines(
                graph.agent(name), list_tools=True, tool_marks={}), None)
        else:
            nodes[name] = _Node(name, "missing", ["names no agent or step"], None)
    for k, e in enumerate(spec.flow or ()):
        node = nodes[e.source]
        if node.exit is None:
            node.exit, node.exit_at = _exit_of(spec, k), k
    if spec.entry is not None:
        for name, facts in graph.flow_facts().items():
            if nodes[name].kind != "missing":
                nodes[name].lines.extend(_fact_lines(facts))
    # agents the flow's agents reach by handoffs and agent tools are drawn too
    extra_edges: list[SceneEdge] = []
    queue = deque(n for n, node in nodes.items() if node.kind == "agent")
    seen = set(queue)
    while queue:
        name = queue.popleft()
        agent = graph.agent(name)
        targets: list[tuple[str, SceneEdgeKind, str, bool]] = [
            (h.target, "handoff", _handoff_label(h), False) for h in agent.handoffs]
        targets += [(t.target, "agent_tool", _agent_tool_label(t), t.needs_approval != "never")
                    for t in agent.agent_tools]
        for target, kind, label, pause in targets:
            if target not in graph:
                continue
            if target not in nodes:
                nodes[target] = _Node(target, "agent", _agent_lines(
                    graph.agent(target), list_tools=True, tool_marks={}), None)
            if target not in seen:
                seen.add(target)
                queue.append(target)
            extra_edges.append(SceneEdge(name, target, kind, label, pause))
    scene = _draw(spec.name, spec.entry, nodes, marks=_marks_by_path(report), view="graph")
    return _with_agent_edges(scene, nodes, extra_edges)


def _with_agent_edges(scene: Scene, nodes: dict[str, _Node], edges: list[SceneEdge]) -> Scene:
    if not edges:
        return scene
    ids = {name: f"f{i}" for i, name in enumerate(nodes)}
    moved = tuple(e._replace(source=ids[e.source], target=ids[e.target]) for e in edges)
    return Scene(scene.title, scene.nodes, scene.edges + moved, scene.view)


def build_flow_machine_scene(ir: MachineIR, *, report: ReportLike | None = None) -> Scene:
    """The machine view of a flow (drawn from the IR): each node's step switch."""
    flow = ir.flow
    assert flow is not None
    states = {s.agent: s for s in ir.states}
    nodes: dict[str, _Node] = {}
    looping: list[str] = []
    paused: list[str] = []
    for n in flow.nodes:
        if n.kind == "step":
            nodes[n.name] = _Node(n.name, "step", ["step: runs once, no model call",
                                                   *_fact_lines(n.facts)], n.exit)
            continue
        state = states.get(n.name)
        lines = ["agent run: its own step switch"]
        if state is not None:
            out = state.output
            lines.append(f"output: {out.name or out.type_ref}" if out.kind == "typed"
                         else "output: text")
            if runs_again(state):
                looping.append(n.name)
        if n.facts.can_pause:
            paused.append(n.name)
        nodes[n.name] = _Node(n.name, "agent", lines + _fact_lines(n.facts), n.exit)
    return _draw(ir.name, flow.entry, nodes, marks=_marks_by_path(report), view="machine",
                 paused=paused, runs_again=looping)
