"""Graphviz DOT text from a :class:`~stepswitch.render.scene.Scene`.

Node ids come from the scene (``a0``, ``t1`` ...), never from user text, so a name
such as ``graph`` or ``node`` cannot be read as a DOT keyword. Every user string is
written inside double quotes with backslashes, quotes and ``&`` escaped (Graphviz
reads ``&name;`` entities in labels) and line breaks written as DOT line escapes.
"""

from __future__ import annotations

import re

from stepswitch.render.scene import Scene, SceneEdge, SceneNode, Severity

__all__ = ["dot_escape", "scene_to_dot"]

_LINE_BREAKS = frozenset("\n\r\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e")
# One match per character to replace; "\r\n" counts as one line break.
_SPECIAL = re.compile('\r\n|["&\\\\\x00-\x1f\x7f\x85\u2028\u2029\ud800-\udfff]')
_REPLACEMENTS = {"\\": "\\\\", '"': '\\"', "&": "&amp;"}
_FONT = "Helvetica"

_SEVERITY_NODE: dict[Severity, str] = {
    "info": 'color="#1565c0", penwidth=2',
    "warning": 'color="#ef6c00", fillcolor="#fff3e0", penwidth=2',
    "error": 'color="#c62828", fillcolor="#ffebee", penwidth=3',
}
_SEVERITY_EDGE: dict[Severity, str] = {
    "info": 'color="#1565c0", fontcolor="#1565c0", penwidth=2',
    "warning": 'color="#ef6c00", fontcolor="#ef6c00", penwidth=2',
    "error": 'color="#c62828", fontcolor="#c62828", penwidth=3',
}


def dot_escape(text: str, *, newline: str = "\\n") -> str:
    """``text`` made safe inside a double-quoted DOT string.

    ``\\`` and ``"`` are backslash-escaped (so ``\\N``, ``\\l`` and friends stay
    literal), ``&`` becomes ``&amp;``, a line break becomes ``newline`` (a DOT line
    escape) and other control characters become spaces.
    """
    if _SPECIAL.search(text) is None:
        return text

    def replace(match: re.Match[str]) -> str:
        ch = match.group()
        if "\ud800" <= ch <= "\udfff":  # a lone surrogate cannot be written: its escape
            return f"\\\\u{ord(ch):04x}"
        if ch in _REPLACEMENTS:
            return _REPLACEMENTS[ch]
        if ch[0] in _LINE_BREAKS:
            return newline
        return " "

    return _SPECIAL.sub(replace, text)


def _quote(text: str, *, newline: str = "\\n") -> str:
    return '"' + dot_escape(text, newline=newline) + '"'


def _node_label(node: SceneNode) -> str:
    if not node.lines:
        return _quote(node.title)
    # Title centred, detail lines left-justified (each ends with \l); one escaping pass
    # over all lines, joined by U+2028 (a line break, so it becomes \l too).
    body = dot_escape("\u2028".join(node.lines), newline="\\l")
    return '"' + dot_escape(node.title) + "\\n" + body + '\\l"'


def _node(node: SceneNode) -> str:
    if node.kind == "agent" and not (node.entry or node.nested_only or node.marks):
        return f'  {node.id} [label={_node_label(node)}, style="rounded,filled"];'
    attrs = [f"label={_node_label(node)}"]
    if node.kind in ("start", "end"):
        attrs.append('shape=box, style="rounded,filled", fillcolor="#37474f", '
                     'fontcolor="#ffffff", color="#37474f"')
    elif node.kind == "missing":
        attrs.append('style="dashed,filled", fillcolor="#ffebee", color="#c62828"')
    elif node.kind == "paused":
        attrs.append('shape=hexagon, style=filled, fillcolor="#fff8e1", color="#f57f17", '
                     "penwidth=2")
    elif node.kind == "step":
        attrs.append('shape=box, style=filled, fillcolor="#e8eaf6", color="#3949ab", '
                     "peripheries=2")
    elif node.kind in ("branch", "route"):
        attrs.append('shape=diamond, style=filled, fillcolor="#fffde7", color="#f9a825"')
    elif node.kind in ("fan_out", "join"):
        shape = "trapezium" if node.kind == "fan_out" else "invtrapezium"
        attrs.append(f'shape={shape}, style=filled, fillcolor="#fffde7", color="#f9a825"')
    elif node.kind == "tool":
        if node.pause:
            attrs.append('shape=hexagon, style=filled, fillcolor="#fff8e1", color="#f57f17", '
                         "penwidth=2")
        else:
            attrs.append('shape=parallelogram, style=filled, fillcolor="#f1f8e9", '
                         'color="#689f38"')
    else:
        style = "rounded,filled,dashed" if node.nested_only else "rounded,filled"
        attrs.append(f'style="{style}"')
        if node.entry:
            attrs.append('fillcolor="#e3f2fd", penwidth=3')
    if node.severity is not None:
        attrs.append(_SEVERITY_NODE[node.severity])
    if node.marks:
        tip = "\n".join(f"{m.code} {m.severity}: {m.message}" for m in node.marks)
        attrs.append(f"tooltip={_quote(tip)}")
    return f"  {node.id} [{', '.join(attrs)}];"


