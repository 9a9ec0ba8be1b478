"""Benchmark: cold start. What a deployed runner, ``import stepswitch`` and a
pre-commit ``stepswitch check`` cost in a fresh process.

Each case runs in a new interpreter, several times; printed are the best wall time of
the whole process, its CPU time (user + system, which a machine shared with other work
inflates less than wall time) and, for imports, the time of the import statement alone
(measured inside the child, without the interpreter's own start-up, which is printed
as the baseline ``python -c pass``). For the runtime and the generated runner the
third-party packages they load are listed, so a regression shows what came in.

Bytecode: an installed package has its ``.pyc`` files (pip compiles them), so the
children run with a bytecode cache (``PYTHONPYCACHEPREFIX`` in a temporary folder,
filled by one warm-up run). ``--source`` measures instead the tree as the environment
leaves it: with ``PYTHONDONTWRITEBYTECODE=1`` (as on the project's machines) every
start compiles stepswitch's own modules again, which costs about a third more.

Targets (issue #10): ``import codegen.support`` ≤ 0.15 s, ``import stepswitch``
≤ 0.15 s, ``stepswitch check graphs/`` whole process ≤ 0.25 s.

Figures (2 shared cores under load, so instruction counts: ``valgrind --tool=callgrind
python -c STATEMENT``, millions, which the load does not change; "cached" with bytecode,
"source" compiling our modules). Before = main at 0eb4435; lazy = the lazy runtime;
dc = stepswitch._dataclass (issue #10's cold-start pass, cached only):

    statement                               cached: before  lazy  dc   source: before  lazy
    python -c pass                                    39     39    39            39     39
    import stepswitch                                 84     83    83            98     98
    import stepswitch.runtime                        952     83    83          1210    101
    import stepswitch.runtime.generated              952    538   354          1214    790
    import codegen.support                          1072   1076   882          1428   1429
    stepswitch check graphs/ (main() in process)    1267   1074   924          1824   1412

The runtime no longer loads pydantic; ``stepswitch check`` no longer loads the run loop
or asyncio. Python 3.11's dataclasses compile each generated method separately (six
``exec`` a frozen class, ~4.4 M); ``stepswitch._dataclass`` compiles ``__init__`` once
per shape of class and ``__eq__``/``__hash__``/``__repr__`` on first use (~1.1 M a
class), with the same per-call cost (``bench/bench_instructions.py``: loop turn 88 k
before, 86 k after). A generated runner is still not fast: its user module
(graphs/support.py) declares its tools with the DSL, which loads pydantic, and the
runtime then loads asyncio.

The second pass (issue #10's last target, the runner's cold import; "cached" counts,
``--instructions``, PYTHONHASHSEED=0). Before = main at 0772df3, after = this pass:

    statement                                   before   after
    python -c pass                                  39      39
    user module (one pydantic model)               582     582   the floor under any runner
    import stepswitch                               83      83
    import stepswitch.runtime.generated            359     201
    import codegen.support                         886     688   -22 %
    import codegen.support + first run_sync        890     784   -12 %
    stepswitch check graphs/ (main() in process)   924     840    -9 %

Wall, best of 9 on the shared machine (load ~2; the quiet figures are taken apart):
``import codegen.support`` 164 ms before, 128 ms after; with its first ``run_sync``
166 ms and 151 ms. What went, in the runner's import (millions of instructions):

* asyncio and what it drags in (ssl, sockets, logging, subprocess, concurrent.futures),
  ~84 M: ``runtime/pump.py`` (the one pump every driver shares) is its only importer and
  loads with the first run. Moved, not removed: the first ``run_sync`` pays it (hence
  the "+ first run_sync" row); ``await machine.run(...)`` is called from code that has
  asyncio loaded already, as any server has. The states' ``ModelSettings`` (a pydantic
  class, ~7 M) moved the same way, to the machine's first run.
* The DSL's pydantic models of its own arguments (``Agent``, ``handoff``, ``as_tool``,
  ``Workflow``), ~45 M: a declaration that a few type tests show plainly right (nearly
  all) skips them; the others are validated by the same models, built on first need
  (``dsl/_arg_models.py``), with the same messages. Removed.
* The NumPy and Epydoc docstring parsers on the first tool, ~14 M: they cannot find a
  section in a docstring without their markers, so ``parse_docstring`` runs only the ReST
  and Google parsers then, with ``docstring_parser.parse``'s own choice between them.
* Class definitions, ~30 M: ``stepswitch._dataclass`` collects a plain class's fields
  itself (``dataclasses`` ran three regex-and-module checks per annotation), and the
  ``__init__`` shapes of the package's own classes shipped compiled
  (``stepswitch/_shapes.py``; each was a ``compile``, ~0.35 M). Issue #22 removed that
  generated module: an ``__init__`` now compiles on its class's first call
  (bench/README.md).
* What a run may never need, ~15 M: the flow runtime and flow IR, tracing, sessions,
  the resume check, ``logging``, two regular expressions of ``_json``'s slow paths.

The run loop's cost is unchanged (``bench_instructions.py --only loop,support``, main
just before this pass landed and after: 66.2 k instructions a turn and 66.1 k; a whole
support-flow run 309 k and 311 k). A lazy import inside a driver is a ``sys.modules``
lookup (``machine._loaded`` then, ``runtime/_lazy.py`` since issue #22), not a
``from`` import statement, which costs ~8 k instructions each time it runs even when
the module is loaded.

What remains in ``import codegen.support`` beyond the user module's 582 M: the runtime's
own modules ~63 M (some fifty classes, ~0.5 M each, and ``json``, ~5 M, which handoffs
and tool outputs use), ``docstring_parser`` ~16 M (its import compiles its regular
expressions; the user's tools have docstrings), the DSL ~11 M, the user module's own
work ~15 M (two tools' parameter models and schemas, the Google parse), the runner's
IR literal and machine ~1 M. Modules a runner loads: ``bench_import.py`` lists them
(40 of stepswitch's; pydantic, pydantic_core, annotated_types, typing_extensions,
typing_inspection and docstring_parser of the third parties, all for the user's module).

To recount one:

    PYTHONPYCACHEPREFIX=/tmp/pyc PYTHONDONTWRITEBYTECODE= python -c "import codegen.support"
    PYTHONPYCACHEPREFIX=/tmp/pyc PYTHONDONTWRITEBYTECODE= valgrind --tool=callgrind \\
        --callgrind-out-file=/dev/null python -c "import codegen.support"

    python bench/bench_import.py [--runs N] [--source] [--instructions]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
CLI = str(Path(sys.executable).with_name("stepswitch"))

_TIMED = (
    "import sys, time\n"
    "t = time.perf_counter()\n"
    "import {module}\n"
    "t = time.perf_counter() - t\n"
    "import json\n"
    "print(json.dumps([t, sorted(sys.modules)]))\n"
)

FIRST_RUN = (
    "import codegen.support as runner\n"
    "from stepswitch.testing import ScriptedModel, assistant_message, function_call\n"
    "model = ScriptedModel([[function_call('lookup_order', {'order_id': 42})],\n"
    "                       [assistant_message('shipped')]])\n"
    "assert runner.run_sync('where is 42?', model=model).final_output == 'shipped'\n"
)
"""The runner imported and run once (a scripted model, two turns, one tool): what a
process that imports a runner to answer one request pays. asyncio and the states'
ModelSettings load here, not with the import."""

USER_MODULE = "from pydantic import BaseModel\nclass F(BaseModel):\n    s: str\n"
"""The floor under any runner: a user module declaring one pydantic model."""

STATEMENTS: tuple[tuple[str, str], ...] = (
    ("python -c pass", "pass"),
    ("user module (one pydantic model)", USER_MODULE),
    ("import stepswitch", "import stepswitch"),
    ("import stepswitch.runtime", "import stepswitch.runtime"),
    ("import stepswitch.runtime.generated", "import stepswitch.runtime.generated"),
    ("import codegen.support", "import codegen.support"),
    ("import codegen.support + first run_sync", FIRST_RUN),
    (
        "stepswitch check graphs/ (main() in process)",
        "import sys\nfrom stepswitch.cli.main import main\nmain(['check', 'graphs/'])",
    ),
)
"""What ``--instructions`` counts, each in a fresh interpreter."""


ENV = dict(os.environ)
"""The children's environment; ``main`` sets up the bytecode cache in it."""


