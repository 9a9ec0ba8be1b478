"""Find a Graphviz renderer and run it.

Order: ``dot`` on PATH (the real Graphviz), then ``graphviz-pure`` (the statically
linked wheel, same flags) on PATH or next to ``sys.executable`` (a virtualenv's
``bin/`` is often not on PATH). ``STEPSWITCH_DOT`` names an executable to use
instead. None found is a :class:`~stepswitch.errors.UserError` saying how to get one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from stepswitch.errors import GraphvizNotFound, UserError

__all__ = ["GraphvizNotFound", "find_graphviz", "run_graphviz"]

_CANDIDATES = ("dot", "graphviz-pure")
_TIMEOUT_S = 120


def _beside_python(name: str) -> str | None:
    folder = Path(sys.executable).parent
    for candidate in (name, f"{name}.exe"):
        path = folder / candidate
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def find_graphviz() -> str:
    """The path of the Graphviz executable to run."""
    override = os.environ.get("STEPSWITCH_DOT")
    if override:
        found = shutil.which(override)
        if found is None:
            raise GraphvizNotFound(
                f"STEPSWITCH_DOT={override!r} names no executable; unset it or point it "
                "at Graphviz's `dot`"
            )
        return found
    for name in _CANDIDATES:
        found = shutil.which(name) or _beside_python(name)
        if found is not None:
            return found
    raise GraphvizNotFound(
        "SVG and PNG need Graphviz and none was found (looked for `dot` and "
        "`graphviz-pure` on PATH and next to this Python). Install one: "
        "`pip install 'stepswitch[svg]'` (a self-contained Graphviz wheel) or your "
        "system's package (`apt-get install graphviz`, `brew install graphviz`); "
        "Mermaid and DOT text need neither."
    )


def run_graphviz(dot_source: str, fmt: str) -> bytes:
    """Render ``dot_source`` to ``fmt`` (``svg``, ``png`` ...) and return the bytes."""
    exe = find_graphviz()
    try:
        proc = subprocess.run(
            [exe, f"-T{fmt}"],
            input=dot_source.encode("utf-8"),
            capture_output=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise UserError(f"{exe} did not finish rendering {fmt} within {_TIMEOUT_S}s") from None
    except OSError as exc:
        raise GraphvizNotFound(f"could not run {exe}: {exc}") from None
    if proc.returncode != 0 or not proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip() or "no output"
        raise UserError(f"{exe} -T{fmt} failed (exit {proc.returncode}): {err}")
    return proc.stdout
