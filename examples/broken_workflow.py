"""A deliberately broken workflow: `stepswitch check examples/broken_workflow.py` shows
what the analyzer finds (and exits 1). Each problem is marked with the code it gets."""

from __future__ import annotations

from pydantic import BaseModel

import stepswitch as ss


class Tally(BaseModel):
    counts: dict[str, int]  # SW401: an open object, rejected by strict structured output


@ss.function_tool
def search(query: str) -> str:
    """Search the knowledge base."""
    return f"results for {query}"


@ss.function_tool(name="search")  # SW302: 'search' is offered twice by the planner
def search_again(query: str) -> str:
    """Search the web."""
    return f"web results for {query}"


@ss.function_tool(needs_approval=True)  # SW501: a pause point
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


writer = ss.Agent(
    "writer",
    "Write the answer.",
    handoffs=[ss.handoff("planner"), "reviewer"],  # SW201: planner → writer → planner
)

reviewer = ss.Agent(
    "reviewer",
    "Review the answer and send it.",
    tools=[send_email],
    # SW108: forces a tool it does not offer (a typo), so no call of it can succeed.
    model_settings=ss.ModelSettings(tool_choice="send_mail"),
)

critic = ss.Agent(
    "critic",
    "Criticise a draft.",
    tools=[ss.agent_tool("planner", "plan", "Plan again")],  # SW202 with planner below
    output_type=Tally,
)

planner = ss.Agent(
    "planner",
    "Plan the work.",
    tools=[search, search_again, critic.as_tool("critique", "Criticise a draft")],
    handoffs=[writer, "editor"],  # SW103: there is no agent named 'editor'
)

archivist = ss.Agent("archivist", "Archive old answers.")  # SW107: nothing leads here

broken = ss.Workflow(
    name="broken",
    entry=planner,
    agents=[planner, writer, reviewer, critic, archivist],
    max_turns=20,
    max_model_calls=50,
)
