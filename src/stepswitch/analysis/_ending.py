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

from stepswitch.analysis._index import Index
from stepswitch.graph.spec import AgentSpec

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


@dataclass(frozen=True, slots=True)
class Ending:
    distance: dict[str, int]
    """Fewest model calls from an agent to the end of the run (only agents that can end)."""


def ending(index: Index) -> Ending:
    n = len(index)
    preds: list[list[int]] = [[] for _ in range(n)]
    distance = [0] * n
    queue: deque[int] = deque()
    pos = index.pos
    for i, agent in enumerate(index.agents):
        forced = forced_tool(agent)
        for edge in index.handoffs[i]:
            if forced is None or forced == "*" or edge.tool_name == forced:
                preds[pos[edge.target]].append(i)
        if forced is None or self_ending(agent):
            distance[i] = 1
            queue.append(i)
    while queue:
        node = queue.popleft()
        d = distance[node] + 1
        for pred in preds[node]:
            if not distance[pred]:
                distance[pred] = d
                queue.append(pred)
    names = index.names
    return Ending({names[i]: d for i, d in enumerate(distance) if d})
