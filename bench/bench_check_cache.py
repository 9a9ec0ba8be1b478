"""Benchmark: ``stepswitch check graphs/`` cold and re-checked from the cache (issue #30).

Goals: cold ≤ 0.25 s, a re-check of unchanged files ≤ 0.05 s. Each round runs, in a fresh
process each and interleaved so load drifts hit every row alike: ``python -c pass`` (the
interpreter's own start-up, the floor), ``ruff check graphs/`` (the peer users compare
with), ``stepswitch check --no-cache graphs/`` (cold) and ``stepswitch check graphs/``
against a cache the first round filled. Printed: median and spread of wall time, and the
ratio to the floor and to ruff.

    python bench/bench_check_cache.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr.decode()}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="stepswitch-check-cache-")
    env = {k: v for k, v in os.environ.items() if k != "STEPSWITCH_NO_CACHE"}
    env["STEPSWITCH_CACHE_DIR"] = os.path.join(cache, "check")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    # bytecode cached, as in an installed package (pip compiles it): one warm-up fills it
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(cache, "pyc")
    py = sys.executable
    ruff = shutil.which("ruff", path=str(Path(py).parent)) or shutil.which("ruff")
    rows: dict[str, list[str]] = {
        "python -c pass (floor)": [py, "-c", "pass"],
        "stepswitch check --no-cache graphs/": [py, "-m", "stepswitch", "check", "--no-cache",
                                                "graphs/"],
        "stepswitch check graphs/ (cached)": [py, "-m", "stepswitch", "check", "graphs/"],
    }
    if ruff:
        rows["ruff check graphs/ (peer)"] = [ruff, "check", "--no-cache", "graphs/"]
    _wall(rows["stepswitch check --no-cache graphs/"], env)  # fills the bytecode cache
    _wall(rows["stepswitch check graphs/ (cached)"], env)  # fills the check cache
    times: dict[str, list[float]] = {label: [] for label in rows}
    try:
        for _ in range(args.rounds):
            for label, argv in rows.items():
                times[label].append(_wall(argv, env))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    floor = statistics.median(times["python -c pass (floor)"])
    peer = statistics.median(times["ruff check graphs/ (peer)"]) if ruff else None
    print(f"{args.rounds} interleaved rounds, wall time, median (min-max)")
    for label, walls in times.items():
        median = statistics.median(walls)
        ratio = f"{median / floor:5.1f}x floor"
        if peer:
            ratio += f"  {median / peer:5.1f}x ruff"
        print(f"  {label:<38} {median * 1000:7.1f} ms ({min(walls) * 1000:.1f}-"
              f"{max(walls) * 1000:.1f})  {ratio}")


if __name__ == "__main__":
    main()
