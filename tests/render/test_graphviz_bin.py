"""Finding Graphviz: dot on PATH, then graphviz-pure on PATH or beside the Python."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from stepswitch.errors import UserError
from stepswitch.render.graphviz_bin import GraphvizNotFound, find_graphviz, run_graphviz


def _real_renderer() -> str:
    found = shutil.which("dot") or shutil.which("graphviz-pure")
    if found is None:
        found = str(Path(sys.executable).parent / "graphviz-pure")
    assert os.access(found, os.X_OK), "the dev extra installs graphviz-pure"
    return found


# Resolved before any test empties PATH.
REAL = _real_renderer()


def _link(folder: Path, name: str, target: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.symlink_to(target)
    return path


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No Graphviz on PATH, and a Python that lives in an empty folder."""
    monkeypatch.delenv("STEPSWITCH_DOT", raising=False)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    return tmp_path


def test_none_found_says_how_to_get_one(clean_env: Path) -> None:
    with pytest.raises(GraphvizNotFound) as info:
        find_graphviz()
    message = str(info.value)
    assert "pip install 'stepswitch[svg]'" in message
    assert "apt-get install graphviz" in message
    assert isinstance(info.value, UserError)


def test_graphviz_pure_next_to_python_is_found(clean_env: Path) -> None:
    exe = _link(clean_env / "venv" / "bin", "graphviz-pure", REAL)
    assert find_graphviz() == str(exe)
    assert run_graphviz("digraph { a -> b }", "svg").lstrip().startswith(b"<?xml")


def test_dot_on_path_wins_over_graphviz_pure(clean_env: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    _link(clean_env / "venv" / "bin", "graphviz-pure", REAL)
    dot = _link(clean_env / "sys-bin", "dot", REAL)
    pure = _link(clean_env / "pure-bin", "graphviz-pure", REAL)
    monkeypatch.setenv("PATH", os.pathsep.join([str(pure.parent), str(dot.parent)]))
    assert find_graphviz() == str(dot)
    monkeypatch.setenv("PATH", str(pure.parent))
    assert find_graphviz() == str(pure)


def test_env_override(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _link(clean_env / "custom", "my-dot", REAL)
    monkeypatch.setenv("STEPSWITCH_DOT", str(exe))
    assert find_graphviz() == str(exe)
    monkeypatch.setenv("STEPSWITCH_DOT", str(clean_env / "nope"))
    with pytest.raises(GraphvizNotFound, match="STEPSWITCH_DOT"):
        find_graphviz()


def test_renderer_failure_is_a_clear_error() -> None:
    with pytest.raises(UserError, match="failed"):
        run_graphviz("digraph { a -> ", "svg")


def test_png_is_a_png() -> None:
    assert run_graphviz("digraph { a -> b }", "png").startswith(b"\x89PNG\r\n\x1a\n")
