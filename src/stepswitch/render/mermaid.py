"""Mermaid flowchart text from a :class:`~stepswitch.render.scene.Scene`.

GitHub renders Mermaid blocks in Markdown, so this is the format for pull requests
and docs. Node ids come from the scene (``a0``, ``t1`` ...), never from user text;
every user string is written inside double quotes with the characters that Mermaid
or HTML would read as syntax replaced by Mermaid's ``#NN;`` entity codes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from stepswitch.render.scene import Scene, SceneEdge, SceneNode, Severity

__all__ = ["mermaid_escape", "scene_to_mermaid"]

# Characters that could end the quoted string, open an entity or HTML tag, start
# Markdown, or be read as a link label delimiter: written as #<code>; entities.
_ENTITY_CHARS = frozenset('"#%&<>\\`|')
_LINE_BREAKS = frozenset("\n\r\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e")
# One match per character to replace; "\r\n" counts as one line break.
_SPECIAL = re.compile('\r\n|["#%&<>\\\\`|\x00-\x1f\x7f\x85\u2028\u2029\ud800-\udfff]')

_LINE_SEP = "\u2028"

_CLASS_DEFS: dict[str, str] = {
    "terminal": "fill:#37474f,stroke:#37474f,color:#ffffff",
    "entry": "stroke-width:3px",
    "nested": "stroke-dasharray:5 3",
    "missing": "fill:#ffebee,stroke:#c62828,stroke-dasharray:5 3",
    "tool": "fill:#f1f8e9,stroke:#689f38",
    "step": "fill:#e8eaf6,stroke:#3949ab",
    "decision": "fill:#fffde7,stroke:#f9a825",
    "pause": "fill:#fff8e1,stroke:#f57f17,stroke-width:2px",
    "info": "stroke:#1565c0,stroke-width:2px",
    "warning": "fill:#fff3e0,stroke:#ef6c00,stroke-width:2px",
    "error": "fill:#ffebee,stroke:#c62828,stroke-width:3px",
}

_LINK_STYLES: dict[Severity, str] = {
    "info": "stroke:#1565c0,stroke-width:2px",
    "warning": "stroke:#ef6c00,stroke-width:2px",
    "error": "stroke:#c62828,stroke-width:3px",
}


def mermaid_escape(text: str) -> str:
    """``text`` made safe inside a double-quoted Mermaid label.

    Line breaks become ``<br/>``; other control characters become spaces; quotes,
    ``#``, ``%``, ``&``, ``<``, ``>``, backslashes, backticks and pipes become
    ``#NN;``. Everything else, unicode included, is kept as is.
    """
    if _SPECIAL.search(text) is None:
        return text
    return _SPECIAL.sub(_replace, text)


def _replace(match: re.Match[str]) -> str:
    ch = match.group()
    if "\ud800" <= ch <= "\udfff":  # a lone surrogate cannot be written: shown as its escape
        return f"#92;u{ord(ch):04x}"
    if ch[0] in _LINE_BREAKS:
        return "<br/>"
    if ch in _ENTITY_CHARS:
        return f"#{ord(ch)};"
    return " "


def _label(node: SceneNode) -> str:
    title = mermaid_escape(node.title)
    if node.kind == "agent":
        title = f"<b>{title}</b>"
    if not node.lines:
        return f'"{title}"'
    # One escaping pass over all lines: U+2028 is a line break, so it becomes <br/>.
    return f'"{title}<br/>{mermaid_escape(_LINE_SEP.join(node.lines))}"'


def _node(node: SceneNode) -> str:
    label = _label(node)
    if node.kind in ("start", "end"):
        return f"{node.id}([{label}])"
    if node.kind == "tool":
        return f"{node.id}{{{{{label}}}}}" if node.pause else f"{node.id}[/{label}/]"
    if node.kind == "paused":
        return f"{node.id}{{{{{label}}}}}"
    if node.kind == "step":
        return f"{node.id}[[{label}]]"
    if node.kind in ("branch", "route"):
        return f"{node.id}{{{label}}}"
    if node.kind == "fan_out":
        return f"{node.id}[/{label}\\]"
    if node.kind == "join":
        return f"{node.id}[\\{label}/]"
    return f"{node.id}[{label}]"


_ARROWS = {
    "start": "-->",
    "final": "-->",
    "handoff": "-->",
    "agent_tool": "<-.->",
    "tool": "---",
    "interrupt": "==>",
    "resume": "-.->",
    "run_again": "-->",
    "flow": "-->",
}


_GATED_ARROWS = {"handoff": "-.->", "agent_tool": "<-.->", "tool": "-.-"}
"""Gated edges (``is_enabled``) drawn dashed."""


def _edge(edge: SceneEdge) -> str:
    arrow = _GATED_ARROWS.get(edge.kind, _ARROWS[edge.kind]) if edge.gated else _ARROWS[edge.kind]
    if edge.label:
        return f'{edge.source} {arrow}|"{mermaid_escape(edge.label)}"| {edge.target}'
    return f"{edge.source} {arrow} {edge.target}"


def _classes(node: SceneNode) -> Iterable[str]:
    if node.kind in ("start", "end"):
        yield "terminal"
    if node.kind == "missing":
        yield "missing"
    if node.kind == "tool":
        yield "pause" if node.pause else "tool"
    if node.kind == "paused":
        yield "pause"
    if node.kind == "step":
        yield "step"
    if node.kind in ("branch", "route", "fan_out", "join"):
        yield "decision"
    if node.entry:
        yield "entry"
    if node.nested_only:
        yield "nested"
    if node.severity is not None:
        yield node.severity


_GROUP_STYLE = "fill:#fafafa,stroke:#689f38,stroke-dasharray:4 3"


def _grouped_nodes(scene: Scene, lines: list[str]) -> None:
    """The nodes, each group's as a ``subgraph`` where its first node would be."""
    for group, nodes in scene.in_groups():
        if group is None:
            lines.append(f"    {_node(nodes[0])}")
            continue
        lines.append(f'    subgraph {group.id}["{mermaid_escape(group.title)}"]')
        lines.extend(f"        {_node(member)}" for member in nodes)
        lines.append("    end")


