"""Mermaid text: golden files, a syntax check, and escaping of hostile names."""

from __future__ import annotations

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.render import to_mermaid
from stepswitch.render.mermaid import mermaid_escape
from tests.render.cases import CASES, SUPPORT_REPORT
from tests.render.golden import assert_golden
from tests.render.hostile import HOSTILE_NAMES, hostile
from tests.render.mermaid_check import MermaidSyntaxError, check, decode_label


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str) -> None:
    assert_golden(f"{case}.mmd", CASES[case](to_mermaid))


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_passes_the_syntax_check(case: str) -> None:
    check(CASES[case](to_mermaid))


def test_same_workflow_same_bytes() -> None:
    assert to_mermaid(support) == to_mermaid(support)
    assert support.to_mermaid(tools=True) == to_mermaid(support, tools=True)


def test_hostile_names_come_back_exactly_from_the_quoted_labels() -> None:
    parsed = check(to_mermaid(hostile))
    titles = [decode_label(raw).split("\n")[0] for node_id, raw in parsed.nodes.items()
              if node_id.startswith("a")]
    # A name with a newline shows on two lines; compare its first line.
    assert titles == [name.split("\n")[0] for name in HOSTILE_NAMES]
    full = {decode_label(raw) for raw in parsed.nodes.values()}
    assert "two\nlines\noutput: Out" in full
    labels = [decode_label(label) for _, _, _, label in parsed.edges if label]
    assert 'go 8 "say "hi"" ≤1' in labels
    assert "ask|0|[x]" in labels
    assert 'go 9 "back\\slash \\N \\l \\n" ≤1' in labels


def test_node_ids_never_come_from_user_text() -> None:
    parsed = check(to_mermaid(hostile, tools=True))
    assert all(node_id[0] in "amtn" and node_id not in HOSTILE_NAMES for node_id in parsed.nodes)


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ('a"b', "a#34;b"),
        ("a\\b", "a#92;b"),
        ("x|y", "x#124;y"),
        ("<b>&", "#60;b#62;#38;"),
        ("#35;", "#35;35;"),
        ("`md`", "#96;md#96;"),
        ("50%", "50#37;"),
        ("one\ntwo\r\nthree\rfour", "one<br/>two<br/>three<br/>four"),
        ("tab\tbell\x07", "tab bell "),
        ("end [x] {y} (z)", "end [x] {y} (z)"),
        ("日本 ✓", "日本 ✓"),
    ],
)
def test_escape(text: str, escaped: str) -> None:
    assert mermaid_escape(text) == escaped


def test_report_highlights_use_classes_and_link_styles() -> None:
    text = to_mermaid(support, report=SUPPORT_REPORT)
    parsed = check(text)
    assert "warning" in parsed.classes["a2"]
    assert "error" in parsed.classes["n_start"]
    assert "warning SW201" in decode_label(parsed.nodes["a2"])
    handoff = next(i for i, e in enumerate(parsed.edges) if e[0] == "a0" and e[2] == "a1")
    assert decode_label(parsed.edges[handoff][3] or "") == "transfer_to_refund [SW302]"
    styled = {i for indexes, body in parsed.link_styles if "#c62828" in body for i in indexes}
    assert handoff in styled


def test_checker_rejects_what_it_should() -> None:
    good = to_mermaid(support)
    with pytest.raises(MermaidSyntaxError, match="undeclared"):
        check(good.replace("n_start --> a0", "n_start --> a9"))
    with pytest.raises(MermaidSyntaxError, match="not a statement"):
        check(good.replace('a0["', 'a0 ["'))
    with pytest.raises(MermaidSyntaxError, match="raw"):
        check(good.replace("<b>triage</b>", "<b>tri|age</b>"))
    with pytest.raises(MermaidSyntaxError, match="not a statement"):
        check(good + "    subgraph x\n")


def test_large_graph_is_not_truncated() -> None:
    n = 600
    agents = [ss.Agent(name=f"agent {i}", instructions="x",
                       handoffs=[f"agent {(i + 1) % n}", f"agent {(i + 7) % n}"])
              for i in range(n)]
    wf = ss.Workflow(name="big", entry=agents[0], agents=agents)
    parsed = check(to_mermaid(wf))
    assert len([i for i in parsed.nodes if i.startswith("a")]) == n
    assert len([e for e in parsed.edges if e[1] == "-->" and e[3]]) == 2 * n
