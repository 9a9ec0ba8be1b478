"""The loop's frozen values keep their dataclass behaviour under ``stepswitch._dataclass``
and when the loop makes them with :func:`quick_maker`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from stepswitch.runtime._quick import quick_maker
from stepswitch.runtime.items import ToolApprovalItem, ToolCallOutputItem
from stepswitch.runtime.model import ModelRequest
from stepswitch.settings import ModelSettings


def test_items_are_still_frozen_equal_and_hashable() -> None:
    a = ToolCallOutputItem("bot", "c1", "ok", "lookup", False, {"x": 1})
    b = ToolCallOutputItem(agent="bot", call_id="c1", output="ok", name="lookup", value=None)
    assert a == b  # ``value`` is compare=False
    assert a.type == "tool_call_output_item" and a.is_error is False
    approval = ToolApprovalItem("bot", "t", "c", "{}")
    assert hash(approval) == hash(ToolApprovalItem("bot", "t", "c", "{}"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.output = "changed"  # type: ignore[misc]
    assert ToolApprovalItem("bot", "t", "c", "{}").run_path == ()


def test_default_factories_run_per_instance() -> None:
    request = ModelRequest("bot", None, (), (), None)
    assert request.settings == ModelSettings()
    given = ModelSettings(temperature=0.5)
    assert ModelRequest("bot", None, (), (), None, given).settings is given


def test_arguments_are_checked_like_a_dataclass() -> None:
    with pytest.raises(TypeError):
        ToolCallOutputItem("bot")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ToolCallOutputItem("bot", "c", "o", nope=1)  # type: ignore[call-arg]


def test_a_maker_makes_what_the_class_makes() -> None:
    make = quick_maker(ToolCallOutputItem)
    made = make("bot", "c1", "ok", "lookup", True, {"x": 1})
    assert type(made) is ToolCallOutputItem
    assert made == ToolCallOutputItem("bot", "c1", "ok", "lookup", True)
    assert made.value == {"x": 1} and made.type == "tool_call_output_item"
    assert make("bot", "c1", "ok") == ToolCallOutputItem("bot", "c1", "ok")  # defaults
    assert hash(made) == hash(ToolCallOutputItem("bot", "c1", "ok", "lookup", True))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.output = "changed"  # type: ignore[misc]
    # a made value copies, pickles and replaces like any other
    import copy
    import pickle

    assert pickle.loads(pickle.dumps(made)) == made
    assert copy.copy(made) == made
    assert dataclasses.replace(made, output="x").output == "x"


def test_a_maker_runs_default_factories_per_instance() -> None:
    make = quick_maker(ModelRequest)
    first, second = make("bot", None, (), (), None), make("bot", None, (), (), None)
    assert first.settings == ModelSettings() and first.settings is not second.settings
    given = ModelSettings(temperature=0.5)
    assert make("bot", None, (), (), None, given).settings is given
    with pytest.raises(TypeError):
        make("bot")  # type: ignore[call-arg]


def test_only_slots_dataclasses_with_plain_stores_get_a_maker() -> None:
    @dataclass
    class NoSlots:
        x: int

    with pytest.raises(TypeError, match="not a slots dataclass"):
        quick_maker(NoSlots)

    @dataclass(slots=True)
    class Guarded:
        x: int

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(name)

    with pytest.raises(TypeError, match="has a __setattr__ of its own"):
        quick_maker(Guarded)

    @dataclass(slots=True)
    class Plain:  # a plain slots class (an effect's job, an outcome): plain stores
        x: int
        y: list[int] = field(default_factory=list)
        kind: str = "ok"

    plain = quick_maker(Plain)(1)
    assert type(plain) is Plain and plain == Plain(1) and plain.y == [] and plain.kind == "ok"
    assert quick_maker(Plain)(2, [3], "err") == Plain(2, [3], "err")
    assert quick_maker(Plain)(1).y is not plain.y  # a fresh default per instance
    plain.x = 5  # not frozen: the maker's instance stays as mutable as the class's
    assert plain.x == 5

    @dataclass(frozen=True, slots=True)
    class Base:
        x: int

    @dataclass(frozen=True, slots=True)
    class Derived(Base):
        y: int

    made = quick_maker(Derived)(1, 2)
    assert type(made) is Derived and made == Derived(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.x = 3  # type: ignore[misc]
