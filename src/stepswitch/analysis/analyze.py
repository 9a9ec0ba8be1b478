"""``analyze``: run every rule over a workflow graph and collect one ``Report``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from stepswitch._agents_api import AgentsAPITarget
from stepswitch._gc import gc_paused
from stepswitch.analysis._context import Ctx
from stepswitch.analysis.codes import invalid_prefixes, matches_any
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.analysis.report import Report
from stepswitch.analysis.rules import RULES
from stepswitch.analysis.rules.agents_api import TARGET_KEY
from stepswitch.errors import UserError
from stepswitch.graph.spec import PolicySpec
from stepswitch.graph.workflow_graph import WorkflowGraph
from stepswitch.policies import Policy, as_spec

__all__ = ["analyze"]


def analyze(
    graph: WorkflowGraph,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    max_model_calls: int | None = None,
    policies: Sequence[Policy | PolicySpec] = (),
    prices: Mapping[str, tuple[float, float]] | None = None,
    target: AgentsAPITarget | None = None,
) -> Report:
    """Every finding about ``graph``, sorted. Never raises for a mistake in the workflow.

    ``select``/``ignore`` take codes or prefixes (``SW2``, ``SW107``); a code is kept when
    it matches ``select`` (default: all) and matches neither ``ignore`` nor the
    workflow's ``ignore`` nor, for findings inside an agent, that agent's ``ignore``.
    ``max_model_calls`` overrides ``Workflow(max_model_calls=...)`` for SW204.
    ``policies`` are proved besides the workflow's own (``[tool.stepswitch] policies``);
    ``prices`` (model -> input, output USD per 1M tokens) override the shipped table.
    ``target`` checks what the hosted Agents API cannot express (SW650-SW654).
    """
    if isinstance(select, str):  # one code given bare: "SW2", not list("SW2")
        select = [select]
    if isinstance(ignore, str):
        ignore = [ignore]
    for arg, prefixes in (("select", select), ("ignore", ignore)):
        bad = invalid_prefixes(prefixes or ())
        if bad:
            raise UserError(f"{arg}: {', '.join(map(repr, bad))} match(es) no diagnostic code")
    spec = graph.spec
    limit = max_model_calls if max_model_calls is not None else spec.max_model_calls
    ctx = Ctx(graph, limit)
    if policies:
        ctx.memo["extra_policies"] = tuple(as_spec(p) for p in policies)
    if prices:
        ctx.memo["prices"] = dict(prices)
    if target is not None:
        ctx.memo[TARGET_KEY] = target
    found: list[Diagnostic] = []
    # The passes allocate many small, short-lived objects and no reference cycles; a
    # full collection triggered midway would walk the whole (large) spec for nothing.
    with gc_paused():
        for rule in RULES:
            found.extend(rule(ctx))
    agent_ignores: dict[str, tuple[str, ...]] = {}
    for agent in spec.agents:  # the first agent of a name is the one the graph keeps
        agent_ignores.setdefault(agent.name, agent.ignore)
    kept = _filter(found, select, [*(ignore or ()), *spec.ignore], agent_ignores)
    bound = ctx.memo.get("model_call_bound")
    return Report.of(spec.name, kept, model_call_bound=bound if isinstance(bound, int) else None)


def _filter(
    found: Iterable[Diagnostic],
    select: Sequence[str] | None,
    ignore: Sequence[str],
    agent_ignores: dict[str, tuple[str, ...]],
) -> list[Diagnostic]:
    kept = []
    for d in found:
        if select is not None and not matches_any(d.code, select):
            continue
        if matches_any(d.code, ignore):
            continue
        path = d.location.path
        if agent_ignores and path.startswith("agents."):
            owner = _agent_of(path, agent_ignores)
            if owner is not None and matches_any(d.code, agent_ignores[owner]):
                continue
        kept.append(d)
    return kept


def _agent_of(path: str, agents: dict[str, tuple[str, ...]]) -> str | None:
    """The agent a path lies in; agent names may hold dots, so try each split."""
    rest = path[len("agents."):]
    if rest in agents:
        return rest
    for i, ch in enumerate(rest):
        if ch == "." and rest[:i] in agents:
            return rest[:i]
    return None
