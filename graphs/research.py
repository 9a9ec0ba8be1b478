"""The research bot (the Agents SDK's ``research_bot``): a planner lists web searches, a
search agent runs each of them in parallel, and a writer turns the summaries into a
report. One flow: planner → fan-out of searches → the summaries → writer.

The search agent has no search backend of its own here: give it a function tool that
calls yours (``tools=[web_search]``) and the flow stays the same."""

from __future__ import annotations

from pydantic import BaseModel

import stepswitch as ss


class WebSearchItem(BaseModel):
    """One search to run."""

    reason: str
    """Your reasoning for why this search is important to the query."""
    query: str
    """The search term to use for the web search."""


class WebSearchPlan(BaseModel):
    """The planner's searches."""

    searches: list[WebSearchItem]


class ReportData(BaseModel):
    """The writer's report."""

    short_summary: str
    markdown_report: str
    follow_up_questions: list[str]


planner_agent = ss.Agent(
    name="PlannerAgent",
    instructions=(
        "You are a helpful research assistant. Given a query, come up with a set of web "
        "searches to perform to best answer the query. Output between 5 and 20 terms to "
        "query for."
    ),
    output_type=WebSearchPlan,
)

search_agent = ss.Agent(
    name="SearchAgent",
    instructions=(
        "You are a research assistant. Given a search term, you search the web for that "
        "term and produce a concise summary of the results. The summary must be 2-3 "
        "paragraphs and less than 300 words. Capture the main points."
    ),
)

writer_agent = ss.Agent(
    name="WriterAgent",
    instructions=(
        "You are a senior researcher tasked with writing a cohesive report for a research "
        "query. You will be provided with the original query, and some initial research "
        "done by a research assistant. Write a detailed markdown report."
    ),
    output_type=ReportData,
)


@ss.step
def summaries(results: list[str]) -> str:
    """The search summaries, for the writer."""
    return "Summarized search results:\n\n" + "\n\n".join(results)


research = ss.Workflow(
    "research",
    planner_agent,
    flow=[
        ss.fan_out(planner_agent, over="searches", each=search_agent, then=summaries,
                   max_items=20, concurrency=5),
        ss.then(summaries, writer_agent),
        ss.then(writer_agent, ss.END),
    ],
    max_turns=3,
)
