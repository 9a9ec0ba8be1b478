"""Every conformance scenario, replayed with the generated module beside the interpreter.

Runs the conformance suite in a fresh process with ``tests.differential.plugin`` (see
its docstring): a scenario whose generated runner differs from the interpreter in any
item, output, last agent, interruption, model call or error fails there. A scenario
that also fails without the plugin is the conformance suite's own failure (reported by
that suite, not here); one that fails only with the plugin is a codegen difference.
The random transcripts run 15 examples here, not 40: random workflows on generated code
have tests of their own in this folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests._paths import ROOT
from tests.conformance.harness import scenario_files

PYTEST = [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "-o", "addopts="]


def _failed(output: str) -> list[str]:
    return re.findall(r"^FAILED (\S+)", output, flags=re.MULTILINE)


def test_the_conformance_suite_agrees_on_generated_code() -> None:
    files = scenario_files()
    done = subprocess.run(
        [*PYTEST, *files, "-p", "tests.differential.plugin"],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "CONFORMANCE_EXAMPLES": "15"},
    )
    found = re.search(r"differential: (\d+) scenario runs compared with generated code "
                      r"\((\d+) with objects imported by path, (\d+) runs of other", done.stdout)
    assert found is not None, done.stdout[-4000:] + done.stderr[-2000:]
    compared, by_path, not_compared = map(int, found.groups())
    # every conformance file that runs scenarios had them compared, none was left out,
    # and both ways a runner gets its objects (by import path; from the machine) were used
    modules = dict(re.findall(r"^differential module: (\S+) (\d+)$", done.stdout, re.M))
    assert sorted(modules) == files, done.stdout[-4000:]
    assert not_compared == 0
    assert 0 < by_path < compared
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
