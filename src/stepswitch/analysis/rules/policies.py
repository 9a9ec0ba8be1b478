"""SW8xx policies: the team's own rules, proved over every path a run can take.

The search runs over one graph of *positions*: ``a:<agent>`` (an agent's turn, in any
run: the top-level one or an agent tool's nested run at any depth) and, in a flow,
``n:<node>`` (a flow node about to run). Edges: a handoff, an agent tool (a nested run
starts at its target), a flow node's agent run, and the flow's edges. A breadth-first
search from the entry gives the shortest run to a violation, printed step by step.

Flow edges that code decides (a branch's predicate, a route or fan-out on a step's
output) are searched in a second pass only: a violation found only through them is a
warning (SW806, undecided) naming the edge, since the checker cannot tell whether the
code ever takes it. Budgets (``max_turns``, ``max_uses``) are not used to rule paths
out: a path the budgets forbid is still reported (the analysis over-approximates).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from stepswitch.analysis._context import Ctx, did_you_mean, where
from stepswitch.analysis._graphalgo import strongly_connected
from stepswitch.analysis.diagnostic import Diagnostic, DiagnosticLocation, TraceStep
from stepswitch.analysis.rules._run_graph import RunGraph, run_graph
from stepswitch.graph.spec import (
    AgentSpec,
    AgentToolSpec,
    MCPToolSpec,
    PolicySpec,
    ToolSpec,
    WorkflowSpec,
)
from stepswitch.policies import mcp_selector

__all__ = ["RULES"]

_CODE = {
    "require_approval": "SW801",
    "require_guardrail": "SW802",
    "forbid": "SW803",
    "max_calls": "SW804",
    "only_after": "SW805",
}


def _tool_loc(agent: AgentSpec, tool: ToolSpec, i: int) -> DiagnosticLocation:
    return where(tool.location, f"agents.{agent.name}.tools[{i}]")


def covered(graph: RunGraph, target: str) -> dict[str, frozenset[str]]:
    """Per agent that offers some, the names of its tools a policy's ``target`` covers:
    the tool of that name, or the MCP tools a selector (``mcp:*:destructive``) picks by
    server and locked annotations."""
    cache = graph.covers
    found = cache.get(target)
    if found is not None:
        return found
    selector = mcp_selector(target)
    found = {}
    if selector is None:
        for name in dict.fromkeys(graph.offering.get(target, ())):
            found[name] = frozenset((target,))
    else:
        server, kind = selector
        for name, agent in graph.agents.items():
            picked = frozenset(
                t.name for s in agent.mcp_servers if server in ("*", s.name)
                for t in s.tools if t.offered and _kind_holds(t, kind))
            if picked:
                found[name] = picked
    cache[target] = found
    return found


def _kind_holds(tool: MCPToolSpec, kind: str | None) -> bool:
    """Whether a locked MCP tool is of ``kind`` (see ``stepswitch.policies.MCP_KINDS``)."""
    read_only = tool.read_only is True
    if kind is None:
        return True
    if kind == "read_only":
        return read_only
    if kind == "writes":
        return not read_only
    assert kind == "destructive"
    return not read_only and tool.destructive is not False


def _calls(graph: RunGraph, name: str, tools: frozenset[str],
           ) -> list[tuple[str, TraceStep, ToolSpec | AgentToolSpec]]:
    """The ways agent ``name`` can call one of ``tools``: a trace step each, and the
    declaration."""
    agent = graph.agents[name]
    out: list[tuple[str, TraceStep, ToolSpec | AgentToolSpec]] = []
    for i, t in enumerate(agent.tools):
        if t.name in tools and t.is_enabled is not False:
            kind = f" (hosted: {t.opaque})" if t.opaque else ""
            out.append((t.name, TraceStep(f"calls {t.name}{kind}", _tool_loc(agent, t, i)), t))
    for i, at in enumerate(agent.agent_tools):
        if at.tool_name in tools and at.is_enabled is not False:
            out.append((at.tool_name, TraceStep(
                f"calls agent tool {at.tool_name}",
                where(at.location, f"agents.{name}.agent_tools[{i}]")), at))
    return out


def _known(graph: RunGraph) -> tuple[set[str], set[str]]:
    tools: set[str] = set()
    guardrails: set[str] = set()
    for agent in graph.agents.values():
        tools.update(t.name for t in agent.tools)
        tools.update(t.tool_name for t in agent.agent_tools)
        for t in agent.tools:
            guardrails.update(_tool_guardrails(t))
    return tools, guardrails


def _hosted_named(spec: WorkflowSpec, name: str) -> str | None:
    """The first agent offering a hosted tool named ``name``, or None."""
    for agent in spec.agents:
        if any(h.name == name for h in agent.hosted_tools):
            return agent.name
    return None


_HOSTED_CLASS = {
    "web_search": "WebSearchTool", "file_search": "FileSearchTool",
    "code_interpreter": "CodeInterpreterTool", "image_generation": "ImageGenerationTool",
    "mcp": "HostedMCPTool", "tool_search": "ToolSearchTool",
}
"""The ``ss.*`` (and Agents SDK) class of each hosted kind, for trace steps."""

_GUARDRAIL_FIELDS = ("tool_input_guardrails", "input_guardrails")


def _tool_guardrails(tool: object) -> tuple[str, ...]:
    """The names of a tool's input guardrails (tool guardrails, where the spec has them)."""
    # asked of each tool's class, not the tool: a missing attribute of a pydantic model
    # costs an exception, and 10,000 agents have tens of thousands of tools
    fields = getattr(type(tool), "model_fields", None)
    found: Any = ()
    for name in _GUARDRAIL_FIELDS:
        if fields is None or name in fields:
            found = getattr(tool, name, None) or ()
            if found:
                break
    return tuple(g if isinstance(g, str) else str(getattr(g, "name", g)) for g in found)


