"""Where a declaration was written, found with one frame walk (no source reading).

A shared leaf module (like ``errors.py``): the DSL and ``ModelSettings`` both name the
user's line in their errors; the CLI and codegen show paths with :func:`display_path`
and tell the package's own frames apart with :data:`PACKAGE_DIR`.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from types import CodeType
from typing import NamedTuple

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
"""The stepswitch package's folder: frames under it are ours, not the user's."""


class Site(NamedTuple):
    """A declaration's file and 1-based line."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{display_path(self.file)}:{self.line}"


def caller_site(*, skip: tuple[str, ...] = ()) -> Site:
    """The first frame outside the stepswitch package: the user's declaration.

    ``sys._getframe`` reads no source file, so declaring thousands of agents stays
    cheap (``inspect.stack()`` would read every file on the stack each time).
    """
    frame = sys._getframe(1)
    inside = (PACKAGE_DIR, *skip)
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        back = frame.f_back
        if back is None:
            break
        frame = back
    return Site(frame.f_code.co_filename, frame.f_lineno or 0)


def function_site(fn: object) -> Site:
    """The ``def`` line of a function, or the caller's site when it has no code object."""
    code = getattr(fn, "__code__", None)
    if code is None:
        code = getattr(getattr(fn, "__func__", None), "__code__", None)
    if code is None:
        return caller_site()
    return Site(code.co_filename, def_line(code))


def def_line(code: CodeType) -> int:
    """The line of a function's ``def`` (or ``async def``), where its
    ``co_firstlineno`` is that of its first decorator (as on Python 3.11): the first
    line at or after it that opens the definition of the function's name.

    Reads the file through :mod:`linecache` (once per file), and only for a function
    whose first line is a decorator; its first line when the source cannot be read."""
    first = code.co_firstlineno
    file = code.co_filename
    if not linecache.getline(file, first).lstrip().startswith("@"):
        return first
    opens = re.compile(rf"\s*(async\s+)?def\s+{re.escape(code.co_name)}\s*[(\[]")
    line = first + 1
    while text := linecache.getline(file, line):
        if opens.match(text):
            return line
        line += 1
    return first


def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when it lies under it (posix style),
    else as given."""
    text = os.fspath(path)
    try:
        rel = os.path.relpath(text)
    except ValueError:  # another drive on Windows
        return text
    if rel.startswith(".."):
        return text
    return rel.replace(os.sep, "/")


def shadowing(name: str) -> str | None:
    """A one-line error when the top-level module ``name`` (an optional dependency:
    redis, psycopg, temporalio, opentelemetry) was, or would be, imported from a plain
    file or folder, such as a ``redis.py`` beside the user's workflow, instead of the
    installed package; ``None`` when it comes from an installed package or is absent."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None and module is None:
        import importlib.util

        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
    if not isinstance(origin, str):
        return None
    parts = os.path.normpath(origin).split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return None
    return (
        f"{display_path(origin)} shadows the installed package {name!r}: it is imported "
        "in its place (its folder comes first on the import path); rename it"
    )
