"""Prompt text for agents that hand off, under the Agents SDK's names.

``RECOMMENDED_PROMPT_PREFIX`` tells a model that it is one agent of several and how
handoffs look to it; ``prompt_with_handoff_instructions(text)`` puts it before ``text``.
The wording is stepswitch's own; the names match ``agents.extensions.handoff_prompt``
so SDK code that imports them keeps working after ``s/agents/stepswitch/``.
"""

from __future__ import annotations

__all__ = ["RECOMMENDED_PROMPT_PREFIX", "prompt_with_handoff_instructions"]

RECOMMENDED_PROMPT_PREFIX = (
    "# System context\n"
    "You are one agent in a system of cooperating agents. Each agent has its own "
    "instructions and tools. When another agent is better suited to the request, move "
    "the conversation to it by calling its handoff tool, whose name starts with "
    "`transfer_to_`. A handoff happens silently: do not announce it, describe it or ask "
    "the user for permission; the next agent sees the whole conversation and carries on."
)
"""A system-prompt preamble for agents that may hand off."""


def prompt_with_handoff_instructions(prompt: str) -> str:
    """``prompt`` with :data:`RECOMMENDED_PROMPT_PREFIX` before it."""
    return f"{RECOMMENDED_PROMPT_PREFIX}\n\n{prompt}"
