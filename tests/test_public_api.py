"""The curated public surface: __all__ is sorted and is exactly what the package exposes."""

from __future__ import annotations

import types

import stepswitch


def test_all_is_sorted_and_unique() -> None:
    assert list(stepswitch.__all__) == sorted(set(stepswitch.__all__))


def test_all_matches_the_public_names() -> None:
    # dir(), not vars(): the names load on first use (PEP 562), so vars() holds only
    # those used so far.
    public = {
        name
        for name in dir(stepswitch)
        if not name.startswith("_")
        and not isinstance(getattr(stepswitch, name), types.ModuleType)
    }
    assert public == set(stepswitch.__all__) - {"__version__"}


def test_every_exported_name_resolves() -> None:
    for name in stepswitch.__all__:
        assert getattr(stepswitch, name) is not None


def test_version_is_a_string() -> None:
    assert isinstance(stepswitch.__version__, str)
    assert stepswitch.__version__.count(".") == 2


def test_the_runtime_package_exports_what_its_modules_define() -> None:
    """``stepswitch.runtime`` loads its names on use too: each must resolve, from the
    module the table names, and the table must cover exactly ``__all__``."""
    import stepswitch.runtime as runtime

    assert list(runtime.__all__) == sorted(set(runtime.__all__))
    assert set(runtime._WHERE) == set(runtime.__all__)
    for name in runtime.__all__:
        value = getattr(runtime, name)
        assert value is not None
        if isinstance(value, type):  # type aliases (RunItem, StreamEvent) are unions
            assert value.__module__ == runtime._WHERE[name], name


def test_every_public_subpackage_is_an_attribute_of_the_package() -> None:
    import importlib

    for name in ("interop", "models", "otel", "review", "sessions", "temporal", "testing"):
        assert name in dir(stepswitch)
        module = getattr(stepswitch, name)
        assert module is importlib.import_module(f"stepswitch.{name}")
    assert stepswitch.sessions.SQLiteSession.__name__ == "SQLiteSession"
    assert stepswitch.review.check_trail is not None
