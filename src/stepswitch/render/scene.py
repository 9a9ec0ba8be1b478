"""The scene: what a diagram shows, before any syntax.

A :class:`Scene` is built once from a :class:`~stepswitch.graph.WorkflowGraph` (and an
optional analyzer report) and holds every node and edge with its kind, label lines and
highlights. The Mermaid and DOT writers only translate it, so both formats always
show the same thing. Order is the declaration order of the spec, so the same workflow
gives the same scene and the same bytes. Node ids are derived (``a0``, ``t3``, ``m1``),
never taken from user text; user strings only ever reach a writer as label text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from stepswitch.graph.spec import AgentSpec, AgentToolSpec, HandoffSpec, ToolSpec
from stepswitch.graph.workflow_graph import WorkflowGraph

__all__ = [
    "DiagnosticLike",
    "EdgeKind",
    "LocationLike",
    "Mark",
    "NodeKind",
    "ReportLike",
    "Scene",
    "SceneEdge",
    "SceneNode",
    "Severity",
    "build_scene",
    "can_finish",
]

NodeKind = Literal["start", "end", "agent", "missing", "tool"]
"""``missing``: a handoff or agent-tool target that names no agent of the workflow."""

EdgeKind = Literal["start", "final", "handoff", "agent_tool", "tool"]

Severity = Literal["error", "warning", "info"]

_SEVERITY_RANK: dict[str, int] = {"error": 3, "warning": 2, "info": 1}

START_ID = "n_start"
END_ID = "n_end"


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


@dataclass(frozen=True, slots=True)
class SceneNode:
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

    @property
    def severity(self) -> Severity | None:
        return _worst(self.marks)


@dataclass(frozen=True, slots=True)
class SceneEdge:
    source: str
    target: str
    kind: EdgeKind
    label: str = ""
    pause: bool = False
    """An agent-tool call that needs a human's approval."""
    marks: tuple[Mark, ...] = ()

    @property
    def severity(self) -> Severity | None:
        return _worst(self.marks)


@dataclass(frozen=True, slots=True)
class Scene:
    """Everything one diagram shows, in drawing order."""

    title: str
    nodes: tuple[SceneNode, ...]
    edges: tuple[SceneEdge, ...]
    view: Literal["graph", "machine"] = "graph"


def _worst(marks: Iterable[Mark]) -> Severity | None:
    worst: Severity | None = None
    for mark in marks:
        if worst is None or _SEVERITY_RANK[mark.severity] > _SEVERITY_RANK[worst]:
            worst = mark.severity
    return worst


def can_finish(agent: AgentSpec) -> tuple[bool, bool]:
    """Whether the agent can end its run: ``(by answering, by a tool that stops)``.

    An agent answers unless its model settings force a tool call every turn
    (``tool_choice`` "required" or a tool's name). A tool-use behaviour that stops
    ends the run with a tool's output instead.
    """
    choice = agent.model_settings.get("tool_choice")
    answers = choice is None or choice in ("auto", "none")
    behavior = agent.tool_use_behavior
    if behavior.kind == "run_llm_again":
        stops = False
    elif behavior.kind == "stop_at_tools":
        names = {t.name for t in agent.tools} | {t.tool_name for t in agent.agent_tools}
        stops = any(name in names for name in behavior.tool_names)
    else:  # stop_on_first_tool, or a function that may stop
        stops = bool(agent.tools or agent.agent_tools)
    return answers, stops


# -- building -----------------------------------------------------------------------------


@dataclass
class _Marks:
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


def _sort_marks(graph: WorkflowGraph, report: ReportLike | None) -> _Marks:
    marks = _Marks()
    if report is None:
        return marks
    names = graph.agent_names()
    for diag in report.diagnostics:
        mark = Mark(str(diag.code), _severity(diag.severity), str(diag.message))
        location = getattr(diag, "location", None)
        path = str(getattr(location, "path", "") or "")
        _place(marks, mark, path, names)
    return marks


