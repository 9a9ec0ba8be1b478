"""SW1xx structure: entry, targets, duplicate and colliding names, reachability,
runs that cannot end, unknown codes in ignore lists."""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch._names import default_handoff_tool_name
from stepswitch.analysis._context import Ctx, did_you_mean
from stepswitch.analysis.codes import invalid_prefixes
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.graph.facts import forced_tool, reach
from stepswitch.graph.spec import AgentSpec, AgentToolSpec, HandoffSpec

__all__ = ["RULES"]


def entry(ctx: Ctx) -> Iterator[Diagnostic]:
    spec = ctx.graph.spec
    if spec.entry is None:
        yield ctx.diag(
            "SW101",
            f"workflow {spec.name!r} has no entry agent",
            ctx.workflow_loc(),
            help="pass entry=<agent> to Workflow(...): runs start there",
        )
    elif ctx.graph.entry is None and spec.flow is None:  # a flow's entry: SW601
        known = ", ".join(repr(n) for n in ctx.graph.agent_names()[:5]) or "none"
        yield ctx.diag(
            "SW102",
            f"entry {spec.entry!r} names no agent of workflow {spec.name!r} (agents: {known})"
            f"{did_you_mean(spec.entry, ctx.graph.agent_names())}",
            ctx.workflow_loc(),
            help="name an agent the workflow declares, or pass the Agent object itself",
        )


def dangling(ctx: Ctx) -> Iterator[Diagnostic]:
    for edge in ctx.graph.dangling:
        hint = did_you_mean(edge.target, ctx.graph.agent_names())
        if edge.kind == "handoff":
            yield ctx.diag(
                "SW103",
                f"agent {edge.source!r} hands off to {edge.target!r}, which is no agent of "
                f"the workflow{hint}",
                ctx.edge_loc(edge),
                help="fix the name, or add that agent to Workflow(agents=[...])",
            )
        else:
            yield ctx.diag(
                "SW104",
                f"agent {edge.source!r} calls {edge.target!r} as tool {edge.tool_name!r}, "
                f"but no agent of the workflow has that name{hint}",
                ctx.edge_loc(edge),
                help="fix the name, or add that agent to Workflow(agents=[...])",
            )


def duplicates(ctx: Ctx) -> Iterator[Diagnostic]:
    agents = ctx.graph.spec.agents
    if len(agents) == len(ctx.graph):
        return
    first: dict[str, AgentSpec] = {}
    for agent in agents:
        if agent.name in first:
            earlier = first[agent.name].location
            yield ctx.diag(
                "SW105",
                f"agent name {agent.name!r} is already used by the agent declared at "
                f"{earlier.file}:{earlier.line}",
                ctx.agent_loc(agent),
                help="give every agent its own name: handoffs and agent tools find agents "
                "by name",
            )
        else:
            first[agent.name] = agent


def handoff_names(ctx: Ctx) -> Iterator[Diagnostic]:
    owner: dict[str, str] = {}
    for name in ctx.graph.agent_names():
        if name.isascii() and name.replace("_", "").isalnum() and name == name.lower():
            tool = "transfer_to_" + name  # already normalised: skip the regexes
        else:
            tool = default_handoff_tool_name(name)
        other = owner.setdefault(tool, name)
        if other != name:
            yield ctx.diag(
                "SW106",
                f"agents {other!r} and {name!r} both get the handoff tool name {tool!r}",
                ctx.agent_loc(ctx.graph.agent(name)),
                help="rename one agent, or give its handoffs a tool_name=...",
            )


def unreachable(ctx: Ctx) -> Iterator[Diagnostic]:
    graph = ctx.graph
    if graph.entry is None and graph.spec.flow is None:
        return
    index = ctx.index()
    roots = [graph.entry] if graph.entry is not None else []
    if graph.spec.flow is not None:  # every agent node of a flow starts runs
        roots.extend(n for e in graph.spec.flow for n in (e.source, *e.targets(), e.each)
                     if n is not None and n in graph)
    seen = reach([index.pos[root] for root in roots], index.adjacency("all"))
    off: dict[str, list[str]] = {}  # targets of parts never offered (is_enabled=False)
    for a in graph.spec.agents:
        parts: tuple[HandoffSpec | AgentToolSpec, ...] = (*a.handoffs, *a.agent_tools)
        for p in parts:
            if p.is_enabled is False:
                off.setdefault(p.target, []).append(f"{p.tool_name!r} of {a.name!r}")
    for i, reached in enumerate(seen):
        if not reached:
            name = index.names[i]
            never = (f" (is_enabled=False: {', '.join(off[name][:3])} is never offered)"
                     if name in off else "")
            yield ctx.diag(
                "SW107",
                f"agent {name!r} is unreachable: no handoff or agent tool leads to "
                f"it from the entry {graph.entry!r}{never}",
                ctx.agent_loc(index.agents[i]),
                help="hand off to it or call it as a tool from a reachable agent, or remove it",
            )


def traps(ctx: Ctx) -> Iterator[Diagnostic]:
    graph = ctx.graph
    index = ctx.index()
    facts = graph.facts()
    for agent in index.agents:
        if facts[agent.name].end_calls is not None:
            continue
        name = agent.name
        forced = forced_tool(agent.model_settings)
        callable_ = {t.name for t in agent.tools} | {t.tool_name for t in agent.agent_tools}
        if forced == "*":
            why = ("its model settings force a tool call (tool_choice='required') and it "
                   "has no function tool or agent tool, so every call must hand off")
        elif forced in {h.tool_name for h in agent.handoffs}:
            why = f"its model settings force the handoff {forced!r} (tool_choice)"
        else:
            offered = ", ".join(sorted(map(repr, callable_))[:5]) or "none"
            why = (f"its model settings force the tool {forced!r} (tool_choice), which it "
                   f"does not offer (its tools: {offered})")
        handoffs = graph.successors(name, "handoff")
        if forced != "*" and forced in {h.tool_name for h in agent.handoffs}:
            tail = "and that agent cannot end the run either"
        elif forced == "*" and handoffs:
            shown = ", ".join(repr(h) for h in handoffs[:5])
            tail = f"and no agent it can hand off to ({shown}) can end the run either"
        elif forced == "*":
            tail = "and it has no handoff either"
        else:
            tail = "so no call of it can succeed"
        yield ctx.diag(
            "SW108",
            f"no run that reaches agent {name!r} can end: {why}, {tail}",
            ctx.agent_loc(agent),
            help="let it answer (tool_choice='auto'), give it a tool to call, or force a "
            "tool it offers",
        )


def unknown_ignores(ctx: Ctx) -> Iterator[Diagnostic]:
    spec = ctx.graph.spec
    for prefix in invalid_prefixes(spec.ignore):
        yield ctx.diag(
            "SW109",
            f"workflow {spec.name!r} ignores {prefix!r}, which matches no diagnostic code",
            ctx.workflow_loc(),
            help="list codes or prefixes such as 'SW107' or 'SW5'; see `stepswitch explain`",
        )
    for agent in spec.agents:
        if not agent.ignore:
            continue
        for prefix in invalid_prefixes(agent.ignore):
            yield ctx.diag(
                "SW109",
                f"agent {agent.name!r} ignores {prefix!r}, which matches no diagnostic code",
                ctx.agent_loc(agent),
                help="list codes or prefixes such as 'SW107' or 'SW5'; see `stepswitch explain`",
            )


RULES = (entry, dangling, duplicates, handoff_names, unreachable, traps, unknown_ignores)
