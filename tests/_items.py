"""Typed readers of one field of an item union, for tests that know which member they
hold: each asserts the member (so a wrong guess fails as a test, not an AttributeError)
and gives the field with its type, which keeps `mypy --strict tests` clean without a
cast per line."""

from __future__ import annotations

from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)
from stepswitch.runtime.model import OutputFunctionCall

__all__ = ["arguments_of", "call_id_of", "output_of", "text_of"]


def text_of(item: object) -> str:
    """The text of a user input or a message output item."""
    assert isinstance(item, UserInputItem | MessageOutputItem), item
    return item.content


def output_of(item: object) -> str:
    """The output of a tool or handoff output item."""
    assert isinstance(item, ToolCallOutputItem | HandoffOutputItem), item
    return item.output


def arguments_of(item: object) -> str:
    """The raw JSON arguments of a tool or handoff call item."""
    assert isinstance(item, ToolCallItem | HandoffCallItem), item
    return item.arguments


def call_id_of(item: object) -> str:
    """The call id of a model's function call."""
    assert isinstance(item, OutputFunctionCall), item
    return item.call_id
