"""Write the generated runners that only exist to be type-checked and linted.

``make typecheck`` runs ``python -m tests.codegen.write_runners out/typecheck``, then
``mypy --strict`` and ``ruff`` over them together with ``src/`` and the checked-in
runners under ``codegen/``, in the same mypy run: the hostile fixture's runner (names
and strings built to break naive codegen) and a runner of the step-rule grid (every
tool-use rule, typed and text outputs, a stop list too long for one line).
"""

from __future__ import annotations

import sys
from pathlib import Path

import stepswitch as ss
from stepswitch.compiler.codegen import plan_module, render
from stepswitch.ir import MachineIR
from tests.compiler import hostile
from tests.compiler.test_codegen import _states


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    hostile_runner = folder / "hostile_runner.py"
    hostile_runner.write_text(ss.codegen(hostile.machine()), encoding="utf-8")
    grid_runner = folder / "grid_runner.py"
    ir = MachineIR(name="grid", entry="long", states=tuple(_states()))
    grid_runner.write_text(render(plan_module(ir)), encoding="utf-8")
    return [hostile_runner, grid_runner]


if __name__ == "__main__":
    for path in write(Path(sys.argv[1])):
        print(path)
