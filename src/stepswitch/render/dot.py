"""Graphviz DOT text from a :class:`~stepswitch.render.scene.Scene`.

Node ids come from the scene (``a0``, ``t1`` ...), never from user text, so a name
such as ``graph`` or ``node`` cannot be read as a DOT keyword. Every user string is
written inside double quotes with backslashes, quotes and ``&`` escaped (Graphviz
reads ``&name;`` entities in labels) and line breaks written as DOT line escapes.
"""

from __future__ import annotations

from stepswitch.render.scene import Scene, SceneEdge, SceneNode, Severity

__all__ = ["dot_escape", "scene_to_dot"]

_LINE_BREAKS = frozenset("\n\r\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e")
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
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "&":
            out.append("&amp;")
        elif ch in _LINE_BREAKS:
            if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            out.append(newline)
        elif ch < " " or ch == "\x7f":
            out.append(" ")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _quote(text: str, *, newline: str = "\\n") -> str:
    return '"' + dot_escape(text, newline=newline) + '"'


def _node_label(node: SceneNode) -> str:
    if not node.lines:
        return _quote(node.title)
    # Title centred, detail lines left-justified (each ends with \l).
    body = "".join(dot_escape(line, newline="\\l") + "\\l" for line in node.lines)
    return '"' + dot_escape(node.title) + "\\n" + body + '"'


def _node(node: SceneNode) -> str:
    attrs = [f"label={_node_label(node)}"]
    if node.kind in ("start", "end"):
        attrs.append('shape=box, style="rounded,filled", fillcolor="#37474f", '
                     'fontcolor="#ffffff", color="#37474f"')
    elif node.kind == "missing":
        attrs.append('style="dashed,filled", fillcolor="#ffebee", color="#c62828"')
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


def _edge(edge: SceneEdge) -> str:
    attrs: list[str] = []
    if edge.label:
        attrs.append(f"label={_quote(edge.label)}")
    if edge.kind == "agent_tool":
        attrs.append("style=dashed, dir=both")
    elif edge.kind == "tool":
        attrs.append('dir=none, color="#689f38"')
    elif edge.kind == "final":
        attrs.append('color="#37474f"')
    if edge.pause and edge.severity is None:
        attrs.append('color="#f57f17", penwidth=2')
    if edge.severity is not None:
        attrs.append(_SEVERITY_EDGE[edge.severity])
    if edge.marks:
        tip = "\n".join(f"{m.code} {m.severity}: {m.message}" for m in edge.marks)
        attrs.append(f"tooltip={_quote(tip)}")
    suffix = f" [{', '.join(attrs)}]" if attrs else ""
    return f"  {edge.source} -> {edge.target}{suffix};"


def scene_to_dot(scene: Scene, *, rankdir: str = "TB") -> str:
    """The scene as a DOT ``digraph``; ends with a newline."""
    lines = [
        f"digraph {_quote(scene.title)} {{",
        f'  graph [rankdir={rankdir}, fontname="{_FONT}", label={_quote(scene.title)}, '
        "labelloc=t];",
        f'  node [shape=box, fontname="{_FONT}", fontsize=11, fillcolor="#ffffff"];',
        f'  edge [fontname="{_FONT}", fontsize=10];',
    ]
    lines.extend(_node(node) for node in scene.nodes)
    lines.extend(_edge(edge) for edge in scene.edges)
    lines.append("}")
    return "\n".join(lines) + "\n"
