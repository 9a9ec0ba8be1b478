"""SW6xx reach: parts of a workflow that will not run as they are written."""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch.analysis._context import Ctx, agent_path, where
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.graph.spec import is_gated

__all__ = ["RULES"]


def opaque_tools(ctx: Ctx) -> Iterator[Diagnostic]:
    """Tools read from an SDK app that stepswitch keeps by name but cannot run."""
    for agent in ctx.graph.spec.agents:
        for i, tool in enumerate(agent.tools):
            if tool.opaque is None:
                continue
            yield ctx.diag(
                "SW601",
                f"agent {agent.name!r} offers {tool.name!r} ({tool.opaque}), which stepswitch "
                "cannot run: a call of it gets an error output",
                where(tool.location, f"{agent_path(agent.name)}.tools[{i}]"),
                help="replace it with a @function_tool that does the same work, or keep "
                "running this agent on the Agents SDK; `stepswitch explain SW601`",
            )


def tools_that_run_agents(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW617: a function tool whose own code starts an agent run (``Runner.run``): the
    agents of that run and what they call are in no graph the analyzer reads."""
    seen: set[str] = set()  # a tool shared by agents is reported once
    for agent in ctx.graph.spec.agents:
        for i, tool in enumerate(agent.tools):
            if tool.runs_agents is None or tool.ref.path in seen:
                continue
            seen.add(tool.ref.path)
            yield ctx.diag(
                "SW617",
                f"tool {tool.name!r} of agent {agent.name!r} runs an agent itself "
                f"({tool.runs_agents}): the agents that run reaches, and their tools, "
                "approvals and handoffs, are outside the workflow, so no check or policy "
                "sees what they do",
                where(tool.location, f"{agent_path(agent.name)}.tools[{i}]"),
                help="offer that agent as an agent tool (agent.as_tool(...)) so the checker "
                "sees into it, or accept its effects unchecked; `stepswitch explain SW617`",
            )


def input_guardrails_that_never_run(ctx: Ctx) -> Iterator[Diagnostic]:
    """Input guardrails run for the agent a run starts at only: the entry, or an agent
    called as a tool (its nested run starts there)."""
    spec = ctx.graph.spec
    starts = {spec.entry} if spec.entry is not None else set()
    for agent in spec.agents:
        starts.update(t.target for t in agent.agent_tools)
    for agent in spec.agents:
        if not agent.input_guardrails or agent.name in starts:
            continue
        names = ", ".join(repr(g.name) for g in agent.input_guardrails)
        yield ctx.diag(
            "SW602",
            f"agent {agent.name!r} has input guardrail(s) {names}, but no run starts at it "
            f"(the entry is {spec.entry!r}): they never run after a handoff",
            ctx.agent_loc(agent),
            help="move the guardrail to the entry agent, or make it an output guardrail; "
            "a run given starting_agent= this agent would run it",
        )


_SDK_OBJECTS = "stepswitch.interop.sdk_objects:"
_SDK_FILTER = "@input_filter"
_SDK_MARK = ".<sdk>"


def _sdk_filter(path: str) -> str | None:
    """The SDK filter a handoff's ``input_filter`` path stands for (``module:name``), when
    ``stepswitch.interop`` made it: ``sdk_objects:module:name@input_filter`` (found at
    a module-level name) or ``module:name.<sdk>``, the stand-in that refuses to run."""
    if path.startswith(_SDK_OBJECTS) and path.endswith(_SDK_FILTER):
        return path[len(_SDK_OBJECTS): -len(_SDK_FILTER)]
    if path.endswith(_SDK_MARK):
        return path[: -len(_SDK_MARK)]
    return None


def sdk_input_filters(ctx: Ctx) -> Iterator[Diagnostic]:
    """A handoff input filter read from an SDK app: SDK filters rewrite the SDK's own
    items (``agents.HandoffInputData``), so stepswitch keeps the handoff and the filter's
    name but cannot run it: taking the handoff is an error, which only a run would show."""
    for agent in ctx.graph.spec.agents:
        for i, h in enumerate(agent.handoffs):
            original = _sdk_filter(h.input_filter.path) if h.input_filter else None
            if original is None:
                continue
            yield ctx.diag(
                "SW603",
                f"handoff {h.tool_name!r} of agent {agent.name!r} has the Agents SDK input "
                f"filter {original}, which works on the SDK's items: stepswitch cannot run "
                "it, and a run that takes this handoff fails",
                where(h.location, f"{agent_path(agent.name)}.handoffs[{i}]"),
                help="rewrite the filter for ss.HandoffInputData (docs/migrating.md) and pass "
                "it to ss.handoff, or drop input_filter; `stepswitch explain SW603`",
            )


def not_carried(ctx: Ctx) -> Iterator[Diagnostic]:
    """A setting of the SDK app the workflow was read from that stepswitch does not carry
    out: named, at the object it is set on, never dropped in silence."""
    for note in ctx.graph.spec.not_carried:
        yield ctx.diag(
            "SW610",
            f"{note.owner} sets {note.attribute} ({note.detail}), which stepswitch does not "
            "carry out",
            where(note.location, note.path),
            help="see docs/migrating.md for what to write instead, or keep this part on the "
            "Agents SDK; `stepswitch explain SW610`",
        )


def gated_reach(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW621: agents a run reaches only through gated edges (information: whether they
    run depends on ``is_enabled`` at run time, which the analysis cannot decide)."""
    graph = ctx.graph
    if graph.spec.flow is not None or graph.entry is None or not graph.has_gates():
        return
    everywhere = graph.reachable()
    ungated = graph.ungated().reachable()
    for name in graph.agent_names():
        if name not in everywhere or name in ungated:
            continue
        gates = [e for e in graph.edges() if e.target == name and e.gated
                 and e.source in everywhere]
        shown = ", ".join(f"{e.tool_name!r} of {e.source!r}" for e in gates[:3]) or "gated edges"
        yield ctx.diag(
            "SW621",
            f"agent {name!r} is reached only through edges gated by is_enabled ({shown}): "
            "a run reaches it only on turns its gate is open",
            ctx.agent_loc(graph.agent(name)),
            help="nothing to fix if that is the intent; the checks treat the gated edges "
            "as present (cycles, budgets, policies) and as absent (SW622)",
        )


def ends_through_gates(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW622: an agent from which a run can end with every edge present, but not once
    the gated tools and edges are closed: with its gates shut, a run there goes on
    until ``max_turns``."""
    graph = ctx.graph
    if not graph.has_gates():
        return
    facts = graph.facts()
    closed = graph.ungated().facts()
    reached = graph.reachable() if graph.entry is not None else frozenset(graph.agent_names())
    for name in graph.agent_names():
        if name not in reached or facts[name].end_calls is None:
            continue
        if closed.get(name) is None or closed[name].end_calls is not None:
            continue
        agent = graph.agent(name)
        gated = [t.name for t in agent.tools if is_gated(t)]
        gated += [t.tool_name for t in agent.agent_tools if is_gated(t)]
        gated += [h.tool_name for h in agent.handoffs if is_gated(h)]
        shown = ", ".join(map(repr, gated[:3])) or "gated parts of the agents it hands off to"
        yield ctx.diag(
            "SW622",
            f"a run that reaches agent {name!r} can end only while a gated tool or edge is "
            f"enabled ({shown}): with those gates shut it never ends and stops at max_turns",
            ctx.agent_loc(agent),
            help="give the agent a way to end that no is_enabled gates (an ungated tool or "
            "handoff, or let it answer), or keep the gate open for every run that reaches it",
        )


RULES = (opaque_tools, tools_that_run_agents, input_guardrails_that_never_run,
         sdk_input_filters, not_carried, gated_reach, ends_through_gates)
