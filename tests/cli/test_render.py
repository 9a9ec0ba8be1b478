"""``stepswitch render``: in-process and as a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graphs.support import support
from stepswitch.cli.main import main
from tests.render.mermaid_check import check
from tests.render.svg import svg_texts

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = str(ROOT / "graphs" / "support.py") + ":support"


def test_mermaid_to_stdout_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", SUPPORT]) == 0
    out = capsys.readouterr().out
    assert out == support.to_mermaid()
    check(out)


def test_dot_with_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", SUPPORT, "--format", "dot", "--tools"]) == 0
    assert capsys.readouterr().out == support.to_dot(tools=True)


def test_svg_and_png_to_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "support.svg"
    assert main(["render", SUPPORT, "--format", "svg", "-o", str(svg)]) == 0
    nodes, _ = svg_texts(svg.read_text(encoding="utf-8"))
    assert {"triage", "refund", "researcher"} <= {t[0] for t in nodes.values()}
    assert f"wrote {svg}" in capsys.readouterr().err
    png = tmp_path / "support.png"
    assert main(["render", SUPPORT, "-f", "png", "-o", str(png)]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")


def test_machine_view_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", SUPPORT, "--view", "machine"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "machine view" in err


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