def _policy_loc(policy: PolicySpec, i: int) -> DiagnosticLocation:
    return where(policy.location, f"policies[{i}]")


def policies(ctx: Ctx) -> Iterator[Diagnostic]:
    spec = ctx.graph.spec
    extra = ctx.memo.get("extra_policies", ())
    every: list[PolicySpec] = [*spec.policies, *extra]
    if not every:
        return
    graph = run_graph(ctx)
    tools, guardrails = _known(graph)
    hosted_names = {h.name for a in graph.agents.values() for h in a.hosted_tools}
    for i, policy in enumerate(every):
        loc = _policy_loc(policy, i)
        names = ({*tools, *hosted_names, *graph.agents, *graph.steps}
                 if policy.rule == "forbid" else tools)
        unknown: list[tuple[str, str, set[str]]] = []
        try:
            selector = mcp_selector(policy.target)
        except ValueError as exc:  # a PolicySpec made by hand; ss.* constructors check it
            yield ctx.diag("SW807", f"policy {policy.describe()}: {exc}; it checks nothing",
                           loc, help="fix the selector")
            continue
        if selector is not None:
            if not covered(graph, policy.target):
                unknown.append(("MCP tool (none is locked with that server and kind: run "
                                "`stepswitch mcp lock` if its lock is missing)", policy.target,
                                set()))
        elif policy.target not in names:
            unknown.append(("tool" if policy.rule != "forbid" else "tool or agent",
                            policy.target, names))
        if policy.rule == "only_after" and policy.first not in {*tools, *graph.agents,
                                                                *graph.steps}:
            unknown.append(("tool, agent or step", policy.first or "",
                            {*tools, *graph.agents, *graph.steps}))
        if policy.from_agent is not None and policy.from_agent not in graph.agents:
            unknown.append(("agent", policy.from_agent, set(graph.agents)))
        if policy.guardrail is not None and policy.guardrail not in guardrails:
            # no tool has that guardrail: the policy can still be proved (it fails
            # wherever the tool is called), but a typo should be visible
            pass
        # forbid sees a hosted tool offered; what happens inside its calls it cannot see
        hosted = _hosted_named(spec, policy.target) if unknown else None
        if hosted is not None:
            # a hosted tool runs on OpenAI's side: nothing of stepswitch's sees its calls
            yield ctx.diag(
                "SW806", f"policy {policy.describe()} is undecided: {policy.target!r} is a "
                f"hosted tool of agent {hosted!r}, which runs on OpenAI's side, where no "
                "approval, guardrail or count of stepswitch's applies (SW611)", loc,
                help="gate the effect with a @function_tool of yours instead, or drop the "
                "policy")
            continue
        if unknown:
            what, name, known = unknown[0]
            yield ctx.diag(
                "SW807", f"policy {policy.describe()} names no {what} of workflow "
                f"{spec.name!r}: {name!r}{did_you_mean(name, known)}; it checks nothing", loc,
                help="fix the name, or remove the policy if the thing it guards is gone")
            continue
        if graph.entry is None:
            continue
        verdicts = list(_check(ctx, graph, policy, loc))
        yield from verdicts or _unseen_runs(ctx, graph, policy, loc)


