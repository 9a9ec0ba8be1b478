"""The scene: what a diagram shows, before any syntax.

A :class:`Scene` is built once from a :class:`~stepswitch.graph.WorkflowGraph` (and an
optional analyzer report) and holds every node and edge with its kind, label lines and
highlights. The Mermaid and DOT writers only translate it, so both formats always
show the same thing. Order is the declaration order of the spec, so the same workflow
gives the same scene and the same bytes. Node ids are derived (``a0``, ``t3``, ``m1``),
never taken from user text; user strings only ever reach a writer as label text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Literal, NamedTuple, Protocol

from stepswitch._dataclass import dataclass
from stepswitch.graph.spec import AgentSpec, AgentToolSpec, HandoffSpec, HostedToolSpec, ToolSpec
from stepswitch.graph.workflow_graph import WorkflowGraph

__all__ = [
    "DISABLED",
    "GATED",
    "DiagnosticLike",
    "LocationLike",
    "Mark",
    "NodeKind",
    "PlacedMarks",
    "ReportLike",
    "Scene",
    "SceneEdge",
    "SceneEdgeKind",
    "SceneGroup",
    "SceneNode",
    "Severity",
    "build_scene",
    "code_lines",
    "sort_marks",
]

NodeKind = Literal[
    "start", "end", "agent", "missing", "tool", "paused", "step", "branch", "route",
    "fan_out", "join",
]
"""``missing``: a handoff or agent-tool target that names no agent of the workflow;
``paused``: where a run waits for a human's approval (machine view); the last five are
a flow's: a ``@step``, a branch or route decision, a fan-out and its join."""

SceneEdgeKind = Literal[
    "start", "final", "handoff", "agent_tool", "tool", "interrupt", "resume", "run_again",
    "flow",
]
"""``interrupt``, ``resume`` and ``run_again`` belong to the machine view: Interruption,
resuming after approval, and RunAgain (another model call in the same state); ``flow``
is a flow's move from one node to the next."""

from stepswitch._severity import Severity  # noqa: E402  (re-exported here)

_SEVERITY_RANK: dict[str, int] = {"error": 3, "warning": 2, "info": 1}

START_ID = "n_start"
END_ID = "n_end"
PAUSED_ID = "n_paused"


class LocationLike(Protocol):
    """Where a diagnostic points: ``path`` into the spec (``agents.triage.handoffs[1]``)."""

    @property
    def path(self) -> str: ...


