"""The loop's frozen values keep their dataclass behaviour under ``stepswitch._dataclass``
(whose ``__init__`` sets each slot through its descriptor)."""

from __future__ import annotations

import dataclasses

import pytest

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
