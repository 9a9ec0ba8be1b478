"""The one registry of diagnostic codes.

Codes are ``SW`` plus three digits, grouped by hundreds: SW1xx structure, SW2xx
termination, SW3xx names, SW4xx types, SW5xx human in the loop, SW6xx reach (parts that
will not run as written, or run where the analyzer cannot see), SW7xx flows, SW8xx
policies, SW9xx MCP servers. A code never changes meaning; a retired code is listed in
``RETIRED`` and never reused. Every code has a documentation page (``docs/<CODE>.md``
inside this package) that ``stepswitch explain`` prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib import resources

from stepswitch._dataclass import dataclass
from stepswitch.analysis.diagnostic import Severity

__all__ = [
    "CODES",
    "GROUPS",
    "RETIRED",
    "Code",
    "code_doc",
    "invalid_prefixes",
    "matches_any",
]


@dataclass(frozen=True, slots=True)
class Code:
    """A registered diagnostic code."""

    code: str
    name: str
    """A short kebab-case name, stable like the code."""
    severity: Severity
    summary: str
    """One line: what the rule reports."""


GROUPS: dict[str, str] = {
    "SW1": "structure",
    "SW2": "termination",
    "SW3": "names",
    "SW4": "types",
    "SW5": "human in the loop",
    "SW6": "reach",
    "SW7": "flows",
    "SW8": "policies",
    "SW9": "mcp",
}

_ALL: tuple[Code, ...] = (
    Code("SW101", "missing-entry", "error", "the workflow has no entry agent"),
    Code("SW102", "unknown-entry", "error", "the entry names no agent of the workflow"),
    Code("SW103", "unknown-handoff-target", "error", "a handoff names no agent of the workflow"),
    Code("SW104", "unknown-agent-tool-target", "error",
         "an agent tool names no agent of the workflow"),
    Code("SW105", "duplicate-agent-name", "error", "two agents share one name"),
    Code("SW106", "handoff-name-collision", "warning",
         "two agents get the same normalised transfer_to_… handoff tool name"),
    Code("SW107", "unreachable-agent", "warning",
         "no handoff or agent tool leads from the entry to this agent"),
    Code("SW108", "run-cannot-end", "error",
         "once a run reaches this agent it can never end"),
    Code("SW109", "unknown-ignored-code", "warning",
         "an ignore list names a code that does not exist"),
    Code("SW201", "unbudgeted-handoff-cycle", "error",
         "a cycle of handoffs in which no handoff has max_uses"),
    Code("SW202", "unbounded-agent-tool-recursion", "error",
         "agents call each other as tools in a cycle with no max_depth"),
    Code("SW203", "model-call-bound", "info",
         "the worst-case number of model calls of a whole run, nested runs included"),
    Code("SW204", "model-call-limit-exceeded", "error",
         "the worst-case number of model calls exceeds the declared limit"),
    Code("SW205", "max-turns-too-small", "error",
         "even the shortest run that ends needs more model calls than max_turns"),
    Code("SW206", "cost-ceiling-exceeded", "error",
         "the worst-case cost or tokens of one run exceed max_cost_usd or max_total_tokens"),
    Code("SW207", "cost-bound", "info",
         "the worst-case cost and tokens of one run, when a ceiling is declared"),
    Code("SW208", "cost-unbounded", "warning",
         "a ceiling is declared but a call has no max_tokens, an unpriced model or "
         "unbounded model calls"),
    Code("SW301", "invalid-tool-name", "error",
         "a tool name the OpenAI API rejects (^[a-zA-Z0-9_-]{1,64}$)"),
    Code("SW302", "tool-name-collision", "error",
         "two tools of one agent (function, handoff or agent tools) share a name"),
    Code("SW303", "unknown-stop-at-tool", "warning",
         "StopAtTools names no function tool or agent tool of its agent"),
    Code("SW304", "tool-without-description", "warning",
         "a function tool with no docstring and no description: the model sees only its name"),
    Code("SW305", "unknown-docstring-parameter", "warning",
         "a tool's docstring describes a parameter the function does not have"),
    Code("SW401", "output-type-not-strict", "error",
         "an output type that OpenAI strict structured output rejects"),
    Code("SW402", "tool-parameters-not-strict", "error",
         "a function tool's parameters that OpenAI strict mode rejects"),
    Code("SW403", "handoff-input-not-strict", "error",
         "a handoff input type that OpenAI strict mode rejects"),
    Code("SW404", "agent-tool-parameters-not-strict", "error",
         "an agent tool's parameters type that OpenAI strict mode rejects"),
    Code("SW405", "guardrail-type-mismatch", "error",
         "a guardrail declares a type its agent's input or output does not fit"),
    Code("SW406", "extractor-type-mismatch", "error",
         "an agent tool's output extractor declares a type the nested run does not give"),
    Code("SW407", "context-type-mismatch", "error",
         "a RunContext[X] parameter that does not fit Workflow(context_type=...)"),
    Code("SW408", "tool-guardrail-signature", "error",
         "a tool guardrail that does not take exactly one argument (its data)"),
    Code("SW409", "tool-guardrail-type-mismatch", "error",
         "a tool guardrail in the wrong list, or declaring a type its data or verdict "
         "does not fit"),
    Code("SW501", "pause-points", "info",
         "the tools and agent tools that can pause a run for a human's approval"),
    Code("SW601", "opaque-tool", "warning",
         "a tool read from an SDK app that stepswitch cannot run (hosted, MCP, computer)"),
    Code("SW602", "input-guardrail-never-runs", "warning",
         "an input guardrail on an agent that never starts a run"),
    Code("SW603", "sdk-input-filter", "warning",
         "a handoff input filter read from an SDK app: it works on the SDK's items and "
         "fails when the handoff is taken"),
    Code("SW610", "sdk-setting-not-carried", "warning",
         "a setting of an Agents SDK app that stepswitch reads but does not carry out"),
    Code("SW611", "hosted-tool-effects", "info",
         "hosted tools an agent offers: effects on OpenAI's side the analyzer cannot see "
         "inside"),
    Code("SW612", "hosted-mcp-unrestricted", "warning",
         "a hosted MCP server with require_approval='never' and no allowed_tools"),
    Code("SW613", "hosted-mcp-approval-unanswered", "warning",
         "a hosted MCP server that asks for approvals, which stepswitch does not answer"),
    Code("SW614", "deferred-tool-without-search", "error",
         "a deferred tool (defer_loading) on an agent with no ToolSearchTool to load it"),
    Code("SW615", "tool-search-without-surface", "error",
         "a ToolSearchTool on an agent with no deferred or namespaced tool to find"),
    Code("SW616", "hosted-tool-config-invalid", "error",
         "a hosted tool or tool namespace configured as the Responses API refuses"),
    Code("SW617", "tool-runs-agent", "warning",
         "a function tool whose code starts an agent run (Runner.run) the analyzer cannot "
         "see into"),
    Code("SW621", "gated-reach", "info",
         "an agent that runs reach only through handoffs or agent tools gated by "
         "is_enabled"),
    Code("SW622", "end-needs-gate", "warning",
         "an agent from which a run can end only while a gated (is_enabled) tool or edge "
         "is enabled"),
    Code("SW650", "agents-api-tools-too-large", "error",
         "an agent's tool definitions exceed the Agents API's 3 MiB of compact JSON"),
    Code("SW651", "agents-api-metadata-limits", "error",
         "session metadata over the Agents API's limits (16 pairs, keys 64, values 512)"),
    Code("SW652", "agents-api-subagent-function-tools", "error",
         "hosted subagents (multi_agent) would be given an agent's function tools"),
    Code("SW653", "agents-api-history-rewrite", "error",
         "a handoff input filter rewrites history an Agents API session keeps itself"),
    Code("SW654", "agents-api-unexpressible", "error",
         "a model setting, instructions function or output type change a session cannot hold"),
    Code("SW701", "unknown-flow-node", "error",
         "a flow edge or the entry names no agent or step of the workflow"),
    Code("SW702", "flow-type-mismatch", "error",
         "a flow edge's source gives a type its target (or predicate) does not take"),
    Code("SW703", "route-not-exhaustive", "error",
         "a route misses a value of its Literal/Enum field, or has a case it never takes"),
    Code("SW704", "flow-field-invalid", "error",
         "a route or fan-out names a field the output type lacks or has of the wrong kind"),
    Code("SW705", "unbudgeted-flow-cycle", "error",
         "a cycle of flow edges in which no edge has max_uses"),
    Code("SW706", "unbounded-fan-out", "error", "a fan-out with no max_items"),
    Code("SW707", "unreachable-flow-node", "warning",
         "no flow edge leads to this node from the entry"),
    Code("SW708", "flow-cannot-end", "error",
         "once a run reaches this flow node it can never reach END"),
    Code("SW709", "flow-callable-not-importable", "error",
         "a branch predicate or a step that generated code cannot import by name"),
    Code("SW710", "flow-node-conflict", "error",
         "a node with two exits, a step named like another node, or a fan-out's each "
         "with its own exit"),
    Code("SW711", "object-not-importable", "warning",
         "an object of the workflow (tool, guardrail, hook, extractor, type) that generated "
         "code cannot import by path; steps and predicates are SW709"),
    Code("SW901", "mcp-server-unlocked", "warning",
         "an MCP server with no entry in stepswitch.mcp.lock: its tools are unchecked"),
    Code("SW902", "mcp-unknown-tool", "error",
         "an MCP server's tool_filter or require_approval names a tool the server lacks"),
    Code("SW903", "mcp-unapproved-side-effect", "warning",
         "an MCP tool annotated destructive (or not read-only) that runs with no approval"),
    Code("SW904", "mcp-tool-name-normalised-collision", "error",
         "an MCP tool's name equals another tool's of the agent once '-' reads as '_'"),
    Code("SW905", "mcp-server-name-duplicate", "error",
         "two different MCP servers of the workflow share one name, so one lock entry"),
)

_ALL += (
    Code("SW801", "approval-policy-fails", "error",
         "a run can call a tool that require_approval names without a human's yes"),
    Code("SW802", "guardrail-policy-fails", "error",
         "a run can call a tool without the input guardrail require_guardrail names"),
    Code("SW803", "forbid-policy-fails", "error",
         "a run can reach a tool or agent that forbid names"),
    Code("SW804", "max-calls-policy-fails", "error",
         "a run can call a tool more often than max_calls allows"),
    Code("SW805", "only-after-policy-fails", "error",
         "a run can call a tool before what only_after names has run"),
    Code("SW806", "policy-undecided", "warning",
         "a policy the analysis cannot decide (code decides a branch, a callable approval)"),
    Code("SW807", "policy-names-nothing", "warning",
         "a policy names no tool, agent or step of the workflow"),
)

CODES: dict[str, Code] = {c.code: c for c in _ALL}
"""Every live code, in order."""

RETIRED: frozenset[str] = frozenset()
"""Codes once used and withdrawn: never to be given a new meaning."""

_PREFIX = re.compile(r"^SW\d{0,3}$")


def matches_any(code: str, prefixes: Iterable[str]) -> bool:
    """True when ``code`` starts with one of ``prefixes`` (``SW``, ``SW2``, ``SW201``)."""
    return any(code.startswith(p) for p in prefixes)


def invalid_prefixes(prefixes: Iterable[str]) -> list[str]:
    """The prefixes that select no registered code (typos, foreign tools' codes)."""
    bad = []
    for prefix in prefixes:
        if not _PREFIX.match(prefix) or not any(c.startswith(prefix) for c in CODES):
            bad.append(prefix)
    return bad


def code_doc(code: str) -> str:
    """The documentation page of a code (Markdown); ``KeyError`` for an unknown code."""
    if code not in CODES:
        raise KeyError(code)
    return (resources.files("stepswitch.analysis") / "docs" / f"{code}.md").read_text("utf-8")
