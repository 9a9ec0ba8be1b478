"""One name, one class: no two classes or type aliases exported by the package share a
name, and the renamed spellings still import, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import pkgutil
import types
import typing
import warnings

import pytest

import stepswitch

# Modules that load optional extras (temporalio, opentelemetry, psycopg, redis, the SDK);
# the names they export are checked where those extras are installed.
_OPTIONAL = ("stepswitch.temporal", "stepswitch.sessions.postgres", "stepswitch.sessions.redis",
             "stepswitch.interop", "stepswitch.otel", "stepswitch.sessions.sdk",
             "stepswitch.models.pytest_plugin")


def _is_type(obj: object) -> bool:
    """A class, or a type alias (``Literal[...]``, ``A | B``, ``X[...]``)."""
    return (isinstance(obj, type | types.UnionType)
            or typing.get_origin(obj) is not None)


def _exports() -> dict[str, dict[int, list[str]]]:
    """Every class or type alias exported through some module's ``__all__``:
    name -> id -> modules."""
    seen: dict[str, dict[int, list[str]]] = {}
    for info in pkgutil.walk_packages(stepswitch.__path__, "stepswitch."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            if info.name.startswith(_OPTIONAL):
                continue
            raise
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if _is_type(obj):
                seen.setdefault(name, {}).setdefault(id(obj), []).append(info.name)
    return seen


def test_no_two_exported_classes_or_type_aliases_share_a_name() -> None:
    shared = {name: sorted(m for mods in ids.values() for m in mods)
              for name, ids in _exports().items() if len(ids) > 1}
    assert shared == {}


def test_the_three_handoffs_have_three_names() -> None:
    from stepswitch.ir import HandoffTo
    from stepswitch.runtime.generated import HandoffStep

    assert {stepswitch.Handoff.__name__, HandoffTo.__name__, HandoffStep.__name__} == {
        "Handoff", "HandoffTo", "HandoffStep"}


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("stepswitch.ir", "HandOff", "HandoffTo"),
        ("stepswitch.runtime.generated", "HandOff", "HandoffTo"),
        ("stepswitch.runtime.generated", "Handoff", "HandoffStep"),
        ("stepswitch.testing", "Step", "ScriptStep"),
    ],
)
def test_old_spellings_still_import_with_a_warning(module: str, old: str, new: str) -> None:
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=new):
        value = getattr(mod, old)
    assert value is getattr(mod, new)


def test_a_runner_generated_with_the_old_names_still_runs() -> None:
    """What a runner written by an earlier stepswitch executes at import: the old names
    from ``stepswitch.runtime.generated``, and an IR literal spelled with them."""
    namespace: dict[str, object] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(
            "from stepswitch.runtime.generated import HandOff, Handoff\n"
            "action = HandOff(target='refund', max_uses=2)\n"
            "step = Handoff('refund')\n",
            namespace,
        )
    from stepswitch.ir import HandoffTo
    from stepswitch.runtime.generated import HandoffStep

    assert namespace["action"] == HandoffTo(target="refund", max_uses=2)
    assert namespace["step"] == HandoffStep("refund")
    assert sum(issubclass(w.category, DeprecationWarning) for w in caught) == 2