def _place(marks: _Marks, mark: Mark, path: str, names: Sequence[str]) -> None:
    """Attach ``mark`` to the element ``path`` names; anything unplaceable goes on the
    workflow (the start node), so no diagnostic is ever dropped."""
    if not path.startswith("agents."):
        marks.workflow.append(mark)
        return
    rest = path[len("agents."):]
    # Agent names may contain dots: prefer the longest name that fits.
    best: str | None = None
    for name in names:
        if (rest == name or rest.startswith(name + ".") or rest.startswith(name + "[")) and (
            best is None or len(name) > len(best)
        ):
            best = name
    if best is None:
        marks.workflow.append(mark)
        return
    tail = rest[len(best):]
    for field_name in ("handoffs", "agent_tools", "tools"):
        prefix = f".{field_name}["
        if tail.startswith(prefix):
            index_text, _, _ = tail[len(prefix):].partition("]")
            if index_text.isdigit():
                key = (best, field_name, int(index_text))
                marks.edges.setdefault(key, []).append(mark)
                return
    marks.agents.setdefault(best, []).append(mark)


def _handoff_label(spec: HandoffSpec) -> str:
    return spec.tool_name if spec.max_uses is None else f"{spec.tool_name} ≤{spec.max_uses}"


def _agent_tool_label(spec: AgentToolSpec) -> str:
    parts = [spec.tool_name]
    if spec.max_turns is not None:
        parts.append(f"turns ≤{spec.max_turns}")
    if spec.max_depth is not None:
        parts.append(f"depth ≤{spec.max_depth}")
    if spec.needs_approval != "never":
        parts.append("[approval]")
    return " ".join(parts)


def _tool_text(tool: ToolSpec) -> str:
    if tool.needs_approval == "always":
        return f"{tool.name} [approval]"
    if tool.needs_approval == "per_call":
        return f"{tool.name} [approval per call]"
    return tool.name


def _code_lines(marks: Sequence[Mark]) -> tuple[str, ...]:
    return tuple(f"{m.severity} {m.code}" for m in marks)


def _agent_lines(agent: AgentSpec, *, list_tools: bool, tool_marks: dict[int, list[Mark]]
                 ) -> list[str]:
    lines: list[str] = []
    if agent.output_type is not None:
        lines.append(f"output: {agent.output_type.ref.display or agent.output_type.ref.path}")
    if agent.model is not None:
        lines.append(f"model: {agent.model}")
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
            codes = "".join(f" [{m.code}]" for m in tool_marks.get(i, ()))
            lines.append(f"tool: {_tool_text(tool)}{codes}")
    return lines


def _top_level(graph: WorkflowGraph) -> frozenset[str]:
    """Agents that can be current in the top-level run: the entry and what handoffs
    reach from it (an agent-tool call runs its target nested, and returns)."""
    entry = graph.entry
    if entry is None:
        return frozenset()
    seen = {entry}
    stack = [entry]
    while stack:
        for target in graph.successors(stack.pop(), "handoff"):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return frozenset(seen)


