"""SW203's rounds of a flow loop: the smallest total budget of budgeted edges that every
cycle crosses, so adding a ``max_uses`` never raises the bound (trial 2 #18), and the
bound is never below the most model calls a run can really make (brute force)."""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.analysis._loops import loop_budget


def always(text: str) -> bool:
    """A predicate the analysis cannot see into: a branch may go either way."""
    return bool(text)


def echo(text: str) -> str:
    return text


def test_a_second_budget_on_a_loop_does_not_raise_the_bound() -> None:
    # the trial's loop a → j → again → a, budget 2 on again → a; then also 3 on the branch
    a = ss.Agent(name="a", instructions="A.")
    j = ss.Agent(name="j", instructions="J.")
    again = ss.step(name="again")(echo)
    done = ss.step(name="done")(echo)

    def wf(branch_budget: int | None) -> ss.Workflow:
        return ss.Workflow("one", a, agents=[a, j], max_turns=1, flow=[
            ss.then(a, j),
            ss.branch(j, when=always, then=done, otherwise=again, max_uses=branch_budget),
            ss.then(again, a, max_uses=2), ss.then(done, ss.END)])

    before = wf(None).check()
    after = wf(3).check()
    assert before.ok and after.ok
    # three rounds of a and j at most: every round but the first crosses again → a
    assert before.model_call_bound == after.model_call_bound == 6
    assert wf(1).check().model_call_bound == 4  # a tighter budget lowers it


def test_stepswitch_diff_does_not_call_an_added_budget_a_weakening(tmp_path: Any) -> None:
    from stepswitch.cli.main import main

    text = '''
import stepswitch as ss

def ok(text: str) -> bool:
    return bool(text)

def echo(text: str) -> str:
    return text

a = ss.Agent(name="a", instructions="A.")
j = ss.Agent(name="j", instructions="J.")
again = ss.step(name="again")(echo)
done = ss.step(name="done")(echo)
wf1 = ss.Workflow("one", a, agents=[a, j], max_turns=1, flow=[
    ss.then(a, j), ss.branch(j, when=ok, then=done, otherwise=again{budget}),
    ss.then(again, a, max_uses=2), ss.then(done, ss.END)])
'''
    for side, budget in (("old", ""), ("new", ", max_uses=3")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "loopflows.py").write_text(text.replace("{budget}", budget))
    code = main(["diff", f"{tmp_path}/old/loopflows.py:wf1", f"{tmp_path}/new/loopflows.py:wf1",
                 "--fail-on", "safety"])
    assert code == 0


# -- the search itself -------------------------------------------------------------------------


def test_loop_budget_takes_the_cheapest_cut() -> None:
    # two cycles 0→1→0 and 0→2→0 share node 0; budgets on every edge
    succ = [[1, 2], [0], [0]]
    budget = {(0, 1): 5, (1, 0): 2, (0, 2): 4, (2, 0): 7}
    assert loop_budget([0, 1, 2], succ, budget) == 2 + 4
    # one edge every cycle crosses is cheaper than one per cycle
    succ = [[1], [2, 3], [0], [0]]  # 0→1→2→0 and 0→1→3→0 both cross 0→1
    budget = {(0, 1): 5, (2, 0): 2, (3, 0): 2}
    assert loop_budget([0, 1, 2, 3], succ, budget) == 4
    budget[(0, 1)] = 3
    assert loop_budget([0, 1, 2, 3], succ, budget) == 3


# -- random flows: sound against brute force, monotone in budgets ------------------------------


Edge = tuple[str, tuple[int, ...], int | None]
"""One exit of node i: ``then`` with one target or ``branch`` with two (-1 is END), and
its max_uses."""


def _random_flow(rng: random.Random, n: int) -> list[Edge]:
    exits: list[Edge] = []
    for i in range(n):
        targets = [rng.randrange(-1, n) for _ in range(rng.choice((1, 2)))]
        if i == n - 1 and -1 not in targets:
            targets[0] = -1
        kind = "then" if len(targets) == 1 else "branch"
        exits.append((kind, tuple(targets), rng.choice((None, None, 1, 2, 3))))
    return exits


def _cyclic_unbudgeted(exits: Sequence[Edge]) -> bool:
    succ = [[t for t in ts if t >= 0] if budget is None else [] for _, ts, budget in exits]
    state = [0] * len(exits)

    def visit(v: int) -> bool:
        state[v] = 1
        for t in succ[v]:
            if state[t] == 1 or (state[t] == 0 and visit(t)):
                return True
        state[v] = 2
        return False

    return any(state[v] == 0 and visit(v) for v in range(len(exits)))


def _workflow(exits: Sequence[Edge], agents: Sequence[bool]) -> ss.Workflow:
    nodes: list[Any] = [
        ss.Agent(name=f"n{i}", instructions="x") if is_agent else ss.step(name=f"n{i}")(echo)
        for i, is_agent in enumerate(agents)]
    flow = []
    for i, (kind, targets, budget) in enumerate(exits):
        to = [ss.END if t < 0 else nodes[t] for t in targets]
        if kind == "then":
            flow.append(ss.then(nodes[i], to[0], max_uses=budget))
        else:
            flow.append(ss.branch(nodes[i], when=always, then=to[0], otherwise=to[1],
                                  max_uses=budget))
    return ss.Workflow("rnd", nodes[0], agents=[x for x in nodes if isinstance(x, ss.Agent)],
                       max_turns=1, flow=flow)


def _true_max(exits: Sequence[Edge], agents: Sequence[bool]) -> float:
    """The most agent visits (one model call each, max_turns=1) of any run, every branch
    taken either way, each edge at most its max_uses times; -inf when no run ends."""

    @functools.cache
    def best(node: int, uses: tuple[tuple[tuple[int, int], int], ...]) -> float:
        here = 1 if agents[node] else 0
        _, targets, budget = exits[node]
        counted = dict(uses)
        out = float("-inf")
        for t in set(targets):
            key = (node, t)
            if budget is not None and counted.get(key, 0) >= budget:
                continue  # the run would stop here with FlowBudgetExceeded: fewer calls
            if t < 0:
                out = max(out, 0)
                continue
            more = dict(counted)
            if budget is not None:
                more[key] = more.get(key, 0) + 1
            out = max(out, best(t, tuple(sorted(more.items()))))
        # a run that stops at a spent edge still made its calls
        return here + max(out, 0)

    return best(0, ())


@pytest.mark.parametrize("seed", range(6))
def test_random_flows_bound_is_sound_and_never_grows_with_a_budget(seed: int) -> None:
    rng = random.Random(seed)
    checked = 0
    while checked < 25:
        n = rng.randint(2, 6)
        exits = _random_flow(rng, n)
        if _cyclic_unbudgeted(exits):
            continue
        agents = [rng.random() < 0.6 for _ in range(n)]
        report = _workflow(exits, agents).check()
        if not report.ok or report.model_call_bound is None:
            continue
        bound = report.model_call_bound
        assert bound >= _true_max(exits, agents), (exits, agents)
        # add (or tighten) a budget on each edge in turn: the bound never grows
        for i, (kind, targets, budget) in enumerate(exits):
            for new in (1, 2, 3):
                if budget is not None and new > budget:
                    continue
                changed = list(exits)
                changed[i] = (kind, targets, new)
                tighter = _workflow(changed, agents).check()
                assert tighter.model_call_bound is not None
                assert tighter.model_call_bound <= bound, (exits, changed, agents)
                assert tighter.model_call_bound >= _true_max(changed, agents)
        checked += 1
