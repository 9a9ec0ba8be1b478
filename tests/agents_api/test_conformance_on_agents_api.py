"""Every conformance scenario the hosted Agents API can express, run on it over real
HTTP, with the same item trace as the local run.

Runs the conformance suite in a fresh process with ``tests.agents_api.conformance_plugin``
(see its docstring): each scenario's script is served by an ``AgentsAPIServer`` and the
run repeated with ``AgentsAPIModel``. What the API cannot express is counted apart with
its reason; a scenario that differs is a mismatch, unless the plugin lists it as known
(with why), and a known one must keep differing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests._paths import ROOT
from tests.conformance.harness import scenario_files

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]


def test_the_expressible_conformance_scenarios_run_alike_on_the_agents_api() -> None:
    done = subprocess.run(
        [*PYTEST, *scenario_files(), "-p", "tests.agents_api.conformance_plugin"],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "CONFORMANCE_EXAMPLES": "15"},
    )
    tail = done.stdout[-6000:] + done.stderr[-2000:]
    found = re.search(r"agents_api: (\d+) scenario runs, (\d+) compared on the Agents API, "
                      r"(\d+) mismatches", done.stdout)
    assert found is not None, tail
    runs, compared, mismatches = map(int, found.groups())
    assert mismatches == 0, tail
    assert compared >= 80 and compared > runs // 2, tail
    assert "known but not seen" not in done.stdout, tail
    skipped = re.findall(r"^agents_api skipped: \d+ (.+)$", done.stdout, re.M)
    allowed = ("concurrent agent-tool runs", "input other than user text",
               "the adapter refuses it", "a script step that raises", "a refusal",
               "a whole ModelResponse", "a model that answers", "run options",
               "run-level model settings", "a flow", "the local run failed")
    assert all(reason.startswith(allowed) for reason in skipped), skipped
    assert done.returncode == 0, tail