def build_scene(
    graph: WorkflowGraph, *, tools: bool = False, report: ReportLike | None = None
) -> Scene:
    """The graph view of a workflow: start, agents, end, and every edge between them.

    ``tools=True`` draws function tools as nodes of their own (one per tool, shared
    by the agents that list it) instead of listing them inside their agent.
    ``report`` highlights each diagnostic on the element its path names.
    """
    marks = _sort_marks(graph, report)
    names = graph.agent_names()
    ids = {name: f"a{i}" for i, name in enumerate(names)}
    top = _top_level(graph)
    reachable = graph.reachable()
    entry = graph.entry

    nodes: list[SceneNode] = [
        SceneNode(
            START_ID,
            "start",
            "start",
            _code_lines(marks.workflow),
            marks=tuple(marks.workflow),
        )
    ]
    edges: list[SceneEdge] = []
    if entry is not None:
        edges.append(SceneEdge(START_ID, ids[entry], "start"))

    missing: dict[str, str] = {}
    tool_nodes: dict[tuple[str, str, str], SceneNode] = {}
    tool_marks: dict[str, list[Mark]] = {}
    tool_edges: list[SceneEdge] = []
    end_edges: list[SceneEdge] = []
    agent_nodes: list[SceneNode] = []

    for name in names:
        agent = graph.agent(name)
        aid = ids[name]
        own_tool_marks: dict[int, list[Mark]] = {
            i: marks.edges.get((name, "tools", i), []) for i in range(len(agent.tools))
        }
        agent_marks = list(marks.agents.get(name, ()))
        if not tools:
            for i in range(len(agent.tools)):
                agent_marks.extend(own_tool_marks[i])
        nested_only = name in reachable and name not in top
        lines = _agent_lines(agent, list_tools=not tools, tool_marks=own_tool_marks)
        if nested_only:
            lines.append("nested run: returns to caller")
        lines.extend(_code_lines(marks.agents.get(name, ())))
        agent_nodes.append(
            SceneNode(
                aid,
                "agent",
                name,
                tuple(lines),
                entry=name == entry,
                nested_only=nested_only,
                marks=tuple(agent_marks),
            )
        )
        for i, h in enumerate(agent.handoffs):
            edges.append(
                SceneEdge(
                    aid,
                    _target_id(h.target, ids, missing),
                    "handoff",
                    _with_codes(_handoff_label(h), marks.edges.get((name, "handoffs", i), [])),
                    marks=tuple(marks.edges.get((name, "handoffs", i), ())),
                )
            )
        for i, t in enumerate(agent.agent_tools):
            found = marks.edges.get((name, "agent_tools", i), [])
            edges.append(
                SceneEdge(
                    aid,
                    _target_id(t.target, ids, missing),
                    "agent_tool",
                    _with_codes(_agent_tool_label(t), found),
                    pause=t.needs_approval != "never",
                    marks=tuple(found),
                )
            )
        if tools:
            for i, tool in enumerate(agent.tools):
                key = (tool.ref.path, tool.name, tool.needs_approval)
                node = tool_nodes.get(key)
                if node is None:
                    node = SceneNode(
                        f"t{len(tool_nodes)}",
                        "tool",
                        _tool_text(tool),
                        pause=tool.needs_approval != "never",
                    )
                    tool_nodes[key] = node
                    tool_marks[node.id] = []
                tool_marks[node.id].extend(own_tool_marks[i])
                tool_edges.append(
                    SceneEdge(aid, node.id, "tool", marks=tuple(own_tool_marks[i]))
                )
        if not nested_only:
            answers, stops = can_finish(agent)
            if answers or stops:
                label = "" if not stops else ("tool output" if not answers else "or tool output")
                end_edges.append(SceneEdge(aid, END_ID, "final", label))

    nodes.extend(agent_nodes)
    nodes.extend(
        SceneNode(mid, "missing", f"? {target}", ("unknown agent",))
        for target, mid in missing.items()
    )
    for node in tool_nodes.values():
        found = tool_marks[node.id]
        nodes.append(
            SceneNode(
                node.id, "tool", node.title, _code_lines(found), pause=node.pause,
                marks=tuple(found),
            )
        )
    nodes.append(SceneNode(END_ID, "end", "end"))
    edges.extend(tool_edges)
    edges.extend(end_edges)
    return Scene(graph.spec.name, tuple(nodes), tuple(edges))


def _with_codes(label: str, found: Sequence[Mark]) -> str:
    return label + "".join(f" [{m.code}]" for m in found)


def _target_id(target: str, ids: dict[str, str], missing: dict[str, str]) -> str:
    if target in ids:
        return ids[target]
    if target not in missing:
        missing[target] = f"m{len(missing)}"
    return missing[target]
