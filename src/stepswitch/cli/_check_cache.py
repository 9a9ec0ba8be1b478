"""The ``check`` cache: a re-check of files nothing changed in answers without importing them.

``stepswitch check`` keeps each invocation's answer (its output and exit code) in
``.stepswitch_cache/`` of the working directory, keyed by everything that decides it:

- the command line as given (the words after ``check``: a re-check is answered by
  :func:`replay` before any parser is built), the working directory, ``sys.path``,
  the Python version and the ``STEPSWITCH_*`` environment;
- stepswitch itself: its version and the size and modification time of every file of the
  installed package (so an edited checkout is a new stepswitch, even at the same version);
- every file the check read: each module its imports loaded and every file opened while
  it ran (``pyproject.toml``, ``stepswitch.mcp.lock``, prompt files a module reads), seen
  through an audit hook, by content hash (files of the interpreter and its environment,
  such as the standard library or an installed SDK, by size and modification time);
- files whose *absence* decided it: ``pyproject.toml`` and ``stepswitch.mcp.lock`` in
  each folder from a target or the working directory up, and the ``.py`` files of each
  folder TARGET, so adding one is a change too;
- every folder listed while it ran: the import system lists each folder it looks for a
  module in (so a module or package that now exists where an import looked and found
  nothing, or that now comes first, is a change), and so does a module that globs or
  scans a folder. A folder of the interpreter or its environment by its modification
  time (which adding or removing an entry changes), any other by the names in it.

What the cache cannot see is a decision by a file's existence alone (``os.path.exists``,
``os.stat``: Python raises no audit event for those), by the network or by an
environment variable not named ``STEPSWITCH_*``; ``--no-cache`` is for such a project.

A stale answer is the failure this guards against, so anything unreadable, missing or
different is a miss and the check runs for real. A check that could not import a target
(exit 2) is not kept: the cause is usually the environment, not the files.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys

from stepswitch._files import python_file_names
from stepswitch._version import __version__

try:  # hashlib loads OpenSSL: most of this module's import time (python -X importtime)
    from _blake2 import blake2b as _hash
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b as _hash

# typing's, without importing typing: a re-check answered from the cache loads only os,
# sys, io, json and this module (no typing, pathlib, contextlib or argparse), which is
# most of what it costs beyond the interpreter's own start
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

__all__ = ["CACHE_DIR", "cached_check", "replay"]

CACHE_DIR = ".stepswitch_cache"
_FORMAT = 2  # 2: keyed by the command line as given (1: by the parsed options)
_NEARBY = ("pyproject.toml", "stepswitch.mcp.lock")

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

_opened: set[str] | None = None  # the files opened while a check is being recorded
_listed: set[str] | None = None  # and the folders listed
_hooked = False


_SPAWNS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.spawn", "os.system",
                     "os.exec", "os.fork"})
"""Audit events of a process started: what it reads, the cache cannot see."""
_spawned = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    global _spawned
    if _opened is None:
        return
    if event in _SPAWNS:
        _spawned = True  # an MCP server started over stdio, say: the answer is not kept
        return
    if event in ("os.listdir", "os.scandir"):
        if _listed is not None and args and isinstance(args[0], str | bytes):
            # the path as given, not resolved: a symlink re-pointed later must miss
            _listed.add(os.path.abspath(os.fsdecode(args[0])))
        return
    if event != "open" or len(args) < 3:
        return
    path, mode, flags = args[0], args[1], args[2]
    if isinstance(mode, str):
        if "r" not in mode and "+" not in mode:
            return  # written, not read: it cannot have shaped the answer
    elif isinstance(flags, int) and flags & os.O_ACCMODE == os.O_WRONLY:
        return
    if isinstance(path, str):
        _opened.add(os.path.abspath(path))
    elif isinstance(path, bytes):
        _opened.add(os.path.abspath(os.fsdecode(path)))


class _Recording:
    """While entered, the files opened for reading are added to ``seen`` and the folders
    listed to ``listed``."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.listed: set[str] = set()

    def __enter__(self) -> _Recording:
        global _opened, _listed, _hooked, _spawned
        _spawned = False
        if not _hooked:  # an audit hook cannot be removed: one per process, idle between
            sys.addaudithook(_audit)
            _hooked = True
        _opened, _listed = self.seen, self.listed
        # the import system keeps each folder's listing from the first look on: drop
        # them, so every folder an import looks in while the check runs is listed again
        # (and seen), including those stepswitch's own start-up already looked in
        import importlib

        importlib.invalidate_caches()
        return self

    def __exit__(self, *exc: object) -> None:
        global _opened, _listed
        _opened = _listed = None


def _entry(argv: Sequence[str]) -> tuple[str, str] | None:
    """The cache folder and the entry's path for ``argv``; None when the cache is off."""
    if os.environ.get("STEPSWITCH_NO_CACHE"):
        return None
    folder = os.environ.get("STEPSWITCH_CACHE_DIR") or CACHE_DIR
    return folder, os.path.join(folder, f"check-{_key(argv)}.json")


def replay(argv: Sequence[str]) -> int | None:
    """Answer ``stepswitch check ARGV`` from the cache, before its parser is built: the
    stored output written and its exit code returned; None for a miss (or for a command
    line that asks for no cache: ``--no-cache`` or any abbreviation argparse would take
    for it), and the check then runs as usual. The key is the command line as given, so
    another spelling of the same options is only another entry, never a wrong one."""
    if any(word.startswith("--n") for word in argv):
        return None
    place = _entry(argv)
    answer = None if place is None else _load(place[1])
    if answer is None:
        return None
    sys.stdout.write(answer["stdout"])
    sys.stderr.write(answer["stderr"])
    return int(answer["rc"])