def _unseen_runs(ctx: Ctx, graph: RunGraph, policy: PolicySpec, loc: DiagnosticLocation,
                 ) -> Iterator[Diagnostic]:
    """SW806 for a policy that holds for what the checker sees, when a run it covers can
    call a tool that runs an agent itself (SW617): what that agent calls is unchecked, so
    the policy is not proved. Over-approximates the way budgets do: any policy, since the
    nested agent may call or reach anything by any name."""
    assert graph.entry is not None
    start, prefix, avoid = graph.entry, [], frozenset[str]()
    if policy.rule == "forbid" and policy.from_agent is not None:
        to_start = graph.search(graph.entry, lambda n: n == f"a:{policy.from_agent}",
                                decided_only=False)
        if to_start is None:
            return
        start, prefix = f"a:{policy.from_agent}", to_start[1][:-1]
    elif policy.rule == "only_after":
        first = policy.first or ""
        avoid = frozenset(n for n in (f"a:{first}", f"n:{first}") if n in graph.succ)

    def runs_agents(node: str) -> bool:
        agent = graph.agents.get(node[2:]) if node.startswith("a:") else None
        return agent is not None and any(t.runs_agents and t.is_enabled is not False
                                         for t in agent.tools)

    found = graph.search(start, runs_agents, decided_only=False, avoid=avoid)
    if found is None:
        return
    end, steps, _ = found
    agent = graph.agents[end[2:]]
    i, tool = next((i, t) for i, t in enumerate(agent.tools)
                   if t.runs_agents and t.is_enabled is not False)
    trace = (*prefix, *steps, TraceStep(f"calls {tool.name} (runs an agent: "
                                        f"{tool.runs_agents})", _tool_loc(agent, tool, i)))
    path = " -> ".join(s.message for s in trace)
    yield ctx.diag(
        "SW806", f"policy {policy.describe()} holds for what the checker can see, but is "
        f"undecided: tool {tool.name!r} of agent {agent.name!r} runs an agent itself "
        f"({tool.runs_agents}), and what that agent calls no check sees (SW617); a run "
        f"that reaches it: {path}", loc,
        help=f"offer the agent {tool.name} runs as an agent tool (agent.as_tool(...)), which "
        "the checker follows, or ignore SW806 for this policy", trace=trace)


