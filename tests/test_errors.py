"""The one exception tree (CONVENTIONS 13): every exception class the package defines is
in the tree ``stepswitch.errors`` draws in its docstring, drawn under its real base, or
private (an ``_underscore`` name, or a private module's that no public module exports).

The classes are found by importing every module of the package and keeping the
exception classes each one defines; the drawing is read line by line (its ``├──``
and ``└──`` marks give each name's parent).
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import stepswitch
import stepswitch.errors as errors
from stepswitch.errors import StepswitchError

_OPTIONAL = ("stepswitch.temporal", "stepswitch.sessions.postgres", "stepswitch.sessions.redis",
             "stepswitch.interop", "stepswitch.otel", "stepswitch.sessions.sdk",
             "stepswitch.models.pytest_plugin")
"""Modules that load optional extras: their classes are checked where those are installed."""

_OUTSIDE = (AssertionError, Warning)
"""The drawing's second part: a failed test (the test doubles) and warnings."""


def _modules() -> dict[str, object]:
    found: dict[str, object] = {}
    for info in pkgutil.walk_packages(stepswitch.__path__, "stepswitch."):
        if info.name.endswith("__main__"):
            continue
        try:
            found[info.name] = importlib.import_module(info.name)
        except ImportError:
            if not info.name.startswith(_OPTIONAL):
                raise
    return found


def _public_exports(modules: dict[str, object]) -> set[int]:
    """The ids of every object a public module lists in its ``__all__``."""
    out: set[int] = set()
    for name, module in modules.items():
        if any(part.startswith("_") for part in name.split(".")):
            continue
        out.update(id(getattr(module, n, None)) for n in getattr(module, "__all__", ()))
    return out


def _private(cls: type, exported: set[int]) -> bool:
    if cls.__name__.startswith("_"):
        return True
    private_module = any(part.startswith("_") for part in cls.__module__.split("."))
    return private_module and id(cls) not in exported


def _defined() -> dict[str, type[BaseException]]:
    """Every public exception class defined in the package, by name."""
    modules = _modules()
    exported = _public_exports(modules)
    found: dict[str, type[BaseException]] = {}
    for name, module in modules.items():
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, BaseException)
                    and value.__module__ == name and not _private(value, exported)):
                assert found.get(value.__name__, value) is value, value.__name__
                found[value.__name__] = value
    return found


_MARK = re.compile(r"^(?P<lead>[│ ]*)(?:[├└]── )?(?P<name>[A-Z]\w*)\b")


def drawn_tree(doc: str) -> dict[str, str | None]:
    """``name -> parent`` for every name the docstring's drawings show (a root: None)."""
    parents: dict[str, str | None] = {}
    stack: list[str] = []
    for block in re.findall(r"::\n\n((?:    .*\n|\n)+)", doc):
        stack = []
        for line in block.splitlines():
            line = line[4:]
            match = _MARK.match(line)
            if match is None or not line.strip():
                continue
            is_child = "──" in line[: match.start("name")]
            depth = len(match["lead"]) // 4 + 1 if is_child else 0
            if not is_child and match["lead"].strip():
                continue  # a description's second line
            stack = stack[:depth]
            parents[match["name"]] = stack[-1] if stack else None
            stack.append(match["name"])
    return parents


def test_every_exception_class_is_drawn_under_its_base() -> None:
    drawn = drawn_tree(errors.__doc__ or "")
    defined = _defined()
    missing = sorted(set(defined) - set(drawn))
    assert missing == [], f"draw these in stepswitch/errors.py's tree: {missing}"
    stale = sorted(set(drawn) - set(defined) - {"AssertionError", "UserWarning"})
    assert stale == [], f"the tree draws classes that do not exist: {stale}"
    for name, cls in defined.items():
        parent = drawn[name]
        base = cls.__mro__[1]
        if parent is None:  # a root: StepswitchError
            assert base is Exception, f"{name} is drawn as a root, but its base is {base}"
        else:
            assert parent == base.__name__, f"{name} is drawn under {parent}; its base is {base}"


def test_every_exception_class_is_a_stepswitch_error_but_a_failed_test_or_a_warning() -> None:
    outside = sorted(n for n, cls in _defined().items()
                     if not issubclass(cls, (StepswitchError, *_OUTSIDE)))
    assert outside == [], "derive them from a class of stepswitch.errors"


def test_every_class_of_the_tree_is_defined_in_errors_and_exported() -> None:
    tree = {n for n, cls in _defined().items() if issubclass(cls, StepswitchError)}
    assert {n for n in tree if _defined()[n].__module__ != "stepswitch.errors"} == set()
    assert tree == set(errors.__all__)


@pytest.mark.parametrize(("module", "name"), [
    ("stepswitch.review", "TrailError"),
    ("stepswitch.review.trail_read", "TrailError"),
    ("stepswitch.review.replay", "ReplayError"),
    ("stepswitch.review.cases", "CaseError"),
    ("stepswitch.render", "GraphvizNotFound"),
    ("stepswitch.render.graphviz_bin", "GraphvizNotFound"),
    ("stepswitch.runtime.tools", "ArgumentError"),
    ("stepswitch.studio.server", "BuildError"),
    ("stepswitch.temporal", "ToolFailure"),
])
def test_a_class_still_imports_from_the_module_it_belongs_to(module: str, name: str) -> None:
    try:
        mod = importlib.import_module(module)
    except ImportError:
        if module.startswith(_OPTIONAL):
            pytest.skip(f"{module} needs an extra")
        raise
    assert getattr(mod, name) is getattr(errors, name)
    assert name in mod.__all__


def test_the_reader_of_the_drawing_sees_parents_and_continuation_lines() -> None:
    doc = (
        "Tree::\n\n"
        "    Root                 the root\n"
        "    ├── A                a child, whose note\n"
        "    │                    goes on here\n"
        "    │   └── B            a grandchild\n"
        "    └── C\n"
        "        └── D\n"
        "\nText.::\n\n"
        "    Other\n"
        "    └── E                another root's child\n"
    )
    assert drawn_tree(doc) == {"Root": None, "A": "Root", "B": "A", "C": "Root", "D": "C",
                               "Other": None, "E": "Other"}
