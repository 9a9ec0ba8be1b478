"""Linear-time graph passes the rules share, over agents numbered ``0..n-1``: strongly
connected components (Tarjan, iterative so deep graphs do not hit the recursion limit)
and shortest paths inside one component (BFS). Not API."""

from __future__ import annotations

from collections import deque
from collections.abc import Container, Sequence

__all__ = ["path_within", "strongly_connected"]

Adjacency = Sequence[Sequence[int]]


def strongly_connected(succ: Adjacency) -> tuple[list[list[int]], list[int]]:
    """Components in reverse topological order (every component comes after each
    component it reaches: sinks first) and each node's component number. O(V + E)."""
    n = len(succ)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    comps: list[list[int]] = []
    comp_of = [-1] * n
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, iter(succ[root]))]
        while work:
            node, children = work[-1]
            descended = False
            for child in children:
                if index[child] == -1:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack[child] = True
                    work.append((child, iter(succ[child])))
                    descended = True
                    break
                if on_stack[child] and index[child] < low[node]:
                    low[node] = index[child]
            if descended:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                if low[node] < low[parent]:
                    low[parent] = low[node]
            if low[node] == index[node]:
                number = len(comps)
                comp: list[int] = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    comp_of[member] = number
                    comp.append(member)
                    if member == node:
                        break
                comps.append(comp)
    return comps, comp_of


def path_within(start: int, goal: int, succ: Adjacency, members: Container[int]) -> list[int]:
    """A shortest path ``[start, ..., goal]`` using only ``members`` (BFS). When
    ``start == goal`` it is a shortest cycle ``[start, ..., start]``. ``goal`` must be
    reachable. O(size of the component's edges)."""
    parent: dict[int, int] = {}
    queue: deque[int] = deque([start])
    seen = {start}
    while queue:
        node = queue.popleft()
        for child in succ[node]:
            if child == goal:
                path = [goal, node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                path.reverse()
                return path
            if child in members and child not in seen:
                seen.add(child)
                parent[child] = node
                queue.append(child)
    raise ValueError(f"{goal} is not reachable from {start}")