def cached_check(
    argv: Sequence[str], targets: Sequence[str], run: Callable[[], int], *, use: bool = True
) -> int:
    """Run ``run`` (a whole ``check``, writing to stdout and stderr) and store its answer.
    ``argv`` is the command line after ``check``, ``targets`` the TARGETs. The stored
    answer is read by :func:`replay`, which ``main()`` asks before it builds the parser:
    when this runs, the entry was missing or stale (or, for a word that could be
    ``--no-cache``, not looked up)."""
    place = _entry(argv) if use else None
    if place is None:
        return run()
    folder, entry = place
    import contextlib

    # made before the check runs, so that the listing of the folder holding it (the
    # working directory, usually) is the same now and on the next run
    with contextlib.suppress(OSError):
        os.mkdir(folder)
    before = set(sys.modules)
    out, err = io.StringIO(), io.StringIO()
    with _Recording() as recorded, contextlib.redirect_stdout(_Tee(sys.stdout, out)), \
            contextlib.redirect_stderr(_Tee(sys.stderr, err)):
        rc = run()
    if rc == 2 or _spawned:
        # a usage or import error is not kept; nor is an answer that depended on a
        # process the check started (an MCP server's files are not seen by the audit)
        return rc
    files = _module_files(set(sys.modules) - before) | {
        p for p in recorded.seen if not p.endswith((".pyc", ".pyo"))
    }
    _store(folder, entry, {
        "format": _FORMAT,
        "files": _fingerprints(files, folder),
        "absent": _nearby(targets),
        "folders": {f: python_file_names(f) for f in targets if os.path.isdir(f)},
        "listed": _listings(recorded.listed, folder),
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

    def fileno(self) -> int:
        # a process the check starts (an MCP server over stdio) writes to the real
        # stream: the check that started one is not kept (see _audit)
        return int(self._real.fileno())

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


def _fingerprints(files: set[str], cache: str) -> dict[str, str]:
    """Each file by the path it was read through (a symlink is not resolved: re-pointed,
    the same path reads another file, and the entry misses), classified by where it
    really is: the interpreter's and the environment's files by size and time."""
    library = _library_folders()
    skip = (os.path.realpath(cache) + os.sep, _PACKAGE + os.sep)  # the package: by _key
    prints: dict[str, str] = {}
    for file in sorted(files):
        path = os.path.abspath(file)
        real = os.path.realpath(path)
        if real.startswith(skip) or not os.path.isfile(real):
            continue
        prints[path] = _fingerprint(path, by_stat=real.startswith(library))
    return prints


def _fingerprint(path: str, *, by_stat: bool) -> str:
    if by_stat:
        st = os.stat(path)
        return f"stat:{st.st_size}:{st.st_mtime_ns}"
    with open(path, "rb") as handle:
        return "blake2b:" + _hash(handle.read()).hexdigest()


def _listings(folders: set[str], cache: str) -> dict[str, str]:
    library = _library_folders()
    skip = (os.path.realpath(cache), _PACKAGE)  # the package's own files: by _key
    listings: dict[str, str] = {}
    for folder in sorted(folders):
        real = os.path.realpath(folder)
        if not any(real == s or real.startswith(s + os.sep) for s in skip):
            listings[folder] = _listing(folder, by_stat=(real + os.sep).startswith(library))
    return listings


def _listing(folder: str, *, by_stat: bool) -> str:
    """What stands for a folder's entries (``folder`` as it was listed, symlinks and
    all): its modification time for a folder of the interpreter or its environment,
    else a hash of its names; ``none`` when it is not a folder that can be listed (an
    import may have looked in one that does not exist)."""
    try:
        if by_stat:
            st = os.stat(folder)
            return f"stat:{st.st_mtime_ns}" if stat.S_ISDIR(st.st_mode) else "none"
        names = sorted(os.listdir(folder))
    except OSError:
        return "none"
    return "names:" + _hash("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


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
        place = start
        while True:  # the folder and each one above it, up to the root
            for name in _NEARBY:
                path = os.path.join(place, name)
                if not os.path.exists(path):
                    absent.add(path)
            parent = os.path.dirname(place)
            if parent == place:
                break
            place = parent
    return sorted(absent)


def _load(entry: str) -> dict[str, Any] | None:
    """The stored answer if every file it depends on is as it was, else ``None``."""
    try:
        with open(entry, encoding="utf-8") as handle:
            answer = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    try:
        if answer.get("format") != _FORMAT:
            return None
        # how each was fingerprinted is in what was stored: no path is resolved again
        for path, expected in answer["files"].items():
            if _fingerprint(path, by_stat=expected.startswith("stat:")) != expected:
                return None
        if any(os.path.exists(p) for p in answer["absent"]):
            return None
        for folder, listing in answer["folders"].items():
            if python_file_names(folder) != listing:
                return None
        for folder, listing in answer["listed"].items():
            if _listing(folder, by_stat=listing.startswith("stat:")) != listing:
                return None
        if not isinstance(answer["stdout"], str) or not isinstance(answer["stderr"], str):
            return None
        int(answer["rc"])
    except (OSError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return dict(answer)


def _store(folder: str, entry: str, answer: dict[str, Any]) -> None:
    """Write the answer atomically into ``folder`` (made by :func:`cached_check` before
    the check ran); a cache that cannot be written is no cache, not an error."""
    try:
        ignore = os.path.join(folder, ".gitignore")
        if not os.path.exists(ignore):
            with open(ignore, "w", encoding="utf-8") as handle:
                handle.write("# written by stepswitch check; a cache is not for git\n*\n")
        temporary = f"{entry.removesuffix('.json')}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(answer))
        os.replace(temporary, entry)
    except OSError:
        return
