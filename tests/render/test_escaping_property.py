"""Property: any name survives both formats and reads back exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import stepswitch as ss
from stepswitch.render import to_dot, to_mermaid
from stepswitch.render.graphviz_bin import run_graphviz
from tests.render.mermaid_check import check, decode_label
from tests.render.svg import svg_texts

# Any printable text, punctuation and markup characters favoured; no line breaks or
# surrounding blanks (a renderer may trim those; newlines have their own tests).
_CHARS = st.one_of(
    st.sampled_from([*'"\\|[]{}()<>&#%;`:-=.*/\'', "end", "graph", "&amp;", "#35;"]),
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Zs", "Co", "Cn")),
)
_NAME = st.lists(_CHARS, min_size=1, max_size=12).map("".join)


def _workflow(names: list[str]) -> ss.Workflow:
    agents = [
        ss.Agent(name=name, instructions="x",
                 handoffs=[ss.handoff(names[(i + 1) % len(names)], tool_name=f"to {name}")])
        for i, name in enumerate(names)
    ]
    return ss.Workflow(name=names[0], entry=agents[0], agents=agents)


@settings(max_examples=60, deadline=None)
@given(st.lists(_NAME, min_size=1, max_size=6, unique=True))
def test_mermaid_reads_back_every_name(names: list[str]) -> None:
    parsed = check(to_mermaid(_workflow(names)))
    titles = [decode_label(raw) for node_id, raw in parsed.nodes.items() if node_id[0] == "a"]
    assert titles == names
    labels = [decode_label(label or "") for _, arrow, _, label in parsed.edges if label]
    assert labels == [f"to {name}" for name in names]


@settings(max_examples=8, deadline=None)
@given(st.lists(_NAME, min_size=1, max_size=12, unique=True))
def test_graphviz_reads_back_every_name(names: list[str]) -> None:
    nodes, edges = svg_texts(run_graphviz(to_dot(_workflow(names)), "svg").decode())
    assert [nodes[f"a{i}"] for i in range(len(names))] == [[name] for name in names]
    assert sorted(t for texts in edges for t in texts) == sorted(f"to {n}" for n in names)
