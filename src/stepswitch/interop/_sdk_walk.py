"""Which SDK agents a module declares are the entries of its apps (``sdk_roots``): a
tolerant walk of handoffs and agent tools that reads no more than it must. Not API:
:mod:`stepswitch.interop.sdk` re-exports both names."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

from stepswitch.errors import UserError
from stepswitch.interop import _sdk_private as private

__all__ = ["is_sdk_agent", "sdk_roots"]


def is_sdk_agent(obj: object) -> bool:
    """True for an ``agents.Agent`` (without importing the SDK when it is not loaded)."""
    module = sys.modules.get("agents")
    agent_cls = getattr(module, "Agent", None) if module is not None else None
    return agent_cls is not None and isinstance(obj, agent_cls)


def sdk_roots(namespace: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(variable, agent)`` for the module-level SDK agents of ``namespace`` that no
    other of its agents reaches through handoffs or agent tools (the apps' entries).

    Agents that hand off in a closed cycle (a → b → a, nothing else reaching them) are
    all reached by another; each such app is named by its first-declared agent, so it
    is found like any other."""
    agents = [(k, v) for k, v in namespace.items() if not k.startswith("_") and is_sdk_agent(v)]
    if not agents:
        return []
    private.check_version()
    reached: set[int] = set()
    for _, agent in agents:
        for target in _targets(agent):
            if target is not agent:
                reached.add(id(target))
    seen: set[int] = set()
    roots = []
    for variable, agent in agents:
        if id(agent) not in reached and id(agent) not in seen:
            seen.add(id(agent))
            roots.append((variable, agent))
    covered = _reachable([agent for _, agent in roots])
    for variable, agent in agents:
        if id(agent) not in covered:
            roots.append((variable, agent))
            covered |= _reachable([agent])
    return roots


def _reachable(starts: Iterable[Any]) -> set[int]:
    """Ids of the SDK agents ``starts`` reach, themselves included."""
    todo = list(starts)
    seen = {id(a) for a in todo}
    while todo:
        for target in _targets(todo.pop()):
            if id(target) not in seen:
                seen.add(id(target))
                todo.append(target)
    return seen


def _targets(agent: Any) -> Iterable[Any]:
    """The SDK agents one agent reaches directly (tolerant: used only to find roots)."""
    for h in getattr(agent, "handoffs", ()) or ():
        if is_sdk_agent(h):
            yield h
        else:
            try:
                yield private.handoff_target(h)
            except (UserError, AttributeError):
                continue
    for t in getattr(agent, "tools", ()) or ():
        try:
            target = private.agent_tool_target(t)
        except (UserError, AttributeError, TypeError):
            continue
        if target is not None:
            yield target
