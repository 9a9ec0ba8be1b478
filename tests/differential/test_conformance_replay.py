"""Every conformance scenario, replayed with the generated module beside the interpreter.

Runs the conformance suite in a fresh process with ``tests.differential.plugin`` (see
its docstring): a scenario whose generated runner differs from the interpreter in any
item, output, last agent, interruption, model call or error fails there. A scenario
that also fails without the plugin is the conformance suite's own failure (reported by
that suite, not here); one that fails only with the plugin is a codegen difference.
"""

from __future__ import annotations

import re
import subprocess
import sys

from tests._paths import ROOT

PYTEST = [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "-o", "addopts="]


def _failed(output: str) -> list[str]:
    return re.findall(r"^FAILED (\S+)", output, flags=re.MULTILINE)


def test_the_conformance_suite_agrees_on_generated_code() -> None:
    done = subprocess.run(
        [*PYTEST, "tests/conformance", "-p", "tests.differential.plugin"],
        cwd=ROOT, capture_output=True, text=True,
    )
    found = re.search(r"differential: (\d+) scenario runs compared", done.stdout)
    assert found is not None, done.stdout[-4000:] + done.stderr[-2000:]
    assert int(found.group(1)) >= 3
    failed = _failed(done.stdout)
    assert done.returncode == 0 or failed, done.stdout[-4000:] + done.stderr[-2000:]
    if not failed:
        return
    plain = subprocess.run([*PYTEST, *failed], cwd=ROOT, capture_output=True, text=True)
    own = set(_failed(plain.stdout))
    differential = [f for f in failed if f not in own]
    assert not differential, (
        f"generated code differs from the interpreter in {differential}:\n"
        + done.stdout[-6000:]
    )