def scene_to_mermaid(scene: Scene, *, direction: str = "TD") -> str:
    """The scene as a Mermaid ``flowchart``; ends with a newline."""
    lines = [f"flowchart {direction}"]
    if scene.groups:
        _grouped_nodes(scene, lines)
    else:
        lines.extend(f"    {_node(node)}" for node in scene.nodes)
    lines.extend(f"    {_edge(edge)}" for edge in scene.edges)

    by_class: dict[str, list[str]] = {}
    for node in scene.nodes:
        if node.kind == "agent" and not (node.entry or node.nested_only or node.marks):
            continue  # a plain agent has no class; most agents of large workflows are
        for cls in _classes(node):
            by_class.setdefault(cls, []).append(node.id)
    for cls, style in _CLASS_DEFS.items():
        if cls in by_class:
            lines.append(f"    classDef {cls} {style}")
    for cls in _CLASS_DEFS:
        if cls in by_class:
            lines.append(f"    class {','.join(by_class[cls])} {cls}")

    lines.extend(f"    style {group.id} {_GROUP_STYLE}" for group in scene.groups)

    by_severity: dict[Severity, list[str]] = {}
    pauses: list[str] = []
    for index, edge in enumerate(scene.edges):
        if edge.severity is not None:
            by_severity.setdefault(edge.severity, []).append(str(index))
        elif edge.pause or edge.kind in ("interrupt", "resume"):
            pauses.append(str(index))
    if pauses:
        lines.append(f"    linkStyle {','.join(pauses)} stroke:#f57f17,stroke-width:2px")
    for severity, style in _LINK_STYLES.items():
        if severity in by_severity:
            lines.append(f"    linkStyle {','.join(by_severity[severity])} {style}")
    return "\n".join(lines) + "\n"
