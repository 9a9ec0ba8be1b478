"""The deterministic story pipeline (the Agents SDK's ``agent_patterns/deterministic``):
an agent outlines a story, a checker agent judges the outline, and only a good
science-fiction outline goes on to the story writer. One flow: outline → keep the
outline → checker → gate → story, or a polite stop."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

import stepswitch as ss


@dataclass
class StoryState:
    """What the steps keep between nodes: the outline, once written."""

    outline: str = ""


class OutlineCheckerOutput(BaseModel):
    """The checker's verdict on an outline."""

    good_quality: bool
    is_scifi: bool


story_outline_agent = ss.Agent(
    name="story_outline_agent",
    instructions="Generate a very short story outline based on the user's input.",
)

outline_checker_agent = ss.Agent(
    name="outline_checker_agent",
    instructions=(
        "Read the given story outline, and judge the quality. Also, determine if it is a "
        "scifi story."
    ),
    output_type=OutlineCheckerOutput,
)

story_agent = ss.Agent(
    name="story_agent",
    instructions="Write a short story based on the given outline.",
)


@ss.step
def keep_outline(ctx: ss.RunContext[StoryState], outline: str) -> str:
    """Remember the outline for the writer, and pass it on to the checker."""
    ctx.context.outline = outline
    return outline


def is_good_scifi(check: OutlineCheckerOutput) -> bool:
    """The gate: only a good science-fiction outline becomes a story."""
    return check.good_quality and check.is_scifi


@ss.step
def outline_for_writer(ctx: ss.RunContext[StoryState], check: OutlineCheckerOutput) -> str:
    """The outline the checker passed, for the story writer."""
    return ctx.context.outline


@ss.step
def stop_here(check: OutlineCheckerOutput) -> str:
    """Why no story is written."""
    if not check.good_quality:
        return "Outline is not good quality, so we stop here."
    return "Outline is not a scifi story, so we stop here."


story = ss.Workflow(
    "story",
    story_outline_agent,
    flow=[
        ss.then(story_outline_agent, keep_outline),
        ss.then(keep_outline, outline_checker_agent),
        ss.branch(outline_checker_agent, when=is_good_scifi, then=outline_for_writer,
                  otherwise=stop_here),
        ss.then(outline_for_writer, story_agent),
        ss.then(story_agent, ss.END),
        ss.then(stop_here, ss.END),
    ],
    context_type=StoryState,
    max_turns=3,
)
