"""HistoryView: an O(1), immutable view of an append-only list."""

from __future__ import annotations

import pytest

from stepswitch.runtime.history import HistoryView
from stepswitch.runtime.items import UserInputItem

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
