"""SW650-SW654: what the hosted Agents API cannot express, for a workflow checked for that
target (``check --target agents-api``, ``Workflow.check(target=...)``, or inferred from an
agent whose model is an ``AgentsAPIModel``). Each is an error: a run would fail there, or
worse, run as something other than what is written.

The API's limits and the settings a session carries are stated once, in
:mod:`stepswitch._agents_api`, which ``AgentsAPIModel`` reads too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from stepswitch._agents_api import (
    MAX_TOOLS_BYTES,
    SETTINGS_CARRIED,
    AgentsAPITarget,
    function_tool,
    metadata_problems,
    tools_bytes,
)
from stepswitch.analysis._context import Ctx, agent_path, where
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.graph.spec import AgentSpec

__all__ = ["RULES"]

TARGET_KEY = "agents_api_target"
"""Where ``analyze`` puts the :class:`AgentsAPITarget` in ``Ctx.memo`` (absent: not checked)."""

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "required": [],
                                 "additionalProperties": False}


def _target(ctx: Ctx) -> AgentsAPITarget | None:
    target = ctx.memo.get(TARGET_KEY)
    return target if isinstance(target, AgentsAPITarget) else None


def _session_tools(agent: AgentSpec) -> list[dict[str, Any]]:
    """The agent's tools as a session config carries them (function, agent and handoff
    tools alike are function tools to the API)."""
    tools = [function_tool(t.name, t.description, t.parameters) for t in agent.tools]
    tools += [function_tool(t.tool_name, t.description, t.parameters) for t in agent.agent_tools]
    tools += [function_tool(h.tool_name, h.description, h.input_schema or _EMPTY_OBJECT)
              for h in agent.handoffs]
    return tools


def tools_size(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW650: an agent's tool list over the API's 3 MiB of compact JSON."""
    if _target(ctx) is None:
        return
    for agent in ctx.graph.spec.agents:
        size = tools_bytes(_session_tools(agent))
        if size > MAX_TOOLS_BYTES:
            yield ctx.diag(
                "SW650",
                f"agent {agent.name!r} offers {size:,} bytes of tool definitions; an Agents "
                f"API session takes at most {MAX_TOOLS_BYTES:,} (3 MiB of compact JSON)",
                ctx.agent_loc(agent),
                help="split the agent's tools between agents (a handoff or an agent tool), "
                "or shorten their descriptions and schemas",
            )


def metadata(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW651: session metadata over the API's limits."""
    target = _target(ctx)
    if target is None:
        return
    for problem in metadata_problems(target.metadata):
        yield ctx.diag(
            "SW651",
            f"the Agents API sessions' metadata breaks its limits: {problem}",
            ctx.workflow_loc(),
            help="AgentsAPIModel(metadata=...) takes up to 16 string pairs, keys up to 64 "
            "and values up to 512 characters",
        )


def subagents_with_function_tools(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW652: hosted subagents given the trusted side's function tools."""
    target = _target(ctx)
    if target is None or not target.multi_agent:
        return
    for agent in ctx.graph.spec.agents:
        tools = [t.name for t in agent.tools] + [t.tool_name for t in agent.agent_tools]
        if not tools:
            continue
        yield ctx.diag(
            "SW652",
            f"agent {agent.name!r} runs with multi_agent enabled, so the hosted model may "
            f"give subagents its function tools ({', '.join(tools)}); their calls would come "
            "from actors the run does not track, past its approvals and budgets",
            ctx.agent_loc(agent),
            help="drop multi_agent=True from AgentsAPIModel, or give the work to an agent "
            "tool (its own session, run on the trusted side)",
        )


def history_rewrites(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW653: a handoff input filter, which rewrites history the session holds itself."""
    if _target(ctx) is None:
        return
    for agent in ctx.graph.spec.agents:
        for i, h in enumerate(agent.handoffs):
            if h.input_filter is None:
                continue
            yield ctx.diag(
                "SW653",
                f"handoff {h.tool_name!r} of agent {agent.name!r} has an input filter, but an "
                "Agents API session keeps its own history: the filter cannot change what the "
                "next agent sees",
                where(h.location, f"{agent_path(agent.name)}.handoffs[{i}]"),
                help="drop input_filter (the session's history stays whole), or run the "
                "target agent as an agent tool, which starts a session of its own",
            )


def unexpressible(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW654: settings, instructions and output types a session has no place for."""
    if _target(ctx) is None:
        return
    spec = ctx.graph.spec
    outputs = {a.name: a.output_type.ref.path if a.output_type else None for a in spec.agents}
    for agent in spec.agents:
        loc = ctx.agent_loc(agent)
        extra = sorted(k for k in agent.model_settings if k not in SETTINGS_CARRIED)
        if extra:
            yield ctx.diag(
                "SW654",
                f"agent {agent.name!r} sets ModelSettings {', '.join(extra)}, which an Agents "
                "API session's config has no field for (it takes the reasoning effort)",
                loc,
                help="unset them for this target, or run the agent on another model",
            )
        if agent.instructions_fn is not None:
            yield ctx.diag(
                "SW654",
                f"agent {agent.name!r} has an instructions function; an Agents API session's "
                "instructions are written once, at create, so text that changes between "
                "turns cannot reach the model",
                loc,
                help="give the agent fixed instructions, and pass what changes through a "
                "tool or the user's message",
            )
        for i, h in enumerate(agent.handoffs):
            if h.target in outputs and outputs[h.target] != outputs[agent.name]:
                yield ctx.diag(
                    "SW654",
                    f"handoff {h.tool_name!r} leads from agent {agent.name!r} to "
                    f"{h.target!r}, whose output type differs; an Agents API session's "
                    "output format is set once, at create",
                    where(h.location, f"{agent_path(agent.name)}.handoffs[{i}]"),
                    help="give both agents the same output_type, or make the target an "
                    "agent tool (a session of its own, with its own format)",
                )


RULES = (tools_size, metadata, subagents_with_function_tools, history_rewrites, unexpressible)
