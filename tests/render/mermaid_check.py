"""A strict checker for the Mermaid subset stepswitch writes (a test helper).

Mermaid needs a browser to parse, so the tests check our output against the small
grammar we emit instead: every line is a node, an edge, a ``classDef``, a ``class``,
a ``linkStyle`` or a group's ``style`` statement, or opens or closes a ``subgraph`` (a
group of nodes, indented four more spaces, never nested); shapes open and close in
pairs; every id is declared once before use and is never a keyword; outside the double
quotes there is nothing but ids, arrows and our own style words (no user text); inside
them, nothing that could end the string or be read as markup except the
``<br/>``/``<b>`` we put there.
``decode_label`` turns a quoted label back into the text a reader sees.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

KEYWORDS = frozenset(
    [
        "graph", "flowchart", "subgraph", "end", "style", "classDef", "class", "linkStyle",
        "click", "call", "href", "direction", "default", "interpolate",
        "TB", "TD", "BT", "RL", "LR",
    ]
)

_ID = r"(?:n_start|n_end|n_paused|[amt]\d+)"
_STR = r'"[^"\n]*"'
_SHAPES = [("([", "])"), ("{{", "}}"), ("[/", "/]"), ("[", "]")]
_NODE = re.compile(
    rf"^(?P<id>{_ID})(?:"
    + "|".join(
        rf"{re.escape(o)}(?P<s{i}>{_STR}){re.escape(c)}" for i, (o, c) in enumerate(_SHAPES)
    )
    + r")$"
)
_ARROW = r"-->|<-\.->|---|==>|-\.->"
_EDGE = re.compile(
    rf"^(?P<src>{_ID}) (?P<arrow>{_ARROW})(?:\|(?P<label>{_STR})\|)? (?P<dst>{_ID})$"
)
_STYLE = r"[a-z-]+:[#a-z0-9 .]+(?:,[a-z-]+:[#a-z0-9 .]+)*"
_CLASSDEF = re.compile(rf"^classDef (?P<name>[a-z]+) {_STYLE}$")
_CLASS = re.compile(rf"^class (?P<ids>{_ID}(?:,{_ID})*) (?P<name>[a-z]+)$")
_LINKSTYLE = re.compile(rf"^linkStyle (?P<idx>\d+(?:,\d+)*) {_STYLE}$")
_GROUP_ID = r"g\d+"
_SUBGRAPH = re.compile(rf"^subgraph (?P<id>{_GROUP_ID})\[(?P<title>{_STR})\]$")
_GROUP_STYLE = re.compile(rf"^style (?P<id>{_GROUP_ID}) {_STYLE}$")
_ENTITY = re.compile(r"#(\d+);")
_ALLOWED_TAGS = re.compile(r"<br/>|</?b>")


class MermaidSyntaxError(AssertionError):
    pass


@dataclass
class Parsed:
    nodes: dict[str, str] = field(default_factory=dict)
    """id -> raw quoted label (quotes stripped)."""
    edges: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    """(source, arrow, target, raw label or None)."""
    classes: dict[str, set[str]] = field(default_factory=dict)
    link_styles: list[tuple[list[int], str]] = field(default_factory=list)
    groups: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    """group id -> (raw quoted title, quotes stripped; the ids of its nodes)."""


def _check_string(raw: str, where: str) -> None:
    inner = raw[1:-1]
    rest = _ALLOWED_TAGS.sub("", _ENTITY.sub("", inner))
    for bad in '"#&<>\\`|%\n\r':
        if bad in rest:
            raise MermaidSyntaxError(f"{where}: raw {bad!r} inside a quoted label: {raw}")


def check(text: str) -> Parsed:
    """Parse ``text``; raise ``MermaidSyntaxError`` on anything outside the subset."""
    if not text.endswith("\n"):
        raise MermaidSyntaxError("text does not end with a newline")
    lines = text[:-1].split("\n")
    if lines[0] != "flowchart TD":
        raise MermaidSyntaxError(f"line 1: expected 'flowchart TD', got {lines[0]!r}")
    parsed = Parsed()
    class_defs: set[str] = set()
    group: str | None = None  # the subgraph being read
    for number, line in enumerate(lines[1:], start=2):
        where = f"line {number}"
        indent = "        " if group is not None and line != "    end" else "    "
        if not line.startswith(indent) or line[len(indent):len(indent) + 1].isspace():
            raise MermaidSyntaxError(
                f"{where}: expected {len(indent)} spaces of indent: {line!r}")
        body = line[len(indent):]
        if group is not None:
            if body == "end":
                group = None
                continue
            if not _NODE.match(body):
                raise MermaidSyntaxError(f"{where}: a subgraph holds only nodes: {line!r}")
        if m := _SUBGRAPH.match(body):
            if m["id"] in parsed.groups or parsed.edges:
                raise MermaidSyntaxError(f"{where}: subgraph {m['id']} twice or after edges")
            _check_string(m["title"], where)
            group = m["id"]
            parsed.groups[group] = (m["title"][1:-1], [])
        elif m := _GROUP_STYLE.match(body):
            if m["id"] not in parsed.groups:
                raise MermaidSyntaxError(f"{where}: style on undeclared subgraph {m['id']}")
        elif m := _NODE.match(body):
            node_id = m["id"]
            if node_id in parsed.nodes:
                raise MermaidSyntaxError(f"{where}: node {node_id} declared twice")
            if parsed.edges:
                raise MermaidSyntaxError(f"{where}: node {node_id} declared after edges")
            raw = next(v for k, v in m.groupdict().items() if k != "id" and v)
            _check_string(raw, where)
            parsed.nodes[node_id] = raw[1:-1]
            if group is not None:
                parsed.groups[group][1].append(node_id)
        elif m := _EDGE.match(body):
            for end in (m["src"], m["dst"]):
                if end not in parsed.nodes:
                    raise MermaidSyntaxError(f"{where}: edge uses undeclared node {end}")
            if m["label"] is not None:
                _check_string(m["label"], where)
            label = m["label"][1:-1] if m["label"] is not None else None
            parsed.edges.append((m["src"], m["arrow"], m["dst"], label))
        elif m := _CLASSDEF.match(body):
            class_defs.add(m["name"])
        elif m := _CLASS.match(body):
            if m["name"] not in class_defs:
                raise MermaidSyntaxError(f"{where}: class {m['name']} used before classDef")
            for node_id in m["ids"].split(","):
                if node_id not in parsed.nodes:
                    raise MermaidSyntaxError(f"{where}: class on undeclared node {node_id}")
                parsed.classes.setdefault(node_id, set()).add(m["name"])
        elif m := _LINKSTYLE.match(body):
            indexes = [int(i) for i in m["idx"].split(",")]
            for i in indexes:
                if i >= len(parsed.edges):
                    raise MermaidSyntaxError(
                        f"{where}: linkStyle {i} but {len(parsed.edges)} edges"
                    )
            parsed.link_styles.append((indexes, body))
        else:
            raise MermaidSyntaxError(f"{where}: not a statement of the subset: {line!r}")
    if group is not None:
        raise MermaidSyntaxError(f"subgraph {group} is not closed")
    for node_id in parsed.nodes:
        if node_id in KEYWORDS:
            raise MermaidSyntaxError(f"node id {node_id!r} is a Mermaid keyword")
    return parsed


def decode_label(raw: str) -> str:
    """What a reader sees: entities decoded, ``<br/>`` as a newline, ``<b>`` dropped."""
    text = raw.replace("<br/>", "\n").replace("<b>", "").replace("</b>", "")
    return html.unescape(_ENTITY.sub(lambda m: f"&#{m[1]};", text))
