"""SW611–SW616: hosted tools (run on OpenAI's side) and deferred tool loading.

A hosted tool is an effect the analyzer cannot see inside: it searches the web, runs
code or calls a remote MCP server with no function of the user's in between. These
rules say where such effects are (SW611), check the configurations that decide what a
hosted MCP server may do (SW612, SW613), and check the Responses API's contract for
deferred tools and tool search the way the Agents SDK enforces it at request time
(SW614, SW615, SW616), so the same mistakes fail ``check`` instead of a first model call.
"""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch.analysis._context import Ctx, agent_path, where
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.graph.spec import AgentSpec, HostedToolSpec

__all__ = ["RULES"]


def _path(agent: AgentSpec, i: int) -> str:
    return f"{agent_path(agent.name)}.hosted_tools[{i}]"


def hosted_effects(ctx: Ctx) -> Iterator[Diagnostic]:
    """Each agent's hosted tools, as effects the analyzer cannot see inside."""
    for agent in ctx.graph.spec.agents:
        effects = [h for h in agent.hosted_tools if h.kind != "tool_search"]
        if not effects:
            continue
        names = ", ".join(_shown(h) for h in effects)
        yield ctx.diag(
            "SW611",
            f"agent {agent.name!r} offers hosted tool(s) {names}: they run on OpenAI's side, "
            "so what they do (searches, code, calls of remote servers) is outside what "
            "stepswitch checks, and no approval, guardrail or policy of the workflow "
            "stands between the model and them",
            where(effects[0].location, _path(agent, agent.hosted_tools.index(effects[0]))),
            help="keep to hosted tools whose effects you accept unchecked, or replace one "
            "with a @function_tool that stepswitch can gate; `stepswitch explain SW611`",
        )


def _shown(h: HostedToolSpec) -> str:
    return f"{h.name!r}" if h.kind != "mcp" else f"hosted MCP {h.name!r}"


def hosted_mcp(ctx: Ctx) -> Iterator[Diagnostic]:
    """A hosted MCP server that may call any of its tools unasked (SW612), or that asks
    for approvals stepswitch does not answer (SW613)."""
    for agent in ctx.graph.spec.agents:
        for i, h in enumerate(agent.hosted_tools):
            if h.kind != "mcp":
                continue
            approval = h.config.get("require_approval")
            allowed = h.config.get("allowed_tools")
            if approval == "never" and not allowed:
                yield ctx.diag(
                    "SW612",
                    f"hosted MCP server {h.name!r} of agent {agent.name!r} has "
                    "require_approval='never' and no allowed_tools: the model may call every "
                    "tool the server has, now or after it changes, with no one asked",
                    where(h.location, _path(agent, i)),
                    help="list the tools it may call in allowed_tools; "
                    "`stepswitch explain SW612`",
                )
            elif approval != "never":
                shown = "unset (the API's default: always)" if approval is None else \
                    repr(approval)
                yield ctx.diag(
                    "SW613",
                    f"hosted MCP server {h.name!r} of agent {agent.name!r} has "
                    f"require_approval {shown}: the server asks for approvals "
                    "(mcp_approval_request), which stepswitch does not answer, so a run "
                    "that reaches one stops with a ModelBehaviorError",
                    where(h.location, _path(agent, i)),
                    help="set require_approval='never' with allowed_tools, or run the "
                    "server yourself with ss.MCPServerStreamableHttp and approve its calls "
                    "there; `stepswitch explain SW613`",
                )


