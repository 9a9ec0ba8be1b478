"""Which agents can end a run, and in how few model calls. Not API.

An agent ends a run itself when it may answer in text or with its output type (its
model settings do not force a tool call), or when a forced tool call can stop the run
through its tool-use behaviour (``stop_on_first_tool``, ``StopAtTools`` naming one of
its function tools, or a behaviour function, which may decide to stop). Agent tools
never end the caller's run. An agent can also end a run by handing off to an agent
that can. One multi-source BFS over the reversed handoff edges: O(V + E).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from stepswitch.graph.spec import AgentSpec
from stepswitch.graph.workflow_graph import WorkflowGraph

__all__ = ["Ending", "ending", "forced_tool", "self_ending"]


def forced_tool(agent: AgentSpec) -> str | None:
    """``"*"`` when any tool call is forced, a tool's name when that tool is forced,
    None when the model may answer in text."""
    choice = agent.model_settings.get("tool_choice")
    if choice is None or choice in ("auto", "none"):
        return None
    if choice == "required":
        return "*"
    return str(choice)


def self_ending(agent: AgentSpec) -> bool:
    """True when a model call of this agent can end the run without a handoff."""
    forced = forced_tool(agent)
    if forced is None:
        return True
    names = {t.name for t in agent.tools}
    if forced != "*":
        names &= {forced}
    if not names:
        return False
    behavior = agent.tool_use_behavior
    if behavior.kind in ("stop_on_first_tool", "function"):
        return True
    if behavior.kind == "stop_at_tools":
        return bool(names & set(behavior.tool_names))
    return False


def handoff_targets(agent: AgentSpec, graph: WorkflowGraph) -> list[str]:
    """The agents this agent may hand off to, given what its settings force."""
    forced = forced_tool(agent)
    return [
        e.target
        for e in graph.out_edges(agent.name, "handoff")
        if forced in (None, "*") or e.tool_name == forced
    ]


@dataclass(frozen=True, slots=True)
class Ending:
    distance: dict[str, int]
    """Fewest model calls from an agent to the end of the run (only agents that can end)."""
    self_ending: frozenset[str]


def ending(graph: WorkflowGraph) -> Ending:
    names = graph.agent_names()
    preds: dict[str, list[str]] = {n: [] for n in names}
    distance: dict[str, int] = {}
    queue: deque[str] = deque()
    enders = set()
    for name in names:
        agent = graph.agent(name)
        for target in handoff_targets(agent, graph):
            preds[target].append(name)
        if self_ending(agent):
            enders.add(name)
            distance[name] = 1
            queue.append(name)
    while queue:
        node = queue.popleft()
        d = distance[node] + 1
        for pred in preds[node]:
            if pred not in distance:
                distance[pred] = d
                queue.append(pred)
    return Ending(distance, frozenset(enders))
