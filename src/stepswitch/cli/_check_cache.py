"""The ``check`` cache: a re-check of files nothing changed in answers without importing them.

``stepswitch check`` keeps each invocation's answer (its output and exit code) in
``.stepswitch_cache/`` of the working directory, keyed by everything that decides it:

- the command line (targets, format, selected and ignored codes, limits), the working
  directory, ``sys.path``, the Python version and the ``STEPSWITCH_*`` environment;
- stepswitch itself: its version and the size and modification time of every file of the
  installed package (so an edited checkout is a new stepswitch, even at the same version);
- every file the check read: each module its imports loaded and every file opened while
  it ran (``pyproject.toml``, ``stepswitch.mcp.lock``, prompt files a module reads), seen
  through an audit hook, by content hash (files of the interpreter and its environment,
  such as the standard library or an installed SDK, by size and modification time);
- files whose *absence* decided it: ``pyproject.toml`` and ``stepswitch.mcp.lock`` in
  each folder from a target or the working directory up, and the ``.py`` files of each
  folder TARGET, so adding one is a change too.

A stale answer is the failure this guards against, so anything unreadable, missing or
different is a miss and the check runs for real. A check that could not import a target
(exit 2) is not kept: the cause is usually the environment, not the files.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from stepswitch._files import python_files
from stepswitch._version import __version__

try:  # hashlib loads OpenSSL: most of this module's import time (python -X importtime)
    from _blake2 import blake2b as _hash
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b as _hash

__all__ = ["CACHE_DIR", "cached_check"]

CACHE_DIR = ".stepswitch_cache"
_FORMAT = 1
_NEARBY = ("pyproject.toml", "stepswitch.mcp.lock")

_PACKAGE = Path(__file__).resolve().parent.parent

_opened: set[str] | None = None  # the files opened while a check is being recorded
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or _opened is None or len(args) < 3:
        return
    path, mode, flags = args[0], args[1], args[2]
    if isinstance(mode, str):
        if "r" not in mode and "+" not in mode:
            return  # written, not read: it cannot have shaped the answer
    elif isinstance(flags, int) and flags & os.O_ACCMODE == os.O_WRONLY:
        return
    if isinstance(path, str):
        _opened.add(path)
    elif isinstance(path, bytes):
        _opened.add(os.fsdecode(path))


@contextlib.contextmanager
def _recording() -> Iterator[set[str]]:
    global _opened, _hooked
    if not _hooked:  # an audit hook cannot be removed: one per process, idle between checks
        sys.addaudithook(_audit)
        _hooked = True
    seen: set[str] = set()
    _opened = seen
    try:
        yield seen
    finally:
        _opened = None


def cached_check(
    argv: Sequence[str], targets: Sequence[str], run: Callable[[], int], *, use: bool = True
) -> int:
    """Run ``run`` (a whole ``check``, writing to stdout and stderr) or replay its stored
    answer. ``argv`` is every option that shapes the answer, ``targets`` the TARGETs."""
    if not use or os.environ.get("STEPSWITCH_NO_CACHE"):
        return run()
    folder = Path(os.environ.get("STEPSWITCH_CACHE_DIR") or CACHE_DIR)
    entry = folder / f"check-{_key(argv)}.json"
    answer = _load(entry)
    if answer is not None:
        sys.stdout.write(answer["stdout"])
        sys.stderr.write(answer["stderr"])
        return int(answer["rc"])
    before = set(sys.modules)
    out, err = io.StringIO(), io.StringIO()
    with _recording() as opened, contextlib.redirect_stdout(_Tee(sys.stdout, out)), \
            contextlib.redirect_stderr(_Tee(sys.stderr, err)):
        rc = run()
    if rc == 2:
        return rc
    files = _module_files(set(sys.modules) - before) | {
        p for p in opened if not p.endswith((".pyc", ".pyo"))
    }
    _store(folder, entry, {
        "format": _FORMAT,
        "files": _fingerprints(files, folder),
        "absent": _nearby(targets),
        "folders": {f: _folder_listing(f) for f in targets if os.path.isdir(f)},
        "stdout": out.getvalue(),
        "stderr": err.getvalue(),
        "rc": rc,
    })
    return rc


class _Tee(io.TextIOBase):
    """Writes through to the real stream and keeps a copy for the cache."""

    def __init__(self, real: Any, copy: io.StringIO) -> None:
        self._real, self._copy = real, copy

    def write(self, text: str) -> int:
        self._copy.write(text)
        return int(self._real.write(text))

    def flush(self) -> None:
        self._real.flush()

    def isatty(self) -> bool:
        return bool(self._real.isatty())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._real, "encoding", "utf-8"))


def _key(argv: Sequence[str]) -> str:
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("STEPSWITCH_"))
    material = {
        "format": _FORMAT,
        "argv": list(argv),
        "cwd": os.getcwd(),
        "path": sys.path,
        "python": sys.version,
        "env": env,
        "stepswitch": [__version__, _own_fingerprint()],
    }
    text = json.dumps(material, sort_keys=True)
    return _hash(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _own_fingerprint() -> str:
    """The size and modification time of every file of the stepswitch package."""
    digest = _hash()
    for dirpath, dirs, names in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            st = os.stat(os.path.join(dirpath, name))
            digest.update(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode(
                "utf-8", "surrogatepass"))
    return digest.hexdigest()


def _module_files(names: set[str]) -> set[str]:
    files: set[str] = set()
    for name in names:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            files.add(file)
    return files


def _library_folders() -> tuple[str, ...]:
    """The interpreter's and the environment's own folders (the standard library and
    installed packages), whose files are fingerprinted by size and modification time."""
    folders = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return tuple(sorted(f + os.sep for f in folders))


def _fingerprints(files: set[str], cache: Path) -> dict[str, str]:
    library = _library_folders()
    skip = (os.path.realpath(cache) + os.sep, str(_PACKAGE) + os.sep)  # the package: by _key
    prints: dict[str, str] = {}
    for file in sorted(files):
        real = os.path.realpath(file)
        if real.startswith(skip) or not os.path.isfile(real):
            continue
        prints[real] = _fingerprint(real, library)
    return prints


def _fingerprint(real: str, library: tuple[str, ...]) -> str:
    if real.startswith(library):
        st = os.stat(real)
        return f"stat:{st.st_size}:{st.st_mtime_ns}"
    with open(real, "rb") as handle:
        return "blake2b:" + _hash(handle.read()).hexdigest()


def _nearby(targets: Sequence[str]) -> list[str]:
    """The ``pyproject.toml`` and lock files that do not exist where the check looked."""
    starts = {os.getcwd()}
    for target in targets:
        path = target.rpartition(":")[0] if target.count(":") and not os.path.exists(target) \
            else target
        if os.path.exists(path):
            real = os.path.realpath(path)
            starts.add(real if os.path.isdir(real) else os.path.dirname(real))
    absent: set[str] = set()
    for start in starts:
        folder = Path(start)
        for place in (folder, *folder.parents):
            absent.update(str(place / n) for n in _NEARBY if not (place / n).exists())
    return sorted(absent)


def _folder_listing(folder: str) -> list[str]:
    return [str(p) for p in python_files(folder)]


def _load(entry: Path) -> dict[str, Any] | None:
    """The stored answer if every file it depends on is as it was, else ``None``."""
    try:
        answer = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    try:
        if answer.get("format") != _FORMAT:
            return None
        library = _library_folders()
        for path, expected in answer["files"].items():
            if _fingerprint(path, library) != expected:
                return None
        if any(os.path.exists(p) for p in answer["absent"]):
            return None
        for folder, listing in answer["folders"].items():
            if _folder_listing(folder) != listing:
                return None
        if not isinstance(answer["stdout"], str) or not isinstance(answer["stderr"], str):
            return None
        int(answer["rc"])
    except (OSError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return dict(answer)


def _store(folder: Path, entry: Path, answer: dict[str, Any]) -> None:
    """Write the answer atomically; a cache that cannot be written is no cache, not an error."""
    try:
        folder.mkdir(exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# written by stepswitch check; a cache is not for git\n*\n",
                              encoding="utf-8")
        temporary = entry.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(answer), encoding="utf-8")
        os.replace(temporary, entry)
    except OSError:
        return