def _run(argv: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one child process, and its stdout."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, check=False, env=ENV
    )
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    if done.returncode not in (0, 1):  # check exits 1 on findings; anything else is broken
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    return wall, cpu, done.stdout


def _best(argv: list[str], runs: int) -> tuple[float, float, float | None, list[str]]:
    walls: list[float] = []
    cpus: list[float] = []
    inner: list[float] = []
    modules: list[str] = []
    for _ in range(runs):
        wall, cpu, out = _run(argv)
        walls.append(wall)
        cpus.append(cpu)
        if argv[:2] == [PYTHON, "-c"] and out.startswith("["):
            t, modules = json.loads(out.splitlines()[-1])
            inner.append(t)
    return min(walls), min(cpus), (min(inner) if inner else None), modules


def _row(label: str, wall: float, cpu: float, inner: float | None) -> None:
    shown = f"  import alone {inner * 1000:6.1f} ms" if inner is not None else ""
    print(f"{label:<36} wall {wall * 1000:6.1f} ms  cpu {cpu * 1000:6.1f} ms{shown}")


def _groups(modules: list[str]) -> str:
    """stepswitch's modules and the third-party packages among ``modules``."""
    ours = sorted(m for m in modules if m.startswith("stepswitch"))
    third = sorted(
        {m.split(".")[0] for m in modules if not m.startswith(("stepswitch", "codegen", "graphs"))}
        - set(sys.stdlib_module_names)
        - {"_distutils_hack", "__main__"}
    )
    return (
        f"  stepswitch modules ({len(ours)}): {', '.join(ours)}\n"
        f"  third-party: {', '.join(third) or 'none'}"
    )