def _check(ctx: Ctx, graph: RunGraph, policy: PolicySpec, loc: DiagnosticLocation,
           ) -> Iterator[Diagnostic]:
    assert graph.entry is not None
    entry = graph.entry
    target = policy.target
    rule = policy.rule
    code = _CODE[rule]
    # per position: the violating calls there, definite ones and undecided ones
    definite: dict[str, tuple[TraceStep, str]] = {}
    undecided: dict[str, tuple[TraceStep, str]] = {}
    avoid: frozenset[str] = frozenset()
    start = entry
    prefix: list[TraceStep] = []
    prefix_whys: list[str] = []
    served: set[str] = set()  # MCP servers of the tools it covers: their own fix
    for name, tools in covered(graph, target).items():
        for tool, step, decl in _calls(graph, name, tools):
            server = getattr(decl, "mcp_server", None)  # an agent tool has none
            if server is not None:
                served.add(server)
            if rule == "require_approval":
                mode = decl.needs_approval
                if mode == "never":
                    definite.setdefault(f"a:{name}", (step, f"{tool} runs without a "
                                                      "human's approval"))
                elif mode == "per_call":
                    undecided.setdefault(f"a:{name}", (step, f"a callable decides per call "
                                                       f"whether {tool} needs approval"))
            elif rule == "require_guardrail":
                if policy.guardrail not in _tool_guardrails(decl):
                    definite.setdefault(f"a:{name}", (step, f"{tool} runs without the input "
                                                      f"guardrail {policy.guardrail!r}"))
            elif rule in ("forbid", "only_after"):
                definite.setdefault(f"a:{name}", (step, f"{tool} is called"))
    if rule in ("forbid", "only_after"):  # offering a hosted tool lets the model call it
        for name, agent in graph.agents.items():
            for i, h in enumerate(agent.hosted_tools):
                if h.name == target:
                    step = TraceStep(f"calls {h.name} (hosted: {_HOSTED_CLASS[h.kind]} "
                                     f"{h.name!r})",
                                     where(h.location, f"agents.{name}.hosted_tools[{i}]"))
                    definite.setdefault(f"a:{name}", (step, f"{h.name} is called"))
    if rule == "max_calls":
        yield from _max_calls(ctx, graph, policy, loc)
        return
    if rule == "forbid":
        for node in (f"a:{target}", f"n:{target}"):
            if node in graph.succ:
                definite.setdefault(node, (graph.start_step(node), f"{target!r} is reached"))
        if policy.from_agent is not None:
            found = graph.search(entry, lambda n: n == f"a:{policy.from_agent}",
                                 decided_only=False)
            if found is None:
                return  # the run never gets there: nothing to forbid
            prefix, prefix_whys = found[1], found[2]
            start = f"a:{policy.from_agent}"
    if rule == "only_after":
        first = policy.first or ""
        avoid = frozenset(n for n in (f"a:{first}", f"n:{first}") if n in graph.succ)
        if first == target:
            return

    def report(found: tuple[str, list[TraceStep], list[str]],
               sites: dict[str, tuple[TraceStep, str]], severity_warn: str | None) -> Diagnostic:
        end, steps, whys = found
        last, what = sites[end]
        if prefix:  # the second search starts where the prefix ends
            steps = steps[1:]
        walked = [*prefix, *steps]
        # the violation is the position itself (an agent or flow node reached), or a call
        # made there (from the prefix's last agent too: forbid(t, from_agent=f) at f)
        reached = bool(walked) and last.message == walked[-1].message
        trace = (*walked, *([] if reached or end.startswith("n:") or (
            rule == "forbid" and end == f"a:{target}") else [last]))
        path = " -> ".join(s.message for s in trace)
        whys = [*prefix_whys, *whys]
        if severity_warn is not None or whys:
            reason = severity_warn or f"the path depends on {whys[0]}, which code decides"
            return ctx.diag(
                "SW806", f"policy {policy.describe()} is undecided: {reason}; a run "
                f"that may break it: {path}", loc,
                help="make the decision visible to the checker (a route on an agent's "
                "output, needs_approval=True), or ignore SW806 for this policy", trace=trace)
        first = f" before {policy.first!r} has run" if rule == "only_after" else ""
        fix = _HELP[rule]
        if rule == "require_approval" and served:  # an MCP tool: the server says it
            fix = (f"give the MCP server ({', '.join(sorted(map(repr, served)))}) "
                   "require_approval for the tool (require_approval={'TOOL': True}, or "
                   "'always') wherever the server is offered")
        return ctx.diag(
            code, f"policy {policy.describe()} fails: {what}{first}; shortest run: {path}", loc,
            help=fix, trace=trace)

    def goal(sites: dict[str, tuple[TraceStep, str]]) -> Callable[[str], bool]:
        return sites.__contains__

    for decided in (True, False):
        found = graph.search(start, goal(definite), decided_only=decided, avoid=avoid)
        if found is not None:
            yield report(found, definite, None)
            return
    found = graph.search(start, goal(undecided), decided_only=False, avoid=avoid)
    if found is not None:
        yield report(found, undecided, undecided[found[0]][1])


_HELP = {
    "require_approval": "declare the tool with needs_approval=True (or its agent tool with "
    "needs_approval=True) wherever it is offered",
    "require_guardrail": "attach the guardrail with function_tool(tool_input_guardrails=[...]) "
    "on every declaration of the tool",
    "forbid": "remove the handoff, agent tool or flow edge on the path, or the tool from the "
    "agent that offers it",
    "max_calls": "give the tool a run budget, function_tool(max_uses=N) with N at most the "
    "policy's n, on every declaration; or set parallel_tool_calls=False and a "
    "tool_use_behavior that stops at the tool, or lower max_turns, so the worst case fits",
    "only_after": "make the path pass the prerequisite first (a flow edge, a handoff only "
    "from the agent that ran it), or offer the tool only after it",
}


# -- max_calls -----------------------------------------------------------------------------

_UNBOUNDED = -1
_NOTHING = (False, False, False, 0, None)
"""An agent (or component) that reaches no call of the tool: one shared value."""


