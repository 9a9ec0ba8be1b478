"""Files beside a workflow that shadow a module stepswitch (or Python) needs.

The CLI puts a TARGET's folder first on ``sys.path`` so the user's own modules import;
an ``openai.py`` or ``http.py`` there is then imported in place of the real one, and
fails far from its cause. These helpers name such a file instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["shadowed"]

# what stepswitch and its dependencies import by top-level name
_DEPENDENCIES = frozenset({
    "annotated_types", "anyio", "certifi", "distro", "docstring_parser", "graphviz", "h11",
    "httpcore", "httpx", "httpx2", "idna", "jinja2", "jiter", "markupsafe", "networkx",
    "openai", "pydantic", "pydantic_core", "sniffio", "stepswitch", "tqdm",
    "typing_extensions", "typing_inspection",
})


def _protected(name: str) -> bool:
    return name in sys.stdlib_module_names or name in _DEPENDENCIES


def shadowed(folder: Path) -> list[str]:
    """``file: shadows 'name' ...`` for each loaded top-level module of the standard
    library or of stepswitch's dependencies that was imported from ``folder``."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    names = {e[:-3] for e in entries if e.endswith(".py")} | {
        e for e in entries if os.path.isfile(os.path.join(folder, e, "__init__.py"))
    }
    root = os.path.realpath(folder)
    found: list[str] = []
    for name in sorted(n for n in names if _protected(n)):
        file = getattr(sys.modules.get(name), "__file__", None)
        if not isinstance(file, str):
            continue
        path = os.path.realpath(file)
        home = os.path.dirname(path)
        if os.path.basename(path) == "__init__.py":
            home = os.path.dirname(home)
        if home == root:
            kind = "the standard library's" if name in sys.stdlib_module_names else "the"
            found.append(
                f"{path}: shadows {kind} module {name!r}: it was imported in its place "
                "(the folder of the TARGET comes first on the import path); rename it"
            )
    return found