class DiagnosticLike(Protocol):
    """What the renderer needs of one diagnostic of an analyzer report."""

    @property
    def code(self) -> str: ...

    @property
    def severity(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def location(self) -> LocationLike: ...


class ReportLike(Protocol):
    """Any report with diagnostics (``stepswitch.Report`` is one)."""

    @property
    def diagnostics(self) -> Sequence[DiagnosticLike]: ...


@dataclass(frozen=True, slots=True)
class Mark:
    """A diagnostic drawn on the element it concerns."""

    code: str
    severity: Severity
    message: str


class SceneNode(NamedTuple):
    """One box of the diagram. (A named tuple: immutable and cheap to build, since a
    10,000-agent workflow makes tens of thousands of them.)"""

    id: str
    kind: NodeKind
    title: str
    lines: tuple[str, ...] = ()
    """Detail lines under the title (output type, tools, guardrails, settings)."""
    entry: bool = False
    pause: bool = False
    """A tool node that needs a human's approval (a point where a run can pause)."""
    nested_only: bool = False
    """An agent that only ever runs nested, inside an agent-tool call."""
    marks: tuple[Mark, ...] = ()
    group: str = ""
    """The id of the :class:`SceneGroup` drawn around this node ("": none)."""

    @property
    def severity(self) -> Severity | None:
        return _worst(self.marks)


class SceneGroup(NamedTuple):
    """A box drawn around nodes: the tools of one MCP server."""

    id: str
    title: str


class SceneEdge(NamedTuple):
    """One arrow of the diagram."""

    source: str
    target: str
    kind: SceneEdgeKind
    label: str = ""
    pause: bool = False
    """An agent-tool call that needs a human's approval."""
    marks: tuple[Mark, ...] = ()
    gated: bool = False
    """A handoff or agent tool ``is_enabled`` may hide on some turn: drawn dashed."""

    @property
    def severity(self) -> Severity | None:
        return _worst(self.marks)


GATED = " [if enabled]"
"""What a label says of a part ``is_enabled`` may hide (its edge is dashed too)."""
DISABLED = " [disabled]"
"""What a label says of a part whose ``is_enabled`` is False: never offered (dashed,
and no run takes it)."""


def _gate_text(enabled: object) -> str:
    return "" if enabled is True else DISABLED if enabled is False else GATED


@dataclass(frozen=True, slots=True)
class Scene:
    """Everything one diagram shows, in drawing order."""

    title: str
    nodes: tuple[SceneNode, ...]
    edges: tuple[SceneEdge, ...]
    view: Literal["graph", "machine"] = "graph"
    groups: tuple[SceneGroup, ...] = ()
    """The boxes some nodes are drawn in (``SceneNode.group``), in drawing order."""

    def in_groups(self) -> list[tuple[SceneGroup | None, list[SceneNode]]]:
        """The nodes in drawing order, each group's gathered where its first node is:
        ``(None, [node])`` for a node outside any box, ``(group, members)`` for a box."""
        members: dict[str, list[SceneNode]] = {}
        for node in self.nodes:
            if node.group:
                members.setdefault(node.group, []).append(node)
        by_id = {group.id: group for group in self.groups}
        out: list[tuple[SceneGroup | None, list[SceneNode]]] = []
        for node in self.nodes:
            if not node.group:
                out.append((None, [node]))
            elif (inside := members.pop(node.group, None)) is not None:
                out.append((by_id[node.group], inside))
        return out


def _worst(marks: Sequence[Mark]) -> Severity | None:
    if not marks:
        return None
    worst: Severity | None = None
    for mark in marks:
        if worst is None or _SEVERITY_RANK[mark.severity] > _SEVERITY_RANK[worst]:
            worst = mark.severity
    return worst


# -- building -----------------------------------------------------------------------------


@dataclass
class PlacedMarks:
    """Diagnostics sorted by the element they concern."""

    workflow: list[Mark] = field(default_factory=list)
    agents: dict[str, list[Mark]] = field(default_factory=dict)
    edges: dict[tuple[str, str, int], list[Mark]] = field(default_factory=dict)
    """Keyed by (agent, "handoffs" | "agent_tools" | "tools", index)."""


def _severity(value: object) -> Severity:
    text = str(getattr(value, "value", value)).lower()
    if text in ("error", "warning", "info"):
        return text  # type: ignore[return-value]
    return "info" if text in ("note", "notice", "hint") else "warning"


def sort_marks(
    names: Sequence[str],
    report: ReportLike | None,
    size_of: Callable[[str, str], int] | None = None,
) -> PlacedMarks:
    """The report's diagnostics sorted by the element (of agents ``names``) they concern.

    ``size_of(agent, field)`` gives how many ``handoffs`` / ``agent_tools`` / ``tools``
    an agent has; a path whose index is past the end goes on the agent instead.
    """
    marks = PlacedMarks()
    if report is None:
        return marks
    name_set = frozenset(names)
    for diag in report.diagnostics:
        mark = Mark(str(diag.code), _severity(diag.severity), str(diag.message))
        location = getattr(diag, "location", None)
        path = str(getattr(location, "path", "") or "")
        _place(marks, mark, path, name_set, size_of)
    return marks


def _agent_in(rest: str, names: frozenset[str]) -> str | None:
    """The longest agent name that ``rest`` starts with, followed by ``.``, ``[`` or
    nothing (agent names may themselves hold dots and brackets)."""
    if rest in names:
        return rest
    best: str | None = None
    for i, ch in enumerate(rest):
        if ch in ".[" and rest[:i] in names:
            best = rest[:i]
    return best


def _place(
    marks: PlacedMarks,
    mark: Mark,
    path: str,
    names: frozenset[str],
    size_of: Callable[[str, str], int] | None,
) -> None:
    """Attach ``mark`` to the element ``path`` names; anything unplaceable goes on the
    workflow (the start node), so no diagnostic is ever dropped."""
    agent = _agent_in(path[len("agents."):], names) if path.startswith("agents.") else None
    if agent is None:
        marks.workflow.append(mark)
        return
    tail = path[len("agents.") + len(agent):]
    for field_name in ("handoffs", "agent_tools", "tools"):
        prefix = f".{field_name}["
        if tail.startswith(prefix):
            index_text, _, _ = tail[len(prefix):].partition("]")
            if index_text.isdigit() and (
                size_of is None or int(index_text) < size_of(agent, field_name)
            ):
                key = (agent, field_name, int(index_text))
                marks.edges.setdefault(key, []).append(mark)
                return
    marks.agents.setdefault(agent, []).append(mark)


def _handoff_label(spec: HandoffSpec) -> str:
    label = spec.tool_name if spec.max_uses is None else f"{spec.tool_name} ≤{spec.max_uses}"
    label += _gate_text(spec.is_enabled)
    if spec.input_type is None and spec.input_filter is None:
        return label
    if spec.input_type is not None:
        label += f" input: {spec.input_type.display or spec.input_type.path}"
    if spec.input_filter is not None:
        label += f" filter: {spec.input_filter.display or spec.input_filter.path}"
    return label


def _agent_tool_label(spec: AgentToolSpec) -> str:
    parts = [spec.tool_name]
    if spec.max_turns is not None:
        parts.append(f"turns ≤{spec.max_turns}")
    if spec.max_depth is not None:
        parts.append(f"depth ≤{spec.max_depth}")
    if spec.output_extractor is not None:
        parts.append(f"extract: {spec.output_extractor.display or spec.output_extractor.path}")
    if spec.needs_approval != "never":
        parts.append("[approval]")
    if spec.is_enabled is not True:
        parts.append(_gate_text(spec.is_enabled).strip())
    return " ".join(parts)


def _tool_text(tool: ToolSpec) -> str:
    text = tool.name if tool.namespace is None else f"{tool.namespace}.{tool.name}"
    if tool.defer_loading:
        text += " [deferred]"
    if tool.needs_approval == "always":
        text += " [approval]"
    elif tool.needs_approval == "per_call":
        text += " [approval per call]"
    text += _gate_text(tool.is_enabled)
    if tool.input_guardrails or tool.output_guardrails:
        # drawn on the tool they guard: every call passes them
        guards = [f"in: {g.name}" for g in tool.input_guardrails]
        guards += [f"out: {g.name}" for g in tool.output_guardrails]
        text += f" [guard {', '.join(guards)}]"
    return text


def _hosted_text(tool: HostedToolSpec) -> str:
    """A hosted tool as drawn: its name and that OpenAI runs it."""
    what = "hosted MCP" if tool.kind == "mcp" else "hosted"
    return f"{tool.name} [{what}]"


def code_lines(marks: Sequence[Mark]) -> tuple[str, ...]:
    return tuple(f"{m.severity} {m.code}" for m in marks)


def _agent_lines(agent: AgentSpec, *, list_tools: bool, tool_marks: dict[int, list[Mark]]
                 ) -> list[str]:
    lines: list[str] = []
    if agent.output_type is not None:
        lines.append(f"output: {agent.output_type.ref.display or agent.output_type.ref.path}")
    if agent.model is not None:
        lines.append(f"model: {agent.model}")
    if agent.model_settings:
        choice = agent.model_settings.get("tool_choice")
        if choice is not None and choice != "auto":
            lines.append(f"tool_choice: {choice}")
    behavior = agent.tool_use_behavior
    if behavior.kind == "stop_on_first_tool":
        lines.append("stops on first tool")
    elif behavior.kind == "stop_at_tools":
        lines.append(f"stops at: {', '.join(behavior.tool_names)}")
    elif behavior.kind == "function":
        shown = behavior.ref.display or behavior.ref.path if behavior.ref else "a function"
        lines.append(f"after tools: {shown}")
    for guard in agent.input_guardrails:
        lines.append(f"guard in: {guard.name}")
    for guard in agent.output_guardrails:
        lines.append(f"guard out: {guard.name}")
    if list_tools:
        for i, tool in enumerate(agent.tools):
            found = tool_marks.get(i)
            codes = "".join(f" [{m.code}]" for m in found) if found else ""
            # an MCP tool is listed under its server (they come server by server)
            kind = "tool" if tool.mcp_server is None else f"mcp {tool.mcp_server}"
            lines.append(f"{kind}: {_tool_text(tool)}{codes}")
        for hosted in agent.hosted_tools:
            lines.append(f"tool: {_hosted_text(hosted)}")
    return lines


def _group_title(agent: AgentSpec, server: str) -> str:
    for spec in agent.mcp_servers:
        if spec.name == server:
            return f"MCP server {server} ({spec.transport.replace('_', ' ')})"
    return f"MCP server {server}"


def build_scene(
    graph: WorkflowGraph, *, tools: bool = False, report: ReportLike | None = None
) -> Scene:
    """The graph view of a workflow: start, agents, end, and every edge between them.

    ``tools=True`` draws function tools as nodes of their own (one per tool, shared
    by the agents that list it) instead of listing them inside their agent; an MCP
    server's tools are drawn in a box of that server (one per server name).
    ``report`` highlights each diagnostic on the element its path names. A workflow
    with a flow is drawn as its flow (:mod:`~stepswitch.render.flow_scene`).
    """
    if graph.spec.flow is not None:
        from stepswitch.render.flow_scene import build_flow_scene

        return build_flow_scene(graph, report=report)
    marks = sort_marks(
        graph.agent_names(), report, lambda name, field: len(getattr(graph.agent(name), field))
    )
    names = graph.agent_names()
    ids = {name: f"a{i}" for i, name in enumerate(names)}
    facts = graph.facts()
    no_marks: list[Mark] = []
    entry = graph.entry

    nodes: list[SceneNode] = [
        SceneNode(
            START_ID,
            "start",
            "start",
            code_lines(marks.workflow),
            marks=tuple(marks.workflow),
        )
    ]
    edges: list[SceneEdge] = []
    if entry is not None:
        edges.append(SceneEdge(START_ID, ids[entry], "start"))

    missing: dict[str, str] = {}
    tool_nodes: dict[tuple[str, str, str], SceneNode] = {}
    groups: dict[str, SceneGroup] = {}
    tool_marks: dict[str, list[Mark]] = {}
    tool_edges: list[SceneEdge] = []
    end_edges: list[SceneEdge] = []
    agent_nodes: list[SceneNode] = []

    any_marks = bool(marks.agents or marks.edges)
    for name in names:
        agent = graph.agent(name)
        aid = ids[name]
        fact = facts[name]
        nested_only = fact.nested_only
        if any_marks:
            own_tool_marks = {
                i: found
                for i in range(len(agent.tools))
                if (found := marks.edges.get((name, "tools", i)))
            }
            agent_marks = list(marks.agents.get(name, no_marks))
            if not tools:
                for found in own_tool_marks.values():
                    agent_marks.extend(found)
        else:
            own_tool_marks = {}
            agent_marks = no_marks
        lines = _agent_lines(agent, list_tools=not tools, tool_marks=own_tool_marks)
        if nested_only:
            lines.append("nested run: returns to caller")
        if any_marks:
            lines.extend(code_lines(marks.agents.get(name, no_marks)))
        # Positional arguments: this loop runs once per agent of very large workflows.
        agent_nodes.append(
            SceneNode(aid, "agent", name, tuple(lines), name == entry, False, nested_only,
                      tuple(agent_marks) if agent_marks else ())
        )
        for i, h in enumerate(agent.handoffs):
            label = _handoff_label(h)
            target = ids.get(h.target) or _missing_id(h.target, missing)
            gated = h.is_enabled is not True
            if any_marks and (found := marks.edges.get((name, "handoffs", i))):
                edges.append(SceneEdge(aid, target, "handoff", _with_codes(label, found), False,
                                       tuple(found), gated))
            elif gated:
                edges.append(SceneEdge(aid, target, "handoff", label, gated=True))
            else:
                edges.append(SceneEdge(aid, target, "handoff", label))
        for i, t in enumerate(agent.agent_tools):
            found = marks.edges.get((name, "agent_tools", i), no_marks) if any_marks else no_marks
            edges.append(
                SceneEdge(
                    aid,
                    ids.get(t.target) or _missing_id(t.target, missing),
                    "agent_tool",
                    _with_codes(_agent_tool_label(t), found),
                    t.needs_approval != "never",
                    tuple(found),
                    t.is_enabled is not True,
                )
            )
        if tools:
            for i, tool in enumerate(agent.tools):
                key = (tool.ref.path, tool.name, _tool_text(tool))
                node = tool_nodes.get(key)
                if node is None:
                    group = ""
                    if tool.mcp_server is not None:
                        found_group = groups.get(tool.mcp_server)
                        if found_group is None:
                            found_group = groups[tool.mcp_server] = SceneGroup(
                                f"g{len(groups)}", _group_title(agent, tool.mcp_server))
                        group = found_group.id
                    node = SceneNode(
                        f"t{len(tool_nodes)}",
                        "tool",
                        _tool_text(tool),
                        pause=tool.needs_approval != "never",
                        group=group,
                    )
                    tool_nodes[key] = node
                    tool_marks[node.id] = []
                found = own_tool_marks.get(i, no_marks)
                tool_marks[node.id].extend(found)
                tool_edges.append(SceneEdge(aid, node.id, "tool", marks=tuple(found),
                                            gated=tool.is_enabled is not True))
            for hosted in agent.hosted_tools:  # one node per hosted tool, run by OpenAI
                key = ("hosted:" + hosted.kind, hosted.name, "never")
                node = tool_nodes.get(key)
                if node is None:
                    node = SceneNode(f"t{len(tool_nodes)}", "tool", _hosted_text(hosted),
                                     ("runs on OpenAI's side",))
                    tool_nodes[key] = node
                    tool_marks[node.id] = []
                tool_edges.append(SceneEdge(aid, node.id, "tool"))
        if not nested_only:
            answers, stops = fact.answers, fact.stops
            if answers:
                end_edges.append(SceneEdge(aid, END_ID, "final",
                                           "or tool output" if stops else ""))
            elif stops:
                end_edges.append(SceneEdge(aid, END_ID, "final", "tool output"))

    nodes.extend(agent_nodes)
    nodes.extend(
        SceneNode(mid, "missing", f"? {target}", ("unknown agent",))
        for target, mid in missing.items()
    )
    for node in tool_nodes.values():
        found = tool_marks[node.id]
        nodes.append(
            SceneNode(
                node.id, "tool", node.title, node.lines + code_lines(found), pause=node.pause,
                marks=tuple(found), group=node.group,
            )
        )
    nodes.append(SceneNode(END_ID, "end", "end"))
    edges.extend(tool_edges)
    edges.extend(end_edges)
    return Scene(graph.spec.name, tuple(nodes), tuple(edges), groups=tuple(groups.values()))


def _with_codes(label: str, found: Sequence[Mark]) -> str:
    if not found:
        return label
    return label + "".join(f" [{m.code}]" for m in found)


def _missing_id(target: str, missing: dict[str, str]) -> str:
    if target not in missing:
        missing[target] = f"m{len(missing)}"
    return missing[target]