def _max_calls(ctx: Ctx, graph: RunGraph, policy: PolicySpec, loc: DiagnosticLocation,
               ) -> Iterator[Diagnostic]:
    """The worst-case number of calls of the tool in one run against ``n``.

    One model response calls tools in parallel unless its agent sets
    ``parallel_tool_calls=False``: then one response is unbounded. Otherwise a run of
    ``T`` model calls (its ``max_turns``) calls the tool at most once per model call, or
    once in all when calling it ends the run (``stop_on_first_tool`` or ``StopAtTools``
    naming it), plus what the nested runs of its agent tools call (to ``max_depth``).
    A tool whose every declaration has a run budget (``function_tool(max_uses=)``, one
    count for the whole run) runs at most the largest of them, whatever the above."""
    spec = graph.spec
    tool = policy.target
    n = policy.n or 0
    names = list(graph.agents)
    pos = {name: i for i, name in enumerate(names)}
    agents = [graph.agents[name] for name in names]
    cover = covered(graph, tool)
    covers = [cover.get(a.name, frozenset()) for a in agents]
    offers = [bool(c) for c in covers]
    if not any(offers):
        return
    parallel = [a.model_settings.get("parallel_tool_calls") is not False for a in agents]
    nonstop = [offers[i] and not (a.tool_use_behavior.kind == "stop_on_first_tool" or (
        a.tool_use_behavior.kind == "stop_at_tools"
        and covers[i] <= set(a.tool_use_behavior.tool_names)))
        for i, a in enumerate(agents)]
    hsucc = [[pos[h.target] for h in a.handoffs if h.target in pos] for a in agents]
    comps, comp_of = strongly_connected(hsucc)
    nested = [[(pos[at.target], at.max_turns or spec.max_turns,
                min(spec.max_depth, at.max_depth or spec.max_depth), at.tool_name)
               for at in a.agent_tools if at.target in pos] for a in agents]
    # a run at a depth no agent tool may nest below gets nothing from agent tools: start
    # at the deepest depth any does, with nothing below
    deepest = min(spec.max_depth, max((x[2] for e in nested for x in e), default=0))
    shallowest = min((x[2] for e in nested for x in e), default=0)
    # Agg per agent, over the agents its run can reach by handoffs: (offers the tool,
    # offers it with parallel calls, some offering agent does not stop on it, the most
    # one model call's agent tools can add, why it is unbounded or None)
    Agg = tuple[bool, bool, bool, int, str | None]

    def bound(agg: Agg, turns: int | None) -> tuple[int, str]:
        direct, par, goes_on, most, unb = agg
        if unb is not None:
            return _UNBOUNDED, unb
        if direct and par:
            return _UNBOUNDED, (f"an agent may call {tool} any number of times in one "
                                "response (parallel tool calls)")
        if (direct or most) and turns is None:
            return _UNBOUNDED, "max_turns=None leaves the run's model calls unbounded"
        t = turns or 0
        if not direct:
            total = t * most
        elif not goes_on:
            total = max(t * most, (t - 1) * most + 1)
        else:
            total = t * max(most, 1)
        return total, f"{t} model calls, each may call {tool}" if direct else (
            f"{t} model calls, each may start a nested run that calls {tool}")

    below: list[Agg] | None = None
    for depth in range(deepest, -1, -1):
        own: list[Agg] = []
        for i in range(len(agents)):
            most, unb = 0, None
            if below is not None:
                for target, turns, limit, tool_name in nested[i]:
                    if depth + 1 > limit:
                        continue
                    inner, why = bound(below[target], turns)
                    if inner == _UNBOUNDED:
                        unb = why
                        break
                    if inner > 0 and parallel[i]:
                        unb = (f"agent {names[i]!r} may call agent tool {tool_name} (which "
                               f"calls {tool}) any number of times in one response")
                        break
                    most = max(most, inner)
            own.append((offers[i], offers[i] and parallel[i], nonstop[i], most, unb))
        level: list[Agg] = own[:]
        comp_agg: list[Agg] = []
        for members in comps:  # sinks first: every successor component is done
            d, p, g, m, u = False, False, False, 0, None
            here = len(comp_agg)
            for v in members:
                a1 = own[v]
                d, p, g, u = d or a1[0], p or a1[1], g or a1[2], u or a1[4]
                if a1[3] > m:
                    m = a1[3]
                for w in hsucc[v]:
                    c = comp_of[w]
                    if c != here:
                        a2 = comp_agg[c]
                        if a2 is _NOTHING:  # the common case: nothing to add
                            continue
                        d, p, g, u = d or a2[0], p or a2[1], g or a2[2], u or a2[4]
                        if a2[3] > m:
                            m = a2[3]
            agg = (d, p, g, m, u)
            comp_agg.append(_NOTHING if agg == _NOTHING else agg)
        for v in range(len(agents)):
            level[v] = comp_agg[comp_of[v]]
        if below == level and depth + 1 <= shallowest:
            break  # every shallower level is the same function of the same values
        below = level
    assert below is not None

    def run_bound(start: str, turns: int | None, depth: int) -> tuple[int, str]:
        return bound(below[pos[start]], turns)

    total = 0
    reason = ""
    if spec.flow is None:
        if spec.entry is not None and spec.entry in graph.agents:
            total, reason = run_bound(spec.entry, spec.max_turns, 0)
    else:
        visits = _flow_visits(graph)
        for name, times in visits.items():
            if name not in graph.agents:
                continue
            b, why = run_bound(name, spec.max_turns, 0)
            if b == 0:
                continue
            if b == _UNBOUNDED or times == _UNBOUNDED:
                total, reason = _UNBOUNDED, why if b == _UNBOUNDED else (
                    f"flow node {name!r} runs on a flow cycle without max_uses")
                break
            total += b * times
            reason = reason or why
    # the tool's own run budget: when every declaration a run can reach has max_uses, no
    # run runs it more often than the largest (a call past it gets an error output and
    # never runs)
    # one count per tool name, so the budgets of several tools add up
    budgets: dict[str, list[int | None]] = {}
    if any(getattr(d, "max_uses", None) is not None for i, a in enumerate(agents) if covers[i]
           for _, _, d in _calls(graph, a.name, covers[i])):
        reach = graph.reachable()
        for i, a in enumerate(agents):
            if covers[i] and f"a:{a.name}" in reach:
                for name, _, decl in _calls(graph, a.name, covers[i]):
                    budgets.setdefault(name, []).append(getattr(decl, "max_uses", None))
    if budgets and all(None not in b for b in budgets.values()):
        cap = sum(max(b for b in bs if b is not None) for bs in budgets.values())
        if total == _UNBOUNDED or total > cap:
            total, reason = cap, (f"its max_uses={cap} lets one run run it {cap} time(s)"
                                  if len(budgets) == 1 else
                                  f"their max_uses add up to {cap} time(s) per run")
    if total != _UNBOUNDED and total <= n:
        return

    def over(decl: object) -> bool:
        # a declaration whose own budget keeps it within n is no place to break the rule
        budget = getattr(decl, "max_uses", None)
        return budget is None or budget > n

    def offered_here(node: str) -> bool:
        return node.startswith("a:") and any(
            over(d) for _, _, d in _calls(graph, node[2:], cover.get(node[2:], frozenset())))

    found = graph.search(graph.entry or "", offered_here, decided_only=False)
    if found is None:
        return
    end, steps, _ = found
    trace = (*steps, next(step for _, step, d in _calls(graph, end[2:], cover[end[2:]])
                          if over(d)))
    worst = "without bound" if total == _UNBOUNDED else f"up to {total} times"
    path = " -> ".join(s.message for s in trace)
    yield ctx.diag(
        "SW804", f"policy {policy.describe()} fails: a run can call {tool} {worst} "
        f"({reason}); shortest run to it: {path}", loc, help=_HELP["max_calls"], trace=trace)


