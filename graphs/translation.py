"""Parallel translation and a picker (the Agents SDK's ``agent_patterns/parallelization``):
the same text goes to three runs of a Spanish translator at once, and a picker agent
chooses the best of the translations (a fan-out joined in order into the picker)."""

from __future__ import annotations

from pydantic import BaseModel

import stepswitch as ss


class Attempts(BaseModel):
    """The text once per translation attempt."""

    texts: list[str]


spanish_agent = ss.Agent(
    name="spanish_agent",
    instructions="You translate the user's message to Spanish",
)

translation_picker = ss.Agent(
    name="translation_picker",
    instructions="You pick the best Spanish translation from the given options.",
)


@ss.step
def three_attempts(text: str) -> Attempts:
    """Three independent attempts at the same text."""
    return Attempts(texts=[text, text, text])


@ss.step
def list_translations(translations: list[str]) -> str:
    """The translations, numbered, for the picker."""
    return "Translations:\n\n" + "\n\n".join(
        f"{i}. {t}" for i, t in enumerate(translations, 1))


translation = ss.Workflow(
    "translation",
    three_attempts,
    flow=[
        ss.fan_out(three_attempts, over="texts", each=spanish_agent, then=list_translations,
                   max_items=3, concurrency=3),
        ss.then(list_translations, translation_picker),
        ss.then(translation_picker, ss.END),
    ],
    max_turns=3,
)
