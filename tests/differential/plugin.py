"""A pytest plugin: run the conformance suite with every scenario compared against the
generated module of its machine.

    pytest tests/conformance -p tests.differential.plugin

``tests.conformance.harness.run_all`` is wrapped before the conformance modules import
it: each call gets a :class:`~tests.differential.twin.Mixed` machine, so the harness's
own "all surfaces agree" assertions compare the interpreter with the generated runner
(which machine runs ``run_sync`` alternates). Every scenario that lands in
``tests/conformance`` and goes through ``run_all`` is picked up with no change to it.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest

from stepswitch import StateMachine
from tests.conformance import harness
from tests.differential.twin import generated_twin, mixed

_original = harness.run_all
_counts = {"scenarios": 0, "by_path": 0, "not_compared": 0}
_by_module: Counter[str] = Counter()


def _differential_run_all(machine: Any, *args: Any, **kwargs: Any) -> Any:
    if not isinstance(machine, StateMachine):
        _counts["not_compared"] += 1
        return _original(machine, *args, **kwargs)
    _, by_path = generated_twin(machine)
    # "tests/conformance/test_x.py::test_y (call)": the module the scenario came from
    _by_module[os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[0]] += 1
    generated_sync = _counts["scenarios"] % 2 == 1
    _counts["scenarios"] += 1
    _counts["by_path"] += by_path
    return _original(mixed(machine, generated_sync=generated_sync), *args, **kwargs)


harness.run_all = _differential_run_all


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(
        f"differential: {_counts['scenarios']} scenario runs compared with generated code "
        f"({_counts['by_path']} with objects imported by path, "
        f"{_counts['not_compared']} runs of other machines not compared)"
    )
    for module, n in sorted(_by_module.items()):
        terminalreporter.write_line(f"differential module: {module} {n}")


@pytest.fixture()
def differential_counts() -> dict[str, int]:
    return _counts
