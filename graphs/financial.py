"""The financial research manager (the Agents SDK's ``financial_research_agent``): a
planner lists searches, a search agent runs them in parallel, a writer drafts the report
calling two analyst agents as tools (fundamentals, risks), and a verifier gates it: a
verified report is released, anything else is held with the verifier's issues."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

import stepswitch as ss


@dataclass
class ReportState:
    """What the steps keep between nodes: the drafted report."""

    report: FinancialReportData | None = None


class FinancialSearchItem(BaseModel):
    """One search to run."""

    reason: str
    query: str


class FinancialSearchPlan(BaseModel):
    """The planner's searches."""

    searches: list[FinancialSearchItem]


class AnalysisSummary(BaseModel):
    """An analyst's short finding."""

    summary: str


class FinancialReportData(BaseModel):
    """The writer's report."""

    short_summary: str
    markdown_report: str
    follow_up_questions: list[str]


class VerificationResult(BaseModel):
    """The verifier's verdict."""

    verified: bool
    issues: str


class HeldReport(BaseModel):
    """A report the verifier did not pass, with why."""

    report: FinancialReportData
    issues: str


planner_agent = ss.Agent(
    name="FinancialPlannerAgent",
    instructions=(
        "You are a financial research planner. Given a request for financial analysis, "
        "produce a set of web searches to gather the context needed. Aim for recent "
        "headlines, earnings calls or 10-K snippets, analyst commentary, and industry "
        "background. Output between 5 and 15 search terms to query for."
    ),
    output_type=FinancialSearchPlan,
)

search_agent = ss.Agent(
    name="FinancialSearchAgent",
    instructions=(
        "You are a research assistant specializing in financial topics. Given a search "
        "term, search the web for it and produce a short summary of at most 300 words. "
        "Focus on key numbers, events, or quotes that will be useful to a financial analyst."
    ),
)

financials_agent = ss.Agent(
    name="FundamentalsAnalystAgent",
    instructions=(
        "You are a financial analyst focused on company fundamentals such as revenue, "
        "profit, margins and growth trajectory. Given a collection of web (and optional "
        "file) search results about a company, write a concise analysis of its recent "
        "financial performance. Keep it under 2 paragraphs."
    ),
    output_type=AnalysisSummary,
)

risk_agent = ss.Agent(
    name="RiskAnalystAgent",
    instructions=(
        "You are a risk analyst looking for potential red flags in a company's outlook. "
        "Given background research, produce a short analysis of risks such as competitive "
        "threats, regulatory issues, supply chain problems, or slowing growth. Keep it "
        "under 2 paragraphs."
    ),
    output_type=AnalysisSummary,
)


def summary_of(result: ss.RunResult) -> str:
    """An analyst's run as the writer's tool output: just the summary."""
    output = result.final_output
    return output.summary if isinstance(output, AnalysisSummary) else str(output)


writer_agent = ss.Agent(
    name="FinancialWriterAgent",
    instructions=(
        "You are a senior financial analyst. You will be provided with the original query "
        "and a set of raw search summaries. Your task is to synthesize these into a "
        "long-form markdown report (at least several paragraphs) including a short "
        "executive summary and follow-up questions. If needed, you can call the available "
        "analysis tools (e.g. fundamentals_analysis, risk_analysis) to get short "
        "specialist write-ups to incorporate."
    ),
    tools=[
        financials_agent.as_tool("fundamentals_analysis", "Use to get a short write-up of "
                                 "key financial metrics", output_extractor=summary_of,
                                 max_turns=2),
        risk_agent.as_tool("risk_analysis", "Use to get a short write-up of potential red "
                           "flags", output_extractor=summary_of, max_turns=2),
    ],
    output_type=FinancialReportData,
)

verifier_agent = ss.Agent(
    name="VerificationAgent",
    instructions=(
        "You are a meticulous auditor. You have been handed a financial analysis report. "
        "Your job is to verify the report is internally consistent, clearly sourced, and "
        "makes no unsupported claims. Point out any issues or uncertainties."
    ),
    output_type=VerificationResult,
)


@ss.step
def search_results(results: list[str]) -> str:
    """The search summaries, for the writer."""
    return "Summarized search results:\n\n" + "\n\n".join(results)


@ss.step
def keep_report(ctx: ss.RunContext[ReportState], report: FinancialReportData
                ) -> FinancialReportData:
    """Remember the draft; the verifier reads it."""
    ctx.context.report = report
    return report


def is_verified(result: VerificationResult) -> bool:
    """The gate: release only a report the verifier passed."""
    return result.verified


@ss.step
def release(ctx: ss.RunContext[ReportState], result: VerificationResult
            ) -> FinancialReportData:
    """The verified report."""
    assert ctx.context.report is not None
    return ctx.context.report


@ss.step
def hold(ctx: ss.RunContext[ReportState], result: VerificationResult) -> HeldReport:
    """The report, held back with the verifier's issues."""
    assert ctx.context.report is not None
    return HeldReport(report=ctx.context.report, issues=result.issues)


financial = ss.Workflow(
    "financial",
    planner_agent,
    flow=[
        ss.fan_out(planner_agent, over="searches", each=search_agent, then=search_results,
                   max_items=15, concurrency=5),
        ss.then(search_results, writer_agent),
        ss.then(writer_agent, keep_report),
        ss.then(keep_report, verifier_agent),
        ss.branch(verifier_agent, when=is_verified, then=release, otherwise=hold),
        ss.then(release, ss.END),
        ss.then(hold, ss.END),
    ],
    context_type=ReportState,
    max_turns=4,
)
