"""Every conformance scenario, replayed with the generated module beside the interpreter.

Runs the conformance suite in a fresh process with ``tests.differential.plugin`` (see
its docstring): a scenario whose generated runner differs from the interpreter in any
item, output, last agent, interruption, model call or error fails there.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_conformance_suite_agrees_on_generated_code() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/conformance", "-p", "tests.differential.plugin",
         "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--benchmark-disable"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    found = re.search(r"differential: (\d+) scenario runs compared", done.stdout)
    assert found is not None, done.stdout[-2000:]
    assert int(found.group(1)) >= 3
