"""The model's view of a run's history, without copying it every turn.

A run appends model-visible items to one list; each model request gets a
:class:`HistoryView` of that list's first ``n`` items. The list is append-only (a
handoff input filter starts a new list), so a view never changes after it is made,
and making one costs O(1) however long the run is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from stepswitch.runtime.model import InputItem

__all__ = ["HistoryView", "view_of"]


class HistoryView(Sequence[InputItem]):
    """The first ``stop`` items of an append-only list, as an immutable sequence."""

    __slots__ = ("_items", "_stop")

    def __init__(self, items: list[InputItem], stop: int | None = None) -> None:
        self._items = items
        self._stop = len(items) if stop is None else stop

    def __len__(self) -> int:
        return self._stop

    @overload
    def __getitem__(self, index: int) -> InputItem: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[InputItem, ...]: ...

    def __getitem__(self, index: int | slice) -> InputItem | tuple[InputItem, ...]:
        if isinstance(index, slice):
            return tuple(self._items[: self._stop][index])
        if index < 0:
            index += self._stop
        if not 0 <= index < self._stop:
            raise IndexError("history index out of range")
        return self._items[index]

    def __iter__(self) -> Iterator[InputItem]:
        items = self._items
        for i in range(self._stop):
            yield items[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            if len(other) != self._stop:
                return False
            return all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HistoryView({list(self)!r})"

    def __reduce__(self) -> Any:
        return (tuple, (tuple(self),))


_new = object.__new__


def view_of(items: list[InputItem]) -> HistoryView:
    """``HistoryView(items)``: all of ``items`` as they are now. The loop makes one per
    model call; a plain function, not the class's call, makes it for less."""
    view: HistoryView = _new(HistoryView)
    view._items = items
    view._stop = len(items)
    return view
