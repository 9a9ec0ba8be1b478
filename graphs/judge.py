"""LLM as a judge (the Agents SDK's ``agent_patterns/llm_as_a_judge``): a generator
writes a story outline, an evaluator grades it, and the outline goes back with the
feedback until the evaluator passes it, at most three more rounds (the budget on the
route that goes back)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

import stepswitch as ss


@dataclass
class JudgeState:
    """What the steps keep between rounds: the request and the latest outline."""

    request: str = ""
    outline: str = ""


class EvaluationFeedback(BaseModel):
    """The evaluator's grade and what to improve."""

    feedback: str
    score: Literal["pass", "needs_improvement", "fail"]


story_outline_generator = ss.Agent(
    name="story_outline_generator",
    instructions=(
        "You generate a very short story outline based on the user's input. If there is any "
        "feedback provided, use it to improve the outline."
    ),
)

evaluator = ss.Agent(
    name="evaluator",
    instructions=(
        "You evaluate a story outline and decide if it's good enough. If it's not good "
        "enough, you provide feedback on what needs to be improved. Never give it a pass on "
        "the first try. After 5 attempts, you can give it a pass if the story outline is "
        "good enough - do not go for perfection"
    ),
    output_type=EvaluationFeedback,
)


@ss.step
def take_request(ctx: ss.RunContext[JudgeState], request: str) -> str:
    """Remember what the user asked for; the generator starts from it."""
    ctx.context.request = request
    return request


@ss.step
def keep_outline(ctx: ss.RunContext[JudgeState], outline: str) -> str:
    """Remember the latest outline; the evaluator grades it."""
    ctx.context.outline = outline
    return outline


@ss.step
def with_feedback(ctx: ss.RunContext[JudgeState], feedback: EvaluationFeedback) -> str:
    """The next round's input: the request, the last outline and what to improve."""
    return (
        f"{ctx.context.request}\n\nYour last outline:\n{ctx.context.outline}\n\n"
        f"Feedback: {feedback.feedback}"
    )


@ss.step
def final_outline(ctx: ss.RunContext[JudgeState], feedback: EvaluationFeedback) -> str:
    """The outline the evaluator passed."""
    return ctx.context.outline


judge = ss.Workflow(
    "judge",
    take_request,
    flow=[
        ss.then(take_request, story_outline_generator),
        ss.then(story_outline_generator, keep_outline),
        ss.then(keep_outline, evaluator),
        ss.route(evaluator, on="score", max_uses=3, cases={
            "pass": final_outline,
            "needs_improvement": with_feedback,
            "fail": with_feedback,
        }),
        ss.then(with_feedback, story_outline_generator),
        ss.then(final_outline, ss.END),
    ],
    context_type=JudgeState,
    max_turns=3,
)
