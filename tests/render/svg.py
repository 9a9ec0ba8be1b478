"""Read an SVG made by Graphviz: each node's and edge's text lines, by DOT id."""

from __future__ import annotations

import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(svg: str) -> tuple[dict[str, list[str]], list[list[str]]]:
    """``(node texts by node id, edge texts in drawing order)``; raises on bad XML."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg", root.tag
    nodes: dict[str, list[str]] = {}
    edges: list[list[str]] = []
    for group in root.iter(f"{SVG}g"):
        kind = group.get("class")
        title = group.find(f"{SVG}title")
        texts = [t.text or "" for t in group.iter(f"{SVG}text")]
        if kind == "node" and title is not None and title.text:
            nodes[title.text] = texts
        elif kind == "edge":
            edges.append(texts)
    return nodes, edges
