from __future__ import annotations

from typing import Any, Literal, Optional, Union

from stepswitch.analysis._typefit import fits, show_type


class Base:
    pass


class Child(Base):
    pass


class Other:
    pass


def test_classes_and_subclasses() -> None:
    assert fits(Child, Base) and fits(Base, Base)
    assert not fits(Base, Child) and not fits(Other, Base)


def test_tops_always_fit() -> None:
    for declared in (Any, object, None):
        assert fits(Other, declared)


def test_unions() -> None:
    assert fits(Child, Union[Other, Base])  # noqa: UP007
    assert fits(Child, Other | Base)
    assert not fits(Child | Other, Base)
    assert fits(Child, Optional[Base])  # noqa: UP045


def test_generics_and_literals() -> None:
    assert fits(list[int], list[int]) and not fits(list[int], list[str])
    assert not fits(list[int], dict[str, int])
    assert fits(Literal["a"], str) and fits(Literal["a"], Literal["a", "b"])
    assert not fits(Literal["c"], Literal["a", "b"])


def test_unknowable_things_fit() -> None:
    assert fits("NotAType", Base)
    assert show_type(Base) == "Base" and show_type(list[int]) == "list[int]"
