"""What each agent of a workflow can do, worked out once for every later stage.

Per agent (the first of each name; edges to agents that do not exist are ignored,
so a broken workflow still gets facts for the analyzer to judge and the diagram to
draw), a :class:`~stepswitch.ir.StateFacts`:

* **can it end a run**, and how: by answering, with a stopping tool's output; in how
  few model calls itself, and from it to the end of a run, handoffs followed;
* **where its turn can pause**: its approval tools and agent tools, and agent tools
  whose nested run can pause. A nested run pauses when any agent it can reach (by
  handoffs inside it, or by agent tools of those, to any depth) has an approval
  tool, so this is one reverse search from the agents with approvals over every
  edge: O(V + E);
* **does it only run nested**: reached from the entry (or a flow's agent nodes) only
  through agent tools.

A flow's nodes get theirs too (:func:`flow_facts`, a
:class:`~stepswitch.flow_ir.FlowFacts` each): whether the entry leads to the node,
whether a run that reaches it can end, and whether its run can pause.

``lower()`` stores them in the IR; the analyzer and the graph diagram (which also
look at workflows that cannot be lowered) read :meth:`WorkflowGraph.facts()
<stepswitch.graph.workflow_graph.WorkflowGraph.facts>`, the same pass. Nothing else
derives these facts.

Ending follows the run loop's default (``RunConfig(reset_tool_choice=True)``, as the
Agents SDK): once an agent has used a tool, its next model calls no longer force a
tool call. So an agent ends a run itself when its model settings do not force a tool
call (it may answer at once: 1 call), or they force one and it has a function or
agent tool the forced choice allows (it calls that tool, then may answer: 2 calls; 1
when its tool-use behaviour stops on that tool). An agent whose forced choice allows
only handoffs must hand off, and one whose forced tool does not exist can never call
the model successfully; such an agent ends a run only through a handoff to an agent
that can (one layered search over the reversed handoff edges).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from stepswitch.flow_ir import FlowFacts
from stepswitch.graph.spec import AgentSpec, WorkflowSpec
from stepswitch.ir import Approval, PausePoint, StateFacts

__all__ = ["finishes", "flow_facts", "forced_tool", "machine_facts", "own_ending", "reach"]


def forced_tool(settings: Mapping[str, Any] | None) -> str | None:
    """``"*"`` when model settings force any tool call, a tool's name when they force
    that tool, None when the model may answer in text."""
    choice = settings.get("tool_choice") if settings else None
    if choice is None or choice in ("auto", "none"):
        return None
    if choice == "required":
        return "*"
    return str(choice)


def finishes(
    choice: object, callable_names: Sequence[str], tool_use: str, stop_at: Sequence[str]
) -> tuple[bool, bool]:
    """``(by answering, by a tool that stops)``: how an agent can end its run, given its
    ``tool_choice``, the function and agent tools it offers, and its tool-use rule.

    A forced choice forces only the first call (see the module docstring): it answers
    unless its forced choice allows no function or agent tool, or every tool it may
    call stops the run. A stopping rule ends the run with the output of a function or
    agent tool among those the model may call (only the forced one, when named)."""
    forced = choice is not None and choice not in ("auto", "none")
    names = list(callable_names)
    if choice == "none":
        names = []
    elif forced and choice != "required":
        names = [name for name in names if name == choice]
    if tool_use == "run_llm_again":
        stopping: list[str] = []
    elif tool_use == "stop_at_tools":
        stopping = [name for name in names if name in stop_at]
    else:  # stop_on_first_tool, or a function that may stop
        stopping = names
    if not forced:
        answers = True
    elif tool_use == "function":  # it may or may not stop after the forced call
        answers = bool(names)
    else:  # it answers after a forced call to a tool that does not stop the run
        answers = any(name not in stopping for name in names)
    return answers, bool(stopping)


def own_ending(agent: AgentSpec) -> tuple[bool, bool, int | None]:
    """``(answers, stops, calls)``: how ``agent`` ends a run itself, and in how few
    model calls (None: it cannot)."""
    callable_names = [t.name for t in agent.tools] + [t.tool_name for t in agent.agent_tools]
    behavior = agent.tool_use_behavior
    choice = agent.model_settings.get("tool_choice") if agent.model_settings else None
    answers, stops = finishes(choice, callable_names, behavior.kind, behavior.tool_names)
    forced = forced_tool(agent.model_settings)
    if forced is None:
        return answers, stops, 1
    allowed = set(callable_names) if forced == "*" else set(callable_names) & {forced}
    if not allowed:
        return answers, stops, None
    # An agent tool is a tool like any other to the tool-use behaviour (as in the SDK,
    # where as_tool() makes a FunctionTool): the run loop stops on its output too.
    if behavior.kind in ("stop_on_first_tool", "function") or (
        behavior.kind == "stop_at_tools" and allowed & set(behavior.tool_names)
    ):
        return answers, stops, 1
    return answers, stops, 2


def reach(starts: Sequence[int], succ: Sequence[Sequence[int]]) -> list[bool]:
    """Which nodes ``starts`` reach over ``succ`` (adjacency lists), starts included."""
    seen = [False] * len(succ)
    queue: deque[int] = deque()
    for s in starts:
        if not seen[s]:
            seen[s] = True
            queue.append(s)
    while queue:
        for t in succ[queue.popleft()]:
            if not seen[t]:
                seen[t] = True
                queue.append(t)
    return seen


def _when(mode: str) -> Approval:
    return "per_call" if mode == "per_call" else "always"


def machine_facts(spec: WorkflowSpec) -> dict[str, StateFacts]:
    """The facts of every agent of ``spec``, by name (the first agent of each name)."""
    agents: dict[str, AgentSpec] = {}
    for agent in spec.agents:
        agents.setdefault(agent.name, agent)
    pos = {name: i for i, name in enumerate(agents)}
    listed = list(agents.values())
    n = len(listed)
    handoffs: list[list[int]] = [[] for _ in range(n)]
    nested: list[list[int]] = [[] for _ in range(n)]
    reverse: list[list[int]] = [[] for _ in range(n)]
    reverse_ending: list[list[int]] = [[] for _ in range(n)]
    direct: list[list[PausePoint]] = []
    for i, agent in enumerate(listed):
        forced = forced_tool(agent.model_settings)
        for h in agent.handoffs:
            j = pos.get(h.target)
            if j is None:
                continue
            handoffs[i].append(j)
            reverse[j].append(i)
            if forced is None or forced == "*" or h.tool_name == forced:
                reverse_ending[j].append(i)
        for t in agent.agent_tools:
            j = pos.get(t.target)
            if j is not None:
                nested[i].append(j)
                reverse[j].append(i)
        points = [PausePoint(t.name, "tool", _when(t.needs_approval))
                  for t in agent.tools if t.needs_approval != "never"]
        points += [PausePoint(t.tool_name, "agent_tool", _when(t.needs_approval), t.target)
                   for t in agent.agent_tools if t.needs_approval != "never"]
        direct.append(points)

    # a nested run started at j can pause when j reaches an agent with an approval
    run_pauses = reach([i for i in range(n) if direct[i]], reverse)

    endings = [own_ending(agent) for agent in listed]
    distance = _end_distance([e[2] for e in endings], reverse_ending)

    roots: list[str] = [spec.entry] if spec.entry is not None else []
    if spec.flow is not None:  # every agent node of a flow starts a top-level run
        roots.extend(n for e in spec.flow for n in (e.source, *e.targets(), e.each)
                     if n is not None)
    top = reach([pos[r] for r in roots if r in pos], handoffs)
    everything = [h + t for h, t in zip(handoffs, nested, strict=True)]
    reachable = reach([i for i in range(n) if top[i]], everything)

    facts: dict[str, StateFacts] = {}
    for i, agent in enumerate(listed):
        points = list(direct[i])
        for t in agent.agent_tools:
            j = pos.get(t.target)
            if t.needs_approval == "never" and j is not None and run_pauses[j]:
                points.append(PausePoint(t.tool_name, "nested", "always", t.target))
        answers, stops, own = endings[i]
        facts[agent.name] = StateFacts(
            answers=answers,
            stops=stops,
            own_end=own,
            end_calls=distance[i] or None,
            pauses=tuple(points),
            nested_only=reachable[i] and not top[i],
        )
    return facts


def _end_distance(own: list[int | None], preds: list[list[int]]) -> list[int]:
    """Per agent, the fewest model calls to the end of a run (0: none can end).
    Layer d holds the agents that end a run in d calls at best; an agent's own end
    takes 1 or 2 calls, each handoff one more."""
    distance = [0] * len(own)
    starts: dict[int, list[int]] = {1: [], 2: []}
    for i, calls in enumerate(own):
        if calls is not None:
            starts[calls].append(i)
    layer: list[int] = []
    d = 0
    while layer or d < 2:
        d += 1
        following: list[int] = []
        for node in layer:
            for pred in preds[node]:
                if not distance[pred]:
                    distance[pred] = d
                    following.append(pred)
        for i in starts.get(d, ()):
            if not distance[i]:
                distance[i] = d
                following.append(i)
        layer = following
    return distance


def flow_facts(spec: WorkflowSpec, states: Mapping[str, StateFacts]) -> dict[str, FlowFacts]:
    """The facts of every node of ``spec``'s flow, by name, in the order the flow names
    them (empty without a flow); ``states`` are the agents' facts (:func:`machine_facts`).

    A broken flow still gets facts, for the analyzer to judge: a name that is no agent
    or step is a node without exits, and every exit of a node with two counts (a
    fan-out's ``each`` only from the node's first exit, as the runtime would take it).
    A fan-out's ``each`` can end when its join's target can. One search forward from the
    entry, one backward from the exits to END: O(nodes + edges)."""
    if spec.flow is None:
        return {}
    pos: dict[str, int] = {}

    def node(name: str) -> int:
        if name not in pos:
            pos[name] = len(pos)
            succ.append([])
            ends.append(False)
        return pos[name]

    succ: list[list[int]] = []
    ends: list[bool] = []
    if spec.entry is not None:
        node(spec.entry)
    first_exit: set[str] = set()
    fan: list[tuple[int, int]] = []  # (source, each) of the fan-outs the runtime takes
    joins: list[tuple[int, str | None]] = []  # (each, the join's target)
    for edge in spec.flow:
        src = node(edge.source)
        for target in edge.targets():
            if target is None:
                ends[src] = True
            else:
                succ[src].append(node(target))
        if edge.each is not None:
            each = node(edge.each)
            if edge.source not in first_exit:
                fan.append((src, each))
            joins.append((each, edge.target))
        first_exit.add(edge.source)
    forward = [list(s) for s in succ]
    for src, each in fan:
        forward[src].append(each)
    reachable = reach([0] if spec.entry is not None else [], forward)
    backward: list[list[int]] = [[] for _ in pos]
    for i, targets in enumerate(succ):
        for j in targets:
            backward[j].append(i)
    can_end = reach([i for i, e in enumerate(ends) if e], backward)
    for each, target in joins:  # only inside its fan-out does ``each`` lead to the join
        can_end[each] = can_end[each] or target is None or can_end[pos[target]]

    # a node's run pauses when its agent, or one its handoffs reach, can pause (each
    # agent's own facts count its nested runs): one search back from those agents
    firsts: dict[str, AgentSpec] = {}
    for agent in spec.agents:
        firsts.setdefault(agent.name, agent)
    agents = {name: k for k, name in enumerate(firsts)}
    into: list[list[int]] = [[] for _ in agents]
    for k, agent in enumerate(firsts.values()):
        for h in agent.handoffs:
            if h.target in agents:
                into[agents[h.target]].append(k)
    pausing = reach([k for name, k in agents.items() if name in states and states[name].pauses],
                    into)
    steps = {s.name for s in spec.steps}
    return {
        name: FlowFacts(
            reachable=reachable[i],
            can_end=can_end[i],
            can_pause=name not in steps and name in agents and pausing[agents[name]],
        )
        for name, i in pos.items()
    }
