"""DOT text: golden files, escaping, and the real Graphviz reading hostile names."""

from __future__ import annotations

import pytest

from graphs.support import support
from stepswitch.render import to_dot
from stepswitch.render.dot import dot_escape
from stepswitch.render.graphviz_bin import run_graphviz
from tests.render.cases import CASES, SUPPORT_REPORT
from tests.render.golden import assert_golden
from tests.render.hostile import HOSTILE_NAMES, hostile
from tests.render.svg import svg_texts


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str) -> None:
    assert_golden(f"{case}.dot", CASES[case](to_dot))


def test_same_workflow_same_bytes() -> None:
    assert to_dot(support) == to_dot(support)
    assert support.to_dot(tools=True) == to_dot(support, tools=True)


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ('say "hi"', 'say \\"hi\\"'),
        ("a\\b \\N \\l", "a\\\\b \\\\N \\\\l"),
        ("&amp; <b>", "&amp;amp; <b>"),
        ("one\ntwo\r\nthree", "one\\ntwo\\nthree"),
        ("bell\x07", "bell "),
        ("graph {x} [y] |z| ;", "graph {x} [y] |z| ;"),
        ("日本 ✓", "日本 ✓"),
    ],
)
def test_escape(text: str, escaped: str) -> None:
    assert dot_escape(text) == escaped


def test_escape_line_break_style() -> None:
    assert dot_escape("a\nb", newline="\\l") == "a\\lb"


def test_graphviz_reads_every_hostile_name_back_exactly() -> None:
    for tools in (False, True):
        nodes, edges = svg_texts(run_graphviz(to_dot(hostile, tools=tools), "svg").decode())
        agent_titles = [nodes[f"a{i}"] for i in range(len(HOSTILE_NAMES))]
        for name, texts in zip(HOSTILE_NAMES, agent_titles, strict=True):
            lines = name.split("\n")
            assert texts[: len(lines)] == lines, (name, texts)
        assert nodes["m0"] == ['? nobody "here" <end>', "unknown agent"]
        edge_labels = [t for texts in edges for t in texts]
        assert 'go 9 "back\\slash \\N \\l \\n" ≤1' in edge_labels
        assert 'go 10 "br[ack]{et}(s) <b>&amp; tags</b>" ≤1' in edge_labels
        assert "ask|0|[x]" in edge_labels
    nodes, _ = svg_texts(run_graphviz(to_dot(hostile), "svg").decode())
    assert 'guard in: guard "in" \\ <g>' in nodes["a0"]
    assert 'tool: tool "quoted" <x> & |y|' in nodes["a0"]


def test_report_highlights_carry_colour_and_tooltip() -> None:
    text = to_dot(support, report=SUPPORT_REPORT)
    a2 = next(line for line in text.splitlines() if line.startswith("  a2 ["))
    assert 'color="#ef6c00"' in a2
    assert "tooltip=\"SW201 warning: agent 'researcher' is unreachable\"" in a2
    edge = next(line for line in text.splitlines() if line.startswith("  a0 -> a1 "))
    assert 'label="transfer_to_refund [SW302]"' in edge
    assert 'color="#c62828"' in edge