_PLAIN_EDGE_ATTRS = {
    "start": "",
    "handoff": "",
    "agent_tool": ", style=dashed, dir=both",
    "tool": ', dir=none, color="#689f38"',
    "final": ', color="#37474f"',
    "interrupt": ', color="#f57f17", fontcolor="#e65100", penwidth=2',
    "resume": ', style=dotted, color="#f57f17", fontcolor="#e65100"',
    "run_again": ', color="#78909c", fontcolor="#546e7a"',
    "flow": "",
}


_GATED_EDGE_ATTRS = {
    **_PLAIN_EDGE_ATTRS,
    "handoff": ", style=dashed",
    "agent_tool": ", style=dotted, dir=both",
    "tool": ', style=dashed, dir=none, color="#689f38"',
}
"""Edges ``is_enabled`` may hide: dashed (an agent tool, dashed already, dotted)."""


def _edge(edge: SceneEdge) -> str:
    if not edge.marks and not edge.pause and not edge.gated:
        # The common case, written directly: large workflows have tens of thousands.
        extra = _PLAIN_EDGE_ATTRS[edge.kind]
        if edge.label:
            return f"  {edge.source} -> {edge.target} [label={_quote(edge.label)}{extra}];"
        if extra:
            return f"  {edge.source} -> {edge.target} [{extra[2:]}];"
        return f"  {edge.source} -> {edge.target};"
    attrs: list[str] = []
    if edge.label:
        attrs.append(f"label={_quote(edge.label)}")
    extra = (_GATED_EDGE_ATTRS if edge.gated else _PLAIN_EDGE_ATTRS)[edge.kind]
    if extra:
        attrs.append(extra[2:])
    # Later attributes win in DOT: highlights come after the kind's look.
    if edge.pause and edge.severity is None:
        attrs.append('color="#f57f17", penwidth=2')
    if edge.severity is not None:
        attrs.append(_SEVERITY_EDGE[edge.severity])
    if edge.marks:
        tip = "\n".join(f"{m.code} {m.severity}: {m.message}" for m in edge.marks)
        attrs.append(f"tooltip={_quote(tip)}")
    suffix = f" [{', '.join(attrs)}]" if attrs else ""
    return f"  {edge.source} -> {edge.target}{suffix};"


def _grouped_nodes(scene: Scene, lines: list[str]) -> None:
    """The nodes, each group's as a ``cluster`` subgraph where its first node would be."""
    for group, nodes in scene.in_groups():
        if group is None:
            lines.append(_node(nodes[0]))
            continue
        lines.append(f"  subgraph cluster_{group.id} {{")
        lines.append(f'    graph [label={_quote(group.title)}, style="rounded,dashed", '
                     'color="#689f38", fontcolor="#33691e"];')
        lines.extend(f"  {_node(member)}" for member in nodes)
        lines.append("  }")


def scene_to_dot(scene: Scene, *, rankdir: str = "TB") -> str:
    """The scene as a DOT ``digraph``; ends with a newline."""
    title = scene.title if scene.view == "graph" else f"{scene.title}: state machine"
    lines = [
        f"digraph {_quote(scene.title)} {{",
        f'  graph [rankdir={rankdir}, fontname="{_FONT}", label={_quote(title)}, '
        "labelloc=t];",
        f'  node [shape=box, fontname="{_FONT}", fontsize=11, fillcolor="#ffffff"];',
        f'  edge [fontname="{_FONT}", fontsize=10];',
    ]
    if scene.groups:
        _grouped_nodes(scene, lines)
    else:
        lines.extend(_node(node) for node in scene.nodes)
    lines.extend(_edge(edge) for edge in scene.edges)
    lines.append("}")
    return "\n".join(lines) + "\n"
