"""Layering (DESIGN §1, docs/architecture.md): no two rooms of ``stepswitch`` import each
other, directly or round a longer circle.

A room is a top-level package (``stepswitch.dsl``) or top-level module
(``stepswitch.errors``) of the package; the package's own ``__init__`` is the room
``stepswitch``, which re-exports everything and is imported by nothing inside. Every
import is read with ``ast``, those inside functions and ``if TYPE_CHECKING:`` blocks
included, and so are the lazy ones: ``importlib.import_module("stepswitch.x")`` and a
table of module paths loaded on first use (``_WHERE = {"Name": "stepswitch.x"}``).

The one sanctioned reach to the right is ``FACADE``: the ``Workflow`` methods that hand
the user's workflow to a later stage (``wf.check()``, ``wf.compile()``, ...), and the
annotations of those methods. Each entry must still be used, so the list cannot go
stale.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

from tests._paths import ROOT

SRC = ROOT / "src" / "stepswitch"

FACADE: Mapping[tuple[str, str], frozenset[str]] = {
    ("stepswitch.dsl.workflow", "Workflow.check"): frozenset({"analysis"}),
    ("stepswitch.dsl.workflow", "Workflow.compile"): frozenset(
        {"analysis", "compiler", "runtime"}),
    ("stepswitch.dsl.workflow", "Workflow.to_mermaid"): frozenset({"render"}),
    ("stepswitch.dsl.workflow", "Workflow.to_dot"): frozenset({"render"}),
    # the return and parameter types of those methods (``-> StateMachine``, ...)
    ("stepswitch.dsl.workflow", "TYPE_CHECKING"): frozenset({"analysis", "render", "runtime"}),
}
"""``(module, where) -> rooms``: the imports the layering allows to point right. ``where``
is the method (``Class.method``) the import sits in, or ``TYPE_CHECKING`` for the
module's type-checking block."""


@dataclass(frozen=True)
class Import:
    module: str
    """The importing module (``stepswitch.dsl.workflow``)."""
    target: str
    """The module imported (``stepswitch.analysis``)."""
    file: Path
    line: int
    where: str
    """The enclosing ``Class.method``/function, ``TYPE_CHECKING``, or ``""`` (module level)."""


