"""Tool-name rules, read by both sides: the DSL names tools and handoffs with them, the
analyzer, the spec diff and the SDK reader check and compare names with them. Not API.

A leaf, like ``_site.py``: it sits beside the package's stages rather than in
``graph/`` because the DSL reads it while a tool is declared, and a generated runner's
user module declares tools; a leaf loads none of the graph stage for that.
"""

from __future__ import annotations

import re

__all__ = ["TOOL_NAME_PATTERN", "default_handoff_tool_name", "function_style", "valid_tool_name"]

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What the OpenAI API accepts as a function (tool) name."""

_NON_WORD = re.compile(r"[^a-zA-Z0-9_]")
_SPACE = re.compile(r"\s")


def function_style(name: str) -> str:
    """Normalise a name the way the Agents SDK does: whitespace and every character
    outside ``[a-zA-Z0-9_]`` become ``_``, then lowercase. Lossy: names can collide."""
    return _NON_WORD.sub("_", _SPACE.sub("_", name)).lower()


def default_handoff_tool_name(agent_name: str) -> str:
    """``transfer_to_<agent>``, normalised."""
    return function_style(f"transfer_to_{agent_name}")


def valid_tool_name(name: str) -> bool:
    """True when the OpenAI API accepts ``name`` as a tool name."""
    return TOOL_NAME_PATTERN.match(name) is not None
