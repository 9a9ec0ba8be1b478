"""``ItemHelpers``: the Agents SDK's helpers for reading run items, over our items.

SDK code that reads a run's text (``ItemHelpers.text_message_outputs(result.new_items)``)
works unchanged on a stepswitch result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from stepswitch.runtime.items import MessageOutputItem, RunItem, UserInputItem
from stepswitch.runtime.model import InputItem

__all__ = ["ItemHelpers"]


class ItemHelpers:
    """Static helpers named as in the Agents SDK (``agents.ItemHelpers``)."""

    @staticmethod
    def extract_last_content(message: RunItem) -> str:
        """A message item's text, or its refusal; ``""`` for any other item."""
        if type(message) is not MessageOutputItem:
            return ""
        if message.refusal:
            return message.refusal
        return message.content

    @staticmethod
    def extract_last_text(message: RunItem) -> str | None:
        """A message item's text; ``None`` for a refusal or any other item."""
        if type(message) is not MessageOutputItem or message.refusal:
            return None
        return message.content

    @staticmethod
    def text_message_output(message: RunItem) -> str:
        """The text of one message item (``""`` for any other item)."""
        if type(message) is not MessageOutputItem:
            return ""
        return message.content

    @staticmethod
    def text_message_outputs(items: Iterable[RunItem]) -> str:
        """The text of every message item, concatenated in order."""
        return "".join(i.content for i in items if type(i) is MessageOutputItem)

    @staticmethod
    def input_to_new_input_list(input: str | Sequence[InputItem]) -> list[InputItem]:
        """A run input as a fresh list of items (a string becomes one user message)."""
        if isinstance(input, str):
            return [UserInputItem(input)]
        return list(input)
