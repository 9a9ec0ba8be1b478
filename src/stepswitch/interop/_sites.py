"""Declaration sites for SDK agents: the SDK records none, so read the module's source.

One AST pass per file finds ``Agent(name="...")`` calls (also ``Agent[Ctx](...)``,
``agents.Agent(...)`` and ``x.clone(name="...")``), keyed both by the variable they are
assigned to and by the literal name. A call whose name is computed (a factory's
``Agent(name=name)``, a comprehension's ``Agent(name=n)``, ``clone(name=f"{lang}_agent")``)
is kept too, with the pattern an f-string's constant parts give; :meth:`SourceSites.computed_sites`
matches an agent's name against them. Functions carry their own ``def`` line already.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import field
from typing import Literal

from stepswitch._dataclass import dataclass
from stepswitch._site import Site

__all__ = ["Builder", "SourceSites", "agent_builders", "modules_holding", "sites_in"]


@dataclass(slots=True)
class SourceSites:
    """What one file declares: agent calls assigned to module-level variables (read
    first, from the top-level statements only) and, on demand, every agent call by its
    literal name (a walk of the whole tree)."""

    file: str
    tree: ast.Module | None = None
    by_variable: dict[str, int] = field(default_factory=dict)
    _by_name: dict[str, int] | None = None
    _computed: list[tuple[int, re.Pattern[str] | None]] | None = None

    @property
    def by_name(self) -> dict[str, int]:
        if self._by_name is None:
            self._by_name, self._computed = {}, []
            for node in ast.walk(self.tree) if self.tree is not None else ():
                if isinstance(node, ast.Call) and _is_agent_call(node):
                    name = _literal_name(node)
                    if name is not None:
                        self._by_name.setdefault(name, node.lineno)
                    elif (pattern := _computed_name(node)) is not False:
                        self._computed.append((node.lineno, pattern))
        return self._by_name

    def computed_sites(self, name: str) -> tuple[list[Site], list[Site]]:
        """The agent calls whose computed ``name=`` can give ``name``: those an f-string
        pattern matches, and those of a name the source cannot tell (``name=n``)."""
        self.by_name  # noqa: B018 -- fills _computed
        matched: list[Site] = []
        anything: list[Site] = []
        for line, pattern in self._computed or ():
            if pattern is None:
                anything.append(Site(self.file, line))
            elif pattern.fullmatch(name):
                matched.append(Site(self.file, line))
        return matched, anything

    def site_of(self, variable: str | None, name: str) -> Site | None:
        line = self.by_variable.get(variable or "") or self.by_name.get(name)
        return Site(self.file, line) if line else None


_CACHE: dict[tuple[str, float], SourceSites] = {}


def _is_agent_call(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Subscript):  # Agent[Ctx](...)
        func = func.value
    if isinstance(func, ast.Name):
        return func.id == "Agent"
    if isinstance(func, ast.Attribute):
        return func.attr in ("Agent", "clone")
    return False


def _literal_name(node: ast.Call) -> str | None:
    for kw in node.keywords:
        if kw.arg == "name" and isinstance(kw.value, ast.Constant):
            value = kw.value.value
            return value if isinstance(value, str) else None
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(
        node.args[0].value, str
    ):
        return node.args[0].value
    return None


def _computed_name(node: ast.Call) -> re.Pattern[str] | Literal[False] | None:
    """For an agent call whose name is not a literal: the pattern of an f-string name
    (its constant parts, anything between), None for another expression, False for a
    call with no name at all (``clone()`` keeps the original's)."""
    value = next((kw.value for kw in node.keywords if kw.arg == "name"), None)
    if value is None and node.args and not (
        isinstance(node.func, ast.Attribute) and node.func.attr == "clone"
    ):
        value = node.args[0]
    if value is None:
        return False
    if isinstance(value, ast.JoinedStr):
        parts = [re.escape(str(v.value)) if isinstance(v, ast.Constant) else ".*"
                 for v in value.values]
        return re.compile("".join(parts), re.DOTALL)
    return None


@dataclass(frozen=True, slots=True)
class Builder:
    """A module-level function that declares agents (``Agent(...)``, ``Workflow(...)``)
    or starts a run (``Runner.run*``, ``.run_sync(...)``...): a function TARGET."""

    name: str
    line: int
    runs: bool
    """It starts a run itself (then it is the app's ``main``)."""


_RUN_CALLS = frozenset({"run", "run_sync", "run_streamed"})


def agent_builders(path: str) -> list[Builder]:
    """The module-level functions of ``path`` that build agents, those that run them
    first, each in source order (none for a file that does not parse)."""
    tree = sites_in(path).tree
    found: list[Builder] = []
    for node in tree.body if tree is not None else ():
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or _required(node):
            continue  # one that takes arguments cannot be called as a TARGET
        builds = runs = False
        for inner in ast.walk(node):
            if not isinstance(inner, ast.Call):
                continue
            func = inner.func
            if _is_agent_call(inner) or (isinstance(func, ast.Name) and func.id == "Workflow") \
                    or (isinstance(func, ast.Attribute) and func.attr == "Workflow"):
                builds = True
            elif isinstance(func, ast.Attribute) and func.attr in _RUN_CALLS:
                runs = True
        if builds or runs:
            found.append(Builder(node.name, node.lineno, runs))
    return sorted(found, key=lambda b: (not b.runs, b.line))


def _required(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters the function needs a value for."""
    a = node.args
    positional = len(a.posonlyargs) + len(a.args) - len(a.defaults)
    keyword = sum(1 for d in a.kw_defaults if d is None)
    return positional + keyword


def sites_in(path: str) -> SourceSites:
    """The agent declarations of one source file (cached by path and mtime)."""
    try:
        key = (path, os.stat(path).st_mtime)
    except OSError:
        return SourceSites(path)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    found = SourceSites(path)
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        _CACHE[key] = found
        return found
    found.tree = tree
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if _is_agent_call(node.value):
                for target in targets:
                    if isinstance(target, ast.Name):
                        found.by_variable.setdefault(target.id, node.lineno)
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(
            node.value, ast.List | ast.Tuple | ast.ListComp
        ):  # team = [Agent(name=n, ...) for n in NAMES]: the agent call inside
            inner = next((c for c in ast.walk(node.value)
                          if isinstance(c, ast.Call) and _is_agent_call(c)), None)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if inner is not None and isinstance(target, ast.Name):
                    found.by_variable.setdefault(target.id, inner.lineno)
    _CACHE[key] = found
    return found


def modules_holding(ids: set[int]) -> Iterable[tuple[str, str, object]]:
    """``(file, variable, value)`` for every module-level variable bound to one of the
    objects whose ``id`` is in ``ids``, or to a list or tuple holding one (modules of the
    standard library and site-packages cannot hold a user's agents, but checking them
    costs little and keeps this simple)."""
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file or not file.endswith(".py"):
            continue
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        for variable, value in items:
            if id(value) in ids:
                yield file, variable, value
            elif type(value) in (list, tuple):  # a module-level list of agents
                for item in value:
                    if id(item) in ids:
                        yield file, variable, item
