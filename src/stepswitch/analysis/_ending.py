"""Which agents can end a run, and in how few model calls. Not API.

This follows the run loop's default (``RunConfig(reset_tool_choice=True)``, as the
Agents SDK): once an agent has used a tool, its next model calls no longer force a
tool call. So an agent ends a run itself when

* its model settings do not force a tool call: it may answer at once (1 call);
* they force one, and it has a function tool or agent tool the forced choice allows:
  it calls that tool, then may answer (2 calls; 1 when its tool-use behaviour stops
  on a tool, function or agent tool alike: ``stop_on_first_tool``, ``StopAtTools``
  naming one, or a behaviour function).

An agent whose forced choice allows only handoffs (``tool_choice="required"`` with no
tools, or a handoff's tool name) must hand off, and one whose forced tool does not
exist can never call the model successfully. Such an agent ends a run only through a
handoff to an agent that can. One layered BFS over the reversed handoff edges: O(V + E).
"""

from __future__ import annotations

from dataclasses import dataclass

from stepswitch.analysis._index import Index
from stepswitch.graph.spec import AgentSpec

__all__ = ["Ending", "calls_to_end", "ending", "forced_tool"]


def forced_tool(agent: AgentSpec) -> str | None:
    """``"*"`` when any tool call is forced, a tool's name when that tool is forced,
    None when the model may answer in text."""
    choice = agent.model_settings.get("tool_choice")
    if choice is None or choice in ("auto", "none"):
        return None
    if choice == "required":
        return "*"
    return str(choice)


def calls_to_end(agent: AgentSpec) -> int | None:
    """Fewest model calls with which this agent ends a run itself; None when it cannot
    (it must hand off, or its forced tool does not exist)."""
    forced = forced_tool(agent)
    if forced is None:
        return 1
    callable_ = {t.name for t in agent.tools} | {t.tool_name for t in agent.agent_tools}
    if forced != "*":
        callable_ &= {forced}
    if not callable_:
        return None
    # An agent tool is a tool like any other to the tool-use behaviour (as in the SDK,
    # where as_tool() makes a FunctionTool): the run loop stops on its output too.
    behavior = agent.tool_use_behavior
    if behavior.kind in ("stop_on_first_tool", "function") or (
        behavior.kind == "stop_at_tools" and callable_ & set(behavior.tool_names)
    ):
        return 1
    return 2


@dataclass(frozen=True, slots=True)
class Ending:
    distance: list[int]
    """Per agent (by index), the fewest model calls to the end of a run; 0 when no run
    that reaches it can end."""
    pos: dict[str, int]

    def calls(self, name: str) -> int | None:
        """Fewest model calls from agent ``name`` to the end of a run, or None."""
        i = self.pos.get(name)
        return self.distance[i] or None if i is not None else None


def ending(index: Index) -> Ending:
    n = len(index)
    preds: list[list[int]] = [[] for _ in range(n)]
    distance = [0] * n
    starts: dict[int, list[int]] = {1: [], 2: []}
    pos = index.pos
    for i, agent in enumerate(index.agents):
        forced = forced_tool(agent)
        for edge in index.handoffs[i]:
            if forced is None or forced == "*" or edge.tool_name == forced:
                preds[pos[edge.target]].append(i)
        calls = calls_to_end(agent)
        if calls is not None:
            starts[calls].append(i)
    # Layered BFS: layer d holds the agents that end a run in d calls at best.
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
    return Ending(distance, pos)
