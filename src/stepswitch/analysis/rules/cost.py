"""SW206-SW208 cost ceilings: the worst-case spend of one run, against
``Workflow(max_cost_usd=, max_total_tokens=)``.

The bound: ``N`` worst-case model calls (SW203's bound, nested runs included), each
made by the reachable agent whose call costs most. One call's output is at most its
``ModelSettings.max_tokens``; its input at most the agent's instructions, tool and
handoff schemas and output schema, one token per UTF-8 byte, plus every model output
before it in the run (so call ``k`` carries ``k - 1`` earlier outputs). Tool results
and the run's own input message are not bounded statically: the bound leaves them out
and says so. Prices come from the table the package ships (``stepswitch/prices.json``,
dated) and ``[tool.stepswitch.prices]`` (USD per 1M tokens).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch._prices import price_table
from stepswitch.analysis._budget import PARALLEL_HELP, unproved_by_parallel
from stepswitch.analysis._context import Ctx
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.analysis.rules._run_graph import run_graph
from stepswitch.graph.spec import AgentSpec

__all__ = ["RULES", "CostBound", "price_table", "worst_case"]

DEFAULT_MODEL = "gpt-4.1"
"""The model an agent without ``model=`` is priced at (``stepswitch run``'s default)."""


def _input_bytes(agent: AgentSpec) -> int:
    """What an agent sends before any history: instructions and every schema."""
    size = len((agent.instructions or "").encode())
    parts: list[Any] = [
        [t.name, t.description, t.parameters] for t in agent.tools]
    parts += [[h.tool_name, h.description, h.parameters] for h in agent.handoffs]
    parts += [[t.tool_name, t.description, t.parameters] for t in agent.agent_tools]
    if agent.output_type is not None:
        parts.append(agent.output_type.schema_)
    return size + len(json.dumps(parts, separators=(",", ":")).encode())


@dataclass(frozen=True, slots=True)
class CostBound:
    """The worst case of one run: ``calls`` model calls, each made by the costliest
    reachable agent (``costliest``, a run-graph position) at the highest prices."""

    usd: float
    input_tokens: int
    output_tokens: int
    calls: int
    base_tokens: int
    """The most input one call sends before any history (instructions and schemas)."""
    max_output: int
    """The most output one call can give (the largest ``max_tokens``)."""
    costliest: str
    read: str
    """Where the prices came from: ``read DATE`` (the shipped table's date), or the
    project's ``[tool.stepswitch.prices]``."""


def _near(model: str | None, own: dict[str, tuple[float, float]]) -> str:
    """A did-you-mean for a model the project's own prices nearly name (a typo there
    leaves the model unpriced, and the bound with it)."""
    if model is None or not own:
        return ""
    import difflib

    close = difflib.get_close_matches(model, list(own), n=1, cutoff=0.8)
    return f" ([tool.stepswitch.prices] has {close[0]!r}: a typo?)" if close else ""


def worst_case(ctx: Ctx, calls: int) -> CostBound | list[str] | None:
    """The bound of a run of at most ``calls`` model calls; the reasons there is none
    (an agent without ``max_tokens``, an unpriced model); None without an entry."""
    graph = run_graph(ctx)
    if graph.entry is None:
        return None
    seen = graph.reachable()  # the agents a run can reach (nested runs' included)
    own = ctx.memo.get("prices") or {}
    read, prices = price_table(own)
    priced: set[str] = set()  # the models the bound prices
    worst_in = worst_out = worst_base = 0.0
    max_out = 0
    costliest: tuple[float, str] | None = None
    unbounded: list[str] = []
    for node in sorted(seen):
        if not node.startswith("a:"):
            continue
        agent = graph.agents[node[2:]]
        model = agent.model or (None if agent.model_ref else DEFAULT_MODEL)
        out = agent.model_settings.get("max_tokens")
        if not isinstance(out, int):
            unbounded.append(f"agent {agent.name!r} sets no max_tokens")
            continue
        if model is None or model not in prices:
            unbounded.append(f"agent {agent.name!r} uses {model or 'a model object'}, "
                             f"which the price table does not list{_near(model, own)}")
            continue
        p_in, p_out = prices[model]
        priced.add(model)
        base = _input_bytes(agent)
        max_out = max(max_out, out)
        worst_in, worst_out = max(worst_in, p_in), max(worst_out, p_out)
        worst_base = max(worst_base, base)
        one = base * p_in + out * p_out
        if costliest is None or one > costliest[0]:
            costliest = (one, node)
    if unbounded:
        return unbounded
    if costliest is None:
        return None
    n = calls
    in_tokens = int(n * worst_base + max_out * n * (n - 1) // 2)
    out_tokens = n * max_out
    usd = (in_tokens * worst_in + out_tokens * worst_out) / 1_000_000
    # where the prices came from: the project's table, the shipped one (and its date)
    mine = sorted(priced & set(own))
    source = f"read {read}" if not mine else (
        "from [tool.stepswitch.prices]" if len(mine) == len(priced)
        else f"from [tool.stepswitch.prices] for {', '.join(mine)}, the rest read {read}")
    return CostBound(usd, in_tokens, out_tokens, n, int(worst_base), max_out, costliest[1],
                     source)


def cost(ctx: Ctx) -> Iterator[Diagnostic]:
    spec = ctx.graph.spec
    if spec.max_cost_usd is None and spec.max_total_tokens is None:
        return
    loc = ctx.workflow_loc()
    graph = run_graph(ctx)
    if graph.entry is None:
        return
    calls = ctx.memo.get("model_call_bound")
    if not isinstance(calls, int):
        yield ctx.diag("SW208", "no cost bound: the worst-case number of model calls is "
                       "unbounded (SW203)", loc,
                       help="set max_turns on the workflow and its agent tools")
        return
    parallel = unproved_by_parallel(ctx.index())
    if parallel is not None:
        yield ctx.diag("SW208", f"no cost bound: {parallel}", loc, help=PARALLEL_HELP)
        return
    bound = worst_case(ctx, calls)
    if isinstance(bound, list):
        for why in bound:
            yield ctx.diag("SW208", f"no cost bound: {why}", loc,
                           help="set ModelSettings(max_tokens=...) on every agent, and "
                           "[tool.stepswitch.prices] for models the table lacks")
        return
    if bound is None:
        return
    usd, total, n = bound.usd, bound.input_tokens + bound.output_tokens, bound.calls
    found = graph.search(graph.entry, lambda node: node == bound.costliest, decided_only=False)
    trace = tuple(found[1]) if found else ()
    path = " -> ".join(s.message for s in trace)
    summary = (f"worst case per run: ${usd:.4f} and {total} tokens ({n} model calls; input "
               f"bounded at one token per UTF-8 byte of instructions and schemas plus earlier "
               f"outputs, tool results and the run's input not included; prices "
               f"{bound.read})")
    yield ctx.diag("SW207", summary, loc, trace=trace)
    over = []
    if spec.max_cost_usd is not None and usd > spec.max_cost_usd:
        over.append(f"${usd:.4f} exceeds max_cost_usd={spec.max_cost_usd}")
    if spec.max_total_tokens is not None and total > spec.max_total_tokens:
        over.append(f"{total} tokens exceed max_total_tokens={spec.max_total_tokens}")
    if over:
        yield ctx.diag("SW206", f"cost ceiling exceeded: {'; '.join(over)}; costliest "
                       f"path: {path}", loc,
                       help="lower max_turns or max_tokens, use a cheaper model, or raise the "
                       "ceiling", trace=trace)


RULES = (cost,)
