"""Load one side of a diff (``stepswitch diff``, the studio page): a TARGET, or
``git:REF:TARGET``. Not API.

A git side is read without touching the work tree or the index: ``git archive`` writes
the commit's tree to a temporary folder, and the TARGET is imported from there as if
the working directory were the same folder of that tree (so declaration sites read
``graphs/support.py:12`` on both sides). Each side is imported in isolation: the
modules it brought in are dropped from ``sys.modules`` once its specs are built, and
``sys.path`` and the working directory are restored, so two versions of one module
never meet. Only the frozen specs leave this module.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stepswitch._dataclass import dataclass
from stepswitch.errors import TargetError, UserError
from stepswitch.graph.spec import WorkflowSpec
from stepswitch.policies import Policy, as_spec
from stepswitch.targets.load import load_targets

__all__ = ["LoadedSpec", "Side", "load_side", "parse_side"]

GIT_PREFIX = "git:"


@dataclass(frozen=True, slots=True)
class Side:
    """A parsed BASE or HEAD argument."""

    text: str
    target: str
    ref: str | None = None
    """The git ref, for ``git:REF:TARGET``; None for the work tree."""

    @property
    def where(self) -> str:
        return "the work tree" if self.ref is None else f"git {self.ref}"


@dataclass(frozen=True, slots=True)
class LoadedSpec:
    """One workflow of a side: its label, its attribute name and its spec."""

    label: str
    attribute: str
    spec: WorkflowSpec
    key: str = ""
    """``file.py:NAME`` as seen from the working directory, the same on both sides."""
    module: str = ""
    """The module the workflow is declared in (``app_old`` for ``app_old.py``)."""


def parse_side(text: str) -> Side:
    if not text.startswith(GIT_PREFIX):
        return Side(text, text)
    rest = text[len(GIT_PREFIX):]
    ref, sep, target = rest.partition(":")
    if not sep or not ref or not target:
        raise TargetError(f"{text}: expected git:REF:TARGET, e.g. git:main:graphs/support.py")
    return Side(text, target, ref)


def load_side(side: Side) -> list[LoadedSpec]:
    """Every workflow the side names, as specs."""
    if side.ref is None:
        with _isolated(None):
            return _specs(side)
    top, prefix = _repo()
    commit = _git(["rev-parse", "--verify", "--quiet", f"{side.ref}^{{commit}}"], top)
    if commit is None:
        raise TargetError(f"{side.text}: no commit named {side.ref!r} in the git repository "
                          f"at {top}")
    tmp = tempfile.mkdtemp(prefix="stepswitch-diff-")
    try:
        _export(commit.strip(), top, Path(tmp), side)
        folder = Path(tmp, prefix)
        folder.mkdir(parents=True, exist_ok=True)
        with _isolated(folder):
            return _specs(side, Path(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _specs(side: Side, export: Path | None = None) -> list[LoadedSpec]:
    try:
        loaded = load_targets([side.target])
        policies = _side_policies(export)
    except UserError as exc:  # a TargetError, or the side's own pyproject is malformed
        if side.ref is None:
            raise
        raise TargetError(f"{exc} (at git {side.ref})") from None
    out = []
    for item in loaded:
        label = item.label if side.ref is None else f"{item.label}@{side.ref}"
        spec = item.workflow.to_spec()
        own = tuple(as_spec(p) for p in policies if p.applies_to(spec.name))
        if own:  # proved as the side's own: one removed since is a safety change
            spec = spec.model_copy(update={"policies": (*spec.policies, *own)})
        out.append(LoadedSpec(label, item.attribute, spec, item.label, item.module))
    return out


def _side_policies(export: Path | None) -> tuple[Policy, ...]:
    """The ``[tool.stepswitch] policies`` of the side's own ``pyproject.toml``: the work
    tree's (from the working directory up), or the one in the commit a git side was
    exported from (never a file outside that export)."""
    from stepswitch.policies import policies_from_pyproject

    if export is None:
        return policies_from_pyproject()
    here, top = Path.cwd().resolve(), export.resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return policies_from_pyproject(folder)
        if folder == top:
            break
    return ()


def _git(args: list[str], cwd: str | Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              check=False)
    except FileNotFoundError:
        raise TargetError("git:REF:TARGET needs the git command, which is not installed") \
            from None
    return done.stdout if done.returncode == 0 else None


def _repo() -> tuple[str, str]:
    """The repository's top folder and the working directory's path inside it."""
    top = _git(["rev-parse", "--show-toplevel"], os.getcwd())
    prefix = _git(["rev-parse", "--show-prefix"], os.getcwd())
    if top is None or prefix is None:
        raise TargetError(f"git:REF:TARGET: {os.getcwd()} is not inside a git repository")
    return top.strip(), prefix.strip()


def _export(commit: str, top: str, into: Path, side: Side) -> None:
    try:
        done = subprocess.run(["git", "archive", "--format=tar", commit], cwd=top,
                              capture_output=True, check=False)
    except FileNotFoundError:
        raise TargetError("git:REF:TARGET needs the git command, which is not installed") \
            from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise TargetError(f"{side.text}: git archive failed: {message[-1] if message else '?'}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(into, filter="data")


def _shared_roots() -> tuple[str, ...]:
    """Where installed code lives (stdlib, site-packages): never dropped."""
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(os.path.realpath(r) for r in roots)


def _users_module(name: str, module: object, shared: tuple[str, ...]) -> bool:
    if name == "stepswitch" or name.startswith("stepswitch."):
        return False
    file = getattr(module, "__file__", None)
    paths = [file] if file else list(getattr(module, "__path__", None) or ())
    if not paths:
        return False  # built-in
    return not all(os.path.realpath(p).startswith(shared) for p in paths)


@contextmanager
def _isolated(folder: Path | None) -> Iterator[None]:
    """Import a side from ``folder`` (the work tree when None) and forget its modules."""
    before = set(sys.modules)
    path = list(sys.path)
    cwd = os.getcwd()
    shared = _shared_roots()
    # A side must not find another copy of its modules already imported (the work
    # tree's, when it is a git side; a caller's, in-process): they are set aside.
    hidden = {n: m for n, m in list(sys.modules.items()) if _users_module(n, m, shared)}
    for name in hidden:
        del sys.modules[name]
    try:
        if folder is not None:
            os.chdir(folder)
        yield
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        for name in [n for n in sys.modules if n not in before or n in hidden]:
            module = sys.modules.get(name)
            if module is not None and _users_module(name, module, shared):
                del sys.modules[name]
        sys.modules.update(hidden)
