"""``stepswitch render``: in-process and as a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graphs.support import support
from stepswitch.cli.main import main
from tests._paths import ROOT
from tests.render.mermaid_check import check, decode_label
from tests.render.svg import svg_texts

SUPPORT = str(ROOT / "graphs" / "support.py") + ":support"


def test_mermaid_to_stdout_with_the_analyzers_findings(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    assert main(["render", SUPPORT]) == 0
    out = capsys.readouterr().out
    assert out == support.to_mermaid(report=support.check())
    parsed = check(out)
    # The real report: refund's approval tool is a pause point (SW501, info).
    assert "info SW501" in decode_label(parsed.nodes["a1"])
    assert "info" in parsed.classes["a1"]


def test_no_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", SUPPORT, "--no-report"]) == 0
    assert capsys.readouterr().out == support.to_mermaid()


def test_dot_with_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", SUPPORT, "--format", "dot", "--tools", "--no-report"]) == 0
    assert capsys.readouterr().out == support.to_dot(tools=True)


def test_broken_workflow_is_drawn_with_every_error_on_its_element(
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = str(ROOT / "examples" / "broken_workflow.py")
    assert main(["render", target]) == 0  # drawing is not checking: exit 0
    parsed = check(capsys.readouterr().out)
    titles = {decode_label(raw).split("\n")[0]: node_id for node_id, raw in parsed.nodes.items()}
    planner, reviewer, archivist = titles["planner"], titles["reviewer"], titles["archivist"]
    assert "error" in parsed.classes[planner]
    assert "error SW108" in decode_label(parsed.nodes[reviewer])
    assert "warning" in parsed.classes[archivist]
    labels = {decode_label(label or ""): i for i, (_, _, _, label) in enumerate(parsed.edges)}
    cycle = labels["transfer_to_writer [SW201]"]
    dangling = labels["transfer_to_editor [SW103]"]
    assert parsed.edges[dangling][2] == titles["? editor"]
    red = {i for indexes, body in parsed.link_styles if "#c62828" in body for i in indexes}
    assert {cycle, dangling} <= red


def test_svg_and_png_to_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "support.svg"
    assert main(["render", SUPPORT, "--format", "svg", "-o", str(svg)]) == 0
    nodes, _ = svg_texts(svg.read_text(encoding="utf-8"))
    assert {"triage", "refund", "researcher"} <= {t[0] for t in nodes.values()}
    assert f"wrote {svg}" in capsys.readouterr().err
    png = tmp_path / "support.png"
    assert main(["render", SUPPORT, "-f", "png", "-o", str(png)]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")


def test_machine_view(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", SUPPORT, "--view", "machine", "--no-report"]) == 0
    assert capsys.readouterr().out == support.to_mermaid(view="machine")


def test_machine_view_of_a_workflow_that_cannot_be_lowered_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = str(ROOT / "examples" / "broken_workflow.py")
    assert main(["render", target, "--view", "machine"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "planner" in err


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", SUPPORT, "--format", "gif"]) == 2
    assert main(["render", str(tmp_path / "missing.py") + ":wf"]) == 2
    two = tmp_path / "two_wfs.py"
    two.write_text(
        "import stepswitch as ss\n"
        "a = ss.Agent(name='a', instructions='x')\n"
        "one = ss.Workflow(name='one', entry=a, agents=[a])\n"
        "two = ss.Workflow(name='two', entry=a, agents=[a])\n"
    )
    capsys.readouterr()
    assert main(["render", str(two)]) == 2
    assert "names 2 workflows" in capsys.readouterr().err
    assert main(["render", str(two) + ":two"]) == 0


def test_subprocess_png_to_stdout_pipe(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stepswitch", "render", "graphs/support.py:support", "-f", "png"],
        cwd=ROOT, capture_output=True, check=False, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"\x89PNG")


def test_format_follows_the_output_suffix(tmp_path: Path) -> None:
    for name, start in (("d.svg", b"<?xml"), ("d.png", b"\x89PNG"), ("d.gv", b"digraph"),
                        ("d.mmd", b"flowchart"), ("d.txt", b"flowchart")):
        out = tmp_path / name
        assert main(["render", SUPPORT, "-o", str(out)]) == 0
        assert out.read_bytes().lstrip().startswith(start), name
    out = tmp_path / "forced.svg"
    assert main(["render", SUPPORT, "-f", "dot", "-o", str(out)]) == 0
    assert out.read_bytes().startswith(b"digraph")