def tool_search(ctx: Ctx) -> Iterator[Diagnostic]:
    """Deferred tools need a tool search (SW614); a tool search needs something to find
    (SW615); the Responses API's further rules for them (SW616)."""
    for agent in ctx.graph.spec.agents:
        if not agent.hosted_tools and not any(
            t.defer_loading or t.namespace is not None for t in agent.tools
        ):
            continue  # nothing to search, nothing deferred, no namespace: nothing to say
        searches = [i for i, h in enumerate(agent.hosted_tools) if h.kind == "tool_search"]
        deferred = [t for t in agent.tools if t.defer_loading]
        deferred_mcp = [h for h in agent.hosted_tools
                        if h.kind == "mcp" and h.config.get("defer_loading")]
        surface = deferred or deferred_mcp or any(t.namespace for t in agent.tools)
        if (deferred or deferred_mcp) and not searches:
            names = ", ".join([repr(t.name) for t in deferred] +
                              [f"hosted MCP {h.name!r}" for h in deferred_mcp])
            first = deferred[0].location if deferred else deferred_mcp[0].location
            yield ctx.diag(
                "SW614",
                f"agent {agent.name!r} has deferred tool(s) {names} (defer_loading) but no "
                "ss.ToolSearchTool(): nothing can load them, so the model can never call "
                "them (the Agents SDK refuses such an agent at its first model call)",
                where(first, agent_path(agent.name)),
                help="add ss.ToolSearchTool() to the agent's tools, or drop defer_loading; "
                "`stepswitch explain SW614`",
            )
        if searches and not surface:
            h = agent.hosted_tools[searches[0]]
            yield ctx.diag(
                "SW615",
                f"agent {agent.name!r} has a ToolSearchTool but nothing it can load: no tool "
                "with defer_loading=True, no tool_namespace(...) tool, no hosted MCP tool "
                "with defer_loading (the Agents SDK refuses it at its first model call)",
                where(h.location, _path(agent, searches[0])),
                help="defer some tools (function_tool(defer_loading=True)) or drop the tool "
                "search; `stepswitch explain SW615`",
            )
        yield from _contract(ctx, agent, searches)


def _contract(ctx: Ctx, agent: AgentSpec, searches: list[int]) -> Iterator[Diagnostic]:
    def bad(i: int, text: str) -> Diagnostic:
        h = agent.hosted_tools[i]
        return ctx.diag(
            "SW616",
            f"agent {agent.name!r}: {text}",
            where(h.location, _path(agent, i)),
            help="the Responses API (and the Agents SDK) refuse this configuration; "
            "`stepswitch explain SW616`",
        )

    if len(searches) > 1:
        yield bad(searches[1], "has more than one ToolSearchTool; one is allowed")
    labels: dict[str, int] = {}
    for i, h in enumerate(agent.hosted_tools):
        if h.kind == "file_search":
            n = h.config.get("max_num_results")
            if n is not None and (type(n) is not int or not 0 <= n <= 50):
                yield bad(i, f"FileSearchTool max_num_results {n!r} is not between 1 and 50")
            if not h.config.get("vector_store_ids"):
                yield bad(i, "FileSearchTool has no vector_store_ids: it has nothing to "
                             "search")
        elif h.kind == "mcp":
            if not (h.config.get("server_url") or h.config.get("connector_id")):
                yield bad(i, f"hosted MCP server {h.name!r} has neither server_url nor "
                             "connector_id")
            if h.name in labels:
                yield bad(i, f"two hosted MCP servers are labelled {h.name!r}; the model "
                             "could not tell them apart")
            labels[h.name] = i
    described: dict[str, str] = {}
    for t in agent.tools:
        if t.namespace is None:
            continue
        known = described.setdefault(t.namespace, t.namespace_description or "")
        if known != (t.namespace_description or ""):
            yield ctx.diag(
                "SW616",
                f"agent {agent.name!r}: the tools of namespace {t.namespace!r} have "
                f"different descriptions ({known!r}, {t.namespace_description!r}); every "
                "tool of one namespace must share its description",
                where(t.location, f"{agent_path(agent.name)}.tools.{t.call_name}"),
                help="make them one tool_namespace(...) call; `stepswitch explain SW616`",
            )


RULES = (hosted_effects, hosted_mcp, tool_search)
