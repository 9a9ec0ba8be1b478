"""``stepswitch.render`` and the ``Workflow.to_mermaid``/``to_dot`` facade."""

from __future__ import annotations

from pathlib import Path

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.render import to_dot, to_mermaid
from tests.render.mermaid_check import check, decode_label
from tests.render.svg import svg_texts


def test_render_is_exported_at_top_level() -> None:
    assert "render" in ss.__all__
    assert callable(ss.render)


def test_text_formats_match_the_facade() -> None:
    assert ss.render(support, "mermaid") == support.to_mermaid()
    assert ss.render(support, "dot") == support.to_dot()
    assert ss.render(support, "mermaid", tools=True) == support.to_mermaid(tools=True)


def test_svg_has_every_agent_and_edge_label(tmp_path: Path) -> None:
    out = tmp_path / "nested" / "support.svg"
    svg = ss.render(support, "svg", out)
    assert out.read_text(encoding="utf-8") == svg
    nodes, edges = svg_texts(svg)
    titles = {texts[0] for texts in nodes.values()}
    assert {"triage", "refund", "researcher", "start", "end"} <= titles
    labels = {t for texts in edges for t in texts}
    assert {"transfer_to_refund", "transfer_to_triage ≤2", "research"} <= labels


def test_png_written_as_bytes(tmp_path: Path) -> None:
    out = tmp_path / "support.png"
    data = ss.render(support, "png", str(out))
    assert isinstance(data, bytes)
    assert out.read_bytes() == data
    assert data.startswith(b"\x89PNG\r\n\x1a\n")


def test_accepts_graph_built_and_spec() -> None:
    built = support.build()
    expected = to_mermaid(support)
    assert to_mermaid(support.graph()) == expected
    assert to_mermaid(built) == expected
    assert to_mermaid(built.spec) == expected
    assert to_dot(built.spec) == to_dot(support)


def test_bad_arguments_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(ss.UserError, match="unknown format 'jpeg'"):
        ss.render(support, "jpeg")
    with pytest.raises(ss.UserError, match="cannot draw a int"):
        to_mermaid(42)  # type: ignore[arg-type]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ss.UserError, match="cannot write"):
        ss.render(support, "mermaid", blocker / "out.mmd")


def test_machine_view_from_workflow_machine_and_ir_is_the_same() -> None:
    machine = support.compile()
    expected = to_mermaid(support, view="machine")
    assert support.to_mermaid(view="machine") == expected
    assert to_mermaid(machine) == expected  # a compiled machine defaults to its view
    assert to_mermaid(machine.ir) == expected
    assert to_dot(machine) == support.to_dot(view="machine")


def test_compiled_machine_has_no_graph_view() -> None:
    with pytest.raises(ss.UserError, match="only the machine view"):
        to_mermaid(support.compile(), view="graph")


def test_machine_view_of_unlowerable_workflow_is_a_user_error() -> None:
    a = ss.Agent(name="a", instructions="x", handoffs=["ghost"])
    wf = ss.Workflow(name="w", entry=a, agents=[a])
    with pytest.raises(ss.UserError, match="ghost"):
        ss.render(wf, "mermaid", view="machine")
    with pytest.raises(ss.UserError, match="unknown view"):
        ss.render(wf, "mermaid", view="sideways")  # type: ignore[call-overload]


def test_real_report_on_a_workflow_without_a_usable_entry() -> None:
    a = ss.Agent(name="a", instructions="x", handoffs=["b"])
    b = ss.Agent(name="b", instructions="x", handoffs=["a"])
    wf = ss.Workflow(name="w", entry="nobody", agents=[a, b])
    report = wf.check()
    codes = set(report.codes())
    assert "SW102" in codes  # the entry names no agent
    text = to_mermaid(wf, report=report)
    parsed = check(text)
    assert "error SW102" in decode_label(parsed.nodes["n_start"])
    assert "error" in parsed.classes["n_start"]
    assert not [e for e in parsed.edges if e[0] == "n_start"]
    # Every diagnostic's code is visible somewhere in the text.
    shown = " ".join(decode_label(raw) for raw in parsed.nodes.values())
    shown += " ".join(decode_label(label or "") for *_, label in parsed.edges)
    assert all(code in shown for code in codes)


def test_one_graph_drawn_in_both_formats_is_laid_out_once() -> None:
    """Build once: the frozen graph keeps its scene and its lowered machine, so Mermaid
    and DOT of one graph (and of one report) share them; other arguments, another
    report or a report that could change lay out again."""
    from stepswitch.analysis import analyze
    from stepswitch.render import scene_for

    graph = support.graph()
    report = analyze(graph)
    first = scene_for(graph, report=report)
    assert scene_for(graph, report=report) is first
    assert to_mermaid(graph, report=report) == support.to_mermaid(report=report)
    assert to_dot(graph, report=report) == support.to_dot(report=report)
    assert scene_for(graph, report=analyze(graph)) is not first  # another report
    assert scene_for(graph, tools=True, report=report) is not first
    assert scene_for(graph) == scene_for(support)  # a Workflow is built again: equal

    class Changing:
        def __init__(self) -> None:
            self.diagnostics = list(report.diagnostics)

    changing = Changing()
    drawn = scene_for(graph, report=changing)
    assert scene_for(graph, report=changing) is not drawn  # a list can change: drawn again
    machine = scene_for(graph, view="machine")
    assert scene_for(graph, view="machine") == machine
    assert to_dot(graph, view="machine") == support.to_dot(view="machine")