def _instructions(statement: str) -> int:
    """What callgrind counts for ``python -c statement`` (after a run that fills the
    bytecode cache)."""
    _run([PYTHON, "-c", statement])
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         PYTHON, "-c", statement],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**ENV, "PYTHONHASHSEED": "0"},
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind failed on {statement!r}:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--source", action="store_true",
        help="no bytecode cache: stepswitch's modules are compiled on every start",
    )
    parser.add_argument(
        "--instructions", action="store_true",
        help="callgrind's instruction counts instead of times (needs valgrind; ~2 min)",
    )
    args = parser.parse_args()
    runs: int = args.runs
    if args.instructions and shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")

    with tempfile.TemporaryDirectory(prefix="ss-pyc-") as cache:
        if args.source:
            ENV["PYTHONDONTWRITEBYTECODE"] = "1"
            print("no bytecode cache for stepswitch's own modules (--source)")
        else:
            ENV.pop("PYTHONDONTWRITEBYTECODE", None)
            ENV["PYTHONPYCACHEPREFIX"] = cache
            for warm in ("import codegen.support, stepswitch.cli.main", "pass"):
                _run([PYTHON, "-c", warm])
            _run([CLI, "check", "graphs/"])
            print("bytecode cached, as in an installed package")
        if args.instructions:
            print("instructions (callgrind), millions")
            for label, statement in STATEMENTS:
                count = _instructions(statement)
                print(f"{label:<44} {count / 1e6:8.1f} M")
            return
        wall, cpu, _, _ = _best([PYTHON, "-c", "pass"], runs)
        _row("python -c pass (baseline)", wall, cpu, None)
        for module in (
            "stepswitch", "stepswitch.runtime", "stepswitch.runtime.generated",
            "codegen.support",
        ):
            wall, cpu, inner, modules = _best([PYTHON, "-c", _TIMED.format(module=module)], runs)
            _row(f"import {module}", wall, cpu, inner)
            if module in ("stepswitch.runtime.generated", "codegen.support"):
                print(_groups(modules))
        wall, cpu, _, _ = _best([PYTHON, "-c", FIRST_RUN], runs)
        _row("import codegen.support + first run_sync", wall, cpu, None)
        wall, cpu, _, _ = _best([CLI, "check", "graphs/"], runs)
        _row("stepswitch check graphs/", wall, cpu, None)


if __name__ == "__main__":
    main()