def module_name(path: Path, src: Path) -> str:
    parts = path.relative_to(src.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_paths(node: ast.AST, modules: set[str]) -> list[str]:
    """The module paths a lazy import names: ``import_module("x")``'s argument, or the
    values naming modules of the package in a dict display of strings (a lazy table)."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        arg = node.args[0]
        if name == "import_module" and isinstance(arg, ast.Constant) and arg.value in modules:
            return [arg.value]
    if isinstance(node, ast.Dict) and node.values:
        strings = [v.value for v in node.values
                   if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        if len(strings) == len(node.values):
            # a submodule's path: a bare "stepswitch" is a service name, not a load
            return [v for v in strings if v in modules and "." in v]
    return []


def imports(src: Path) -> list[Import]:
    """Every import of every module under ``src`` (a package folder)."""
    if src not in _READ:
        _READ[src] = list(_read(src))
    return _READ[src]


_READ: dict[Path, list[Import]] = {}


def _read(src: Path) -> Iterator[Import]:
    paths = sorted(src.rglob("*.py"))
    modules = {module_name(p, src) for p in paths}
    for path in paths:
        module = module_name(path, src)
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text("utf-8"), str(path))

        stack: list[tuple[ast.AST, str]] = [(tree, "")]
        while stack:
            node, where = stack.pop()
            for child in ast.iter_child_nodes(node):
                here = where
                if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    inside = where and where != "TYPE_CHECKING"
                    here = f"{where}.{child.name}" if inside else child.name
                elif isinstance(child, ast.If) and _is_type_checking(child.test) and not where:
                    here = "TYPE_CHECKING"
                if isinstance(child, ast.Import):
                    for alias in child.names:
                        yield Import(module, alias.name, path, child.lineno, here)
                elif isinstance(child, ast.ImportFrom):
                    origin = _absolute(child, module, is_package)
                    for alias in child.names:
                        sub = f"{origin}.{alias.name}"
                        yield Import(module, sub if sub in modules else origin, path,
                                     child.lineno, here)
                else:
                    for target in _module_paths(child, modules):  # a Call or a Dict
                        yield Import(module, target, path, getattr(child, "lineno", 0), here)
                    stack.append((child, here))


def room(module: str, package: str) -> str | None:
    """The room of ``module``, or None when it is not part of ``package``."""
    parts = module.split(".")
    if parts[0] != package:
        return None
    return parts[1] if len(parts) > 1 else package


def room_graph(src: Path, facade: Mapping[tuple[str, str], frozenset[str]]
               ) -> tuple[nx.DiGraph[str], set[tuple[str, str]]]:
    """Rooms and the imports between them (each edge keeps its first import as
    ``witness``), and the facade entries the imports used."""
    package = src.name
    graph: nx.DiGraph[str] = nx.DiGraph()
    used: set[tuple[str, str]] = set()
    for imp in imports(src):
        source, target = room(imp.module, package), room(imp.target, package)
        if source is None or target is None or source == target:
            continue
        where = imp.where.split(".")
        scopes = [".".join(where[:n]) for n in range(len(where), 0, -1)]
        allowed = next((s for s in scopes if target in facade.get((imp.module, s), ())), None)
        if allowed is not None:
            used.add((imp.module, allowed))
            continue
        if not graph.has_edge(source, target):
            graph.add_edge(source, target, witness=imp)
    return graph, used


def _shown(imp: Import, src: Path) -> str:
    place = f" (in {imp.where})" if imp.where else ""
    return f"{imp.file.relative_to(src.parent)}:{imp.line} imports {imp.target}{place}"


def cycles(src: Path, facade: Mapping[tuple[str, str], frozenset[str]] = FACADE
           ) -> list[str]:
    """One line per import circle between rooms: the circle, then the import that makes
    each of its steps."""
    graph, _ = room_graph(src, facade)
    found = []
    for component in sorted(nx.strongly_connected_components(graph), key=sorted):
        if len(component) < 2:
            continue
        circle = nx.find_cycle(graph.subgraph(component), source=min(component))
        steps = [graph.edges[a, b]["witness"] for a, b in circle]
        rooms = " → ".join([a for a, _ in circle] + [circle[0][0]])
        others = sorted(component - {a for a, _ in circle})
        also = f" (and round {', '.join(others)} too)" if others else ""
        found.append(f"{rooms}{also}: " + "; ".join(_shown(s, src) for s in steps))
    return found


def test_no_two_rooms_import_each_other() -> None:
    found = cycles(SRC)
    assert found == [], (
        "rooms import each other (move what both need to the room on the left, or "
        "hand it over as data):\n" + "\n".join(found))


def test_every_facade_entry_is_still_used() -> None:
    _, used = room_graph(SRC, FACADE)
    assert set(FACADE) - used == set(), "drop the entries nothing uses from FACADE"


def test_the_facade_reaches_right_and_nothing_else_does() -> None:
    """Without the allow-list, the facade's own imports are what closes a circle (the
    analyzer reads the graph the DSL builds): proof the list is what lets them in."""
    assert cycles(SRC, facade={}) != []


def _documented(text: str) -> tuple[set[str], dict[str, set[str]]]:
    """docs/architecture.md's leaves, and each other room's row: the rooms it reads."""
    section = text.split("## Rooms and what each reads", 1)[1]
    leaves_line = next(line for line in section.split("\n\n") if line.startswith("**Leaves**"))
    leaves = set(re.findall(r"`(\w+)`", leaves_line))
    rows = {m[1]: set(re.findall(r"`(\w+)`", m[2]))
            for m in re.finditer(r"^\| `(\w+)` \| (.*) \|$", section, re.MULTILINE)}
    return leaves, rows


def leaves(graph: nx.DiGraph[str], src: Path) -> set[str]:
    """The top-level modules that read only each other (``errors``, ``ir``, ``_site``)."""
    modules = {p.stem for p in src.glob("*.py") if p.stem != "__init__"}
    found: set[str] = set()
    while more := {m for m in modules - found
                   if m not in graph or set(graph.successors(m)) <= found}:
        found |= more
    return found


def test_docs_architecture_shows_the_rooms_as_they_are() -> None:
    graph, _ = room_graph(SRC, FACADE)
    leaf = leaves(graph, SRC)
    actual = {r: set(graph.successors(r)) - leaf for r in graph if r not in leaf}
    doc_leaves, doc_rows = _documented((ROOT / "docs" / "architecture.md").read_text("utf-8"))
    assert doc_leaves == leaf, "docs/architecture.md: the leaves"
    assert doc_rows == actual, "docs/architecture.md: the rooms' rows"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return root / "pkg"


def test_a_planted_circle_is_found_and_named(tmp_path: Path) -> None:
    """The import closing the circle hides where the review of PR diffs misses it: inside
    a function, under ``TYPE_CHECKING``, or as a lazy table."""
    src = _tree(tmp_path, {
        "__init__.py": "",
        "a.py": "def f():\n    from pkg.b import g\n    return g\n",
        "b/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                         "    from pkg.c import h\n",
        "c.py": "_WHERE = {'os': 'os', 'x': 'pkg.a'}\n",
        "d.py": "from . import a\n",  # points in, closes nothing
    })
    assert cycles(src, facade={}) == [
        "a → b → c → a: "
        "pkg/a.py:2 imports pkg.b (in f); "
        "pkg/b/__init__.py:3 imports pkg.c (in TYPE_CHECKING); "
        "pkg/c.py:1 imports pkg.a"
    ]


@pytest.mark.parametrize("closing", [
    "from .a import f\n",
    "import pkg.a\n",
    "def later():\n    import importlib\n    return importlib.import_module('pkg.a')\n",
    "from pkg import a\n",
])
def test_each_form_of_import_closes_a_circle(tmp_path: Path, closing: str) -> None:
    src = _tree(tmp_path, {"__init__.py": "", "a.py": "from pkg import b\n", "b.py": closing})
    found = cycles(src, facade={})
    assert len(found) == 1 and found[0].startswith("a → b → a: "), found


def test_an_allowed_method_does_not_close_a_circle_but_its_neighbour_does(
        tmp_path: Path) -> None:
    src = _tree(tmp_path, {
        "__init__.py": "",
        "front.py": "class W:\n"
                    "    def check(self):\n        from pkg.back import run\n"
                    "    def other(self):\n        from pkg.back import run\n",
        "back.py": "from pkg.front import W\n",
    })
    assert cycles(src, facade={("pkg.front", "W.check"): frozenset({"back"})}) == [
        "back → front → back: pkg/back.py:1 imports pkg.front; "
        "pkg/front.py:5 imports pkg.back (in W.other)"
    ]
    graph, used = room_graph(src, {("pkg.front", "W.check"): frozenset({"back"}),
                                   ("pkg.front", "W.other"): frozenset({"back"})})
    assert list(graph.edges) == [("back", "front")]
    assert used == {("pkg.front", "W.check"), ("pkg.front", "W.other")}
