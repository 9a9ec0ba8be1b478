"""Linear-time graph passes the rules share: strongly connected components (Tarjan,
iterative so deep graphs do not hit the recursion limit) and a shortest cycle through
a node inside one component. Not API."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

__all__ = ["cycle_through", "strongly_connected"]


def strongly_connected(
    nodes: Sequence[str], succ: Mapping[str, Sequence[str]]
) -> tuple[list[list[str]], dict[str, int]]:
    """Components in reverse topological order (every component comes after each
    component it reaches: sinks first) and each node's component index.

    O(V + E). Every node ``succ`` names must be in ``nodes`` (callers keep dangling
    edges out).
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    comps: list[list[str]] = []
    comp_of: dict[str, int] = {}
    counter = 0
    empty: Sequence[str] = ()
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work[-1]
            children = succ.get(node, empty)
            if i < len(children):
                work[-1] = (node, i + 1)
                child = children[i]
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, 0))
                elif child in on_stack and index[child] < low[node]:
                    low[node] = index[child]
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                if low[node] < low[parent]:
                    low[parent] = low[node]
            if low[node] == index[node]:
                comp: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp_of[member] = len(comps)
                    comp.append(member)
                    if member == node:
                        break
                comps.append(comp)
    return comps, comp_of


def cycle_through(
    start: str, succ: Mapping[str, Sequence[str]], members: set[str] | frozenset[str]
) -> list[str] | None:
    """The shortest cycle ``[start, ..., last]`` (``last`` has an edge back to ``start``)
    using only ``members``; None when there is none. BFS: O(size of the component)."""
    parent: dict[str, str] = {}
    queue: deque[str] = deque([start])
    seen = {start}
    while queue:
        node = queue.popleft()
        for child in succ.get(node, ()):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                path.reverse()
                return path
            if child in members and child not in seen:
                seen.add(child)
                parent[child] = node
                queue.append(child)
    return None
