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
