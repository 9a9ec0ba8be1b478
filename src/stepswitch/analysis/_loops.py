"""How many rounds a loop of flow nodes can go: the smallest total budget of a set of
budgeted edges that every cycle of the loop crosses. Not API.

A run walks a loop (a strongly connected set of nodes) in one stretch: once it leaves,
no edge leads back. Take a set ``C`` of the loop's budgeted edges such that the loop
without ``C`` has no cycle. Cut the walk at each crossing of an edge of ``C``: every
piece follows edges of an acyclic graph, so it visits each node at most once, and there
are at most ``1 + sum of max_uses over C`` pieces. Any such ``C`` gives a sound number
of rounds; the smallest is the best. The set of all budgeted edges is one (SW705 proves
the unbudgeted edges alone hold no cycle), so the figure is never above their sum; and
adding a ``max_uses`` to an edge only adds candidate sets, so it never grows.

Finding the smallest is a minimum feedback edge set (NP-hard in general); loops in
flows carry a handful of budgets, so a branch-and-bound search finds it at once. It
stops after ``WORK`` edge visits, or does not start past ``MAX_BUDGETED`` budgeted
edges, keeping the best set found (at worst all budgeted edges): still sound, no longer
guaranteed the smallest, so monotone only where the search completed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

__all__ = ["MAX_BUDGETED", "WORK", "loop_budget"]

WORK = 400_000
"""Edge visits per loop before the best set found so far is taken (a few tenths of a
second at most, however large and tangled the loop)."""

MAX_BUDGETED = 64
"""Past this many budgeted edges in one loop, their sum is taken without a search."""


def loop_budget(
    comp: Sequence[int], succ: Sequence[Sequence[int]], budget: Mapping[tuple[int, int], int]
) -> int:
    """The smallest total ``max_uses`` of a set of budgeted edges whose removal leaves the
    loop ``comp`` (nodes of the graph ``succ``) without a cycle. ``budget`` maps an edge
    ``(source, target)`` inside ``comp`` to its ``max_uses``; the other edges must hold no
    cycle by themselves."""
    members = {v: k for k, v in enumerate(comp)}
    n = len(comp)
    heads: list[int] = []
    weight: list[int | None] = []
    out: list[list[int]] = [[] for _ in range(n)]
    for v in comp:
        seen: set[int] = set()
        for t in succ[v]:
            k = members.get(t)
            if k is None or t in seen:
                continue
            seen.add(t)
            out[members[v]].append(len(heads))
            heads.append(k)
            weight.append(budget.get((v, t)))
    budgeted = [e for e, w in enumerate(weight) if w is not None]
    total = sum(w for w in weight if w is not None)
    if len(budgeted) > MAX_BUDGETED:
        return total
    removed = [False] * len(heads)
    visits = 0

    def find_cycle() -> list[int] | None:
        """The edges of some cycle of the loop without the removed edges, or None: an
        iterative depth-first search (a back edge closes a cycle along the path).
        Raises ``_OutOfWork`` past the loop's ``WORK``."""
        nonlocal visits
        depth = [-1] * n  # the node's place on the current path, -1 off it
        done = [False] * n
        for root in range(n):
            if done[root]:
                continue
            path: list[int] = []  # path[k]: the edge from the k-th node to the next
            work = [(root, iter(out[root]))]
            depth[root] = 0
            while work:
                node, edges = work[-1]
                for e in edges:
                    visits += 1
                    if visits > WORK:
                        raise _OutOfWork
                    if removed[e]:
                        continue
                    head = heads[e]
                    if depth[head] >= 0:
                        return [*path[depth[head]:], e]
                    if not done[head]:
                        depth[head] = len(work)
                        path.append(e)
                        work.append((head, iter(out[head])))
                        break
                else:
                    done[node] = True
                    depth[node] = -1
                    work.pop()
                    if path:
                        path.pop()
        return None

    # a first set: all budgeted edges, then put back the costliest ones that close no cycle
    for e in budgeted:
        removed[e] = True
    best = total
    try:
        for e in sorted(budgeted, key=lambda e: -(weight[e] or 0)):
            removed[e] = False
            try:
                closes = find_cycle() is not None
            except _OutOfWork:
                removed[e] = True
                raise
            if closes:
                removed[e] = True
            else:
                best -= weight[e] or 0
    except _OutOfWork:
        return best  # the edges still removed cut every cycle
    for e in budgeted:
        removed[e] = False

    kept = [False] * len(heads)

    def search(cost: int) -> None:
        nonlocal best
        cycle = find_cycle()
        if cycle is None:
            best = min(best, cost)
            return
        # some edge of this cycle must go: branch on which is the first (cheapest first);
        # in a later branch the earlier ones stay
        options = sorted((e for e in cycle if weight[e] is not None and not kept[e]),
                         key=lambda e: weight[e] or 0)
        marked: list[int] = []
        for e in options:
            w = weight[e] or 0
            if cost + w >= best:
                break  # sorted: the rest cost as much or more
            removed[e] = True
            search(cost + w)
            removed[e] = False
            kept[e] = True
            marked.append(e)
        for e in marked:
            kept[e] = False

    with contextlib.suppress(_OutOfWork):  # the best set found so far stands
        search(0)
    return best


class _OutOfWork(Exception):
    """The search spent its ``WORK``."""
