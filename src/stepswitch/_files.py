"""Files named by a user: read with limits, and a folder's Python files found.

``open(path).read()`` alone blocks forever on a FIFO nobody writes and reads
``/dev/zero`` until memory runs out. :func:`read_regular` refuses both with
:class:`FileRefused`, whose message is the cause alone (the caller names the file).

:func:`python_files` is the one rule for which files a folder TARGET holds, shared by
the target loader and the ``check`` cache (which must see the same files to notice a
new one).

A shared leaf module: imports nothing of stepswitch.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # typing's, without importing typing: the check cache's hit loads this
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["MAX_FILE_BYTES", "FileRefused", "python_file_names", "python_files", "read_regular"]

_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist"}

MAX_FILE_BYTES = 256 * 1024 * 1024
"""The largest recorded run or trace read (256 MiB)."""


class FileRefused(Exception):
    """The path is not a regular file, is too large, or cannot be read."""


def read_regular(path: str | Path, *, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them (default
    :data:`MAX_FILE_BYTES`).

    The file is opened without blocking (a FIFO opens at once) and checked by its open
    descriptor, so a path swapped between a check and the read cannot slip through."""
    if limit is None:
        limit = MAX_FILE_BYTES
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise FileRefused(f"cannot read it: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        what = ("a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO" if
                stat.S_ISFIFO(info.st_mode) else "a device or a socket")
        raise FileRefused(f"not a regular file: it is {what}")
    if info.st_size > limit:
        os.close(fd)
        raise FileRefused(_too_large(limit))
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise FileRefused(f"cannot read it: {exc.strerror or exc}") from None
    if len(data) > limit:  # grew while it was read
        raise FileRefused(_too_large(limit))
    return data


def _too_large(limit: int) -> str:
    return f"larger than {limit / (1024 * 1024):g} MiB; not a recorded run or trace"


def python_file_names(folder: Path | str) -> list[str]:
    """The paths of the ``.py`` files under ``folder``, sorted as strings; hidden folders
    and build, dependency and cache folders are skipped."""
    files: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS]
        files.extend(os.path.join(root, n) for n in names if n.endswith(".py"))
    return sorted(files)


def python_files(folder: Path | str) -> list[Path]:
    """:func:`python_file_names` as paths, sorted as paths."""
    from pathlib import Path

    return sorted(Path(name) for name in python_file_names(folder))
