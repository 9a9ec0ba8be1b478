"""The CLI tests' helpers: the command in this process, and as a real subprocess.

Most CLI tests call :func:`run_main`: ``main(argv)`` in-process,
with stdout and stderr captured, which is fast and shows the same text a user sees.
A test about the process boundary itself (exit codes at interpreter exit, stdin, signals,
environment variables, imports from the working directory) uses :func:`run_process`,
``python -m stepswitch`` on these sources.

Tests elsewhere that drive the CLI import these two functions from here:
``from tests.cli.conftest import run_main, run_process``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from stepswitch.cli.main import main
from tests._paths import ROOT

MODEL_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPSWITCH_MODEL")
"""Variables that choose a model: unset for every CLI test, so a developer's shell
cannot send a test's run to a real endpoint."""


def run_main(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``stepswitch ARGV`` in this process: its exit code, stdout and stderr. A command
    never prints a traceback, whatever it was given, so that is checked on every call."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def run_process(
    *argv: str, cwd: Path = ROOT, stdin: str | None = None, timeout: float = 60,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m stepswitch ARGV`` in ``cwd`` on these sources (``src/`` and the repo
    on ``PYTHONPATH``), with no model chosen by the environment and stdin closed unless
    ``stdin`` is given. ``env`` adds or replaces variables."""
    full = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    for name in MODEL_ENV:
        full.pop(name, None)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "stepswitch", *argv],
        cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout,
        input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL, check=False,
    )


@pytest.fixture()
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the repository's top folder, so targets read as a user types them
    (``graphs/support.py:support``)."""
    monkeypatch.chdir(ROOT)