def _flow_visits(graph: RunGraph) -> dict[str, int]:
    """How often each flow node can run: once, ``max_items`` times under a fan-out, or
    (on a flow cycle) up to the sum of the flow's ``max_uses`` plus one."""
    spec = graph.spec
    flow = spec.flow or ()
    budget: int | None = 1
    for edge in flow:
        if edge.max_uses is None:
            budget = None
            break
        budget = (budget or 0) + edge.max_uses
    cyclic = _on_cycle(graph)
    out: dict[str, int] = {}
    for node in graph.succ:
        if not node.startswith("n:"):
            continue
        name = node[2:]
        times = 1
        if name in cyclic:
            times = _UNBOUNDED if budget is None else budget
        for edge in flow:
            if edge.kind == "fan_out" and edge.each == name:
                times = _UNBOUNDED if edge.max_items is None or times == _UNBOUNDED else (
                    times * edge.max_items)
        out[name] = times
    return out


def _on_cycle(graph: RunGraph) -> set[str]:
    succ: dict[str, list[str]] = {}
    for node, steps in graph.succ.items():
        if node.startswith("n:"):
            succ[node[2:]] = [t[2:] for t, _, _ in steps if t.startswith("n:")]
    out: set[str] = set()
    for start in succ:
        stack = list(succ[start])
        seen: set[str] = set()
        while stack:
            cur = stack.pop()
            if cur == start:
                out.add(start)
                break
            if cur in seen:
                continue
            seen.add(cur)
            stack.extend(succ.get(cur, ()))
    return out


RULES = (policies,)
