"""HistoryView: an O(1), immutable view of an append-only list."""

from __future__ import annotations

import pytest

from stepswitch.runtime.history import HistoryView, view_of
from stepswitch.runtime.items import UserInputItem
from stepswitch.runtime.model import InputItem

A, B, C = UserInputItem("a"), UserInputItem("b"), UserInputItem("c")


def test_a_view_does_not_see_later_appends() -> None:
    items = [A, B]
    view = HistoryView(items)  # type: ignore[arg-type]
    items.append(C)
    assert len(view) == 2 and list(view) == [A, B]
    assert view == (A, B) and view == [A, B] and view != [A, B, C]
    assert view[-1] is B and view[0:1] == (A,)
    with pytest.raises(IndexError):
        view[2]


def test_a_view_is_not_hashable_and_reprs_its_items() -> None:
    view = HistoryView([A])
    with pytest.raises(TypeError):
        hash(view)
    assert "content='a'" in repr(view)


def test_view_of_is_a_view_of_everything_so_far() -> None:
    items: list[InputItem] = [A, B]
    view = view_of(items)
    assert type(view) is HistoryView and view == HistoryView(items) and len(view) == 2
    items.append(C)  # later appends are not in a view made before
    assert list(view) == [A, B] and view[-1] is B
