"""The rules, one module per group of codes. Not API: call ``analyze``.

Each rule is a function ``(ctx) -> Iterator[Diagnostic]`` and runs in time linear in
agents plus edges plus tools.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from stepswitch.analysis._context import Ctx
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.analysis.rules import (
    agents_api,
    cost,
    flow,
    hitl,
    imports,
    mcp,
    names,
    policies,
    reach,
    structure,
    termination,
    types,
)

__all__ = ["RULES"]

Rule = Callable[[Ctx], Iterator[Diagnostic]]

RULES: tuple[Rule, ...] = (
    *structure.RULES,
    *termination.RULES,
    *names.RULES,
    *types.RULES,
    *hitl.RULES,
    *reach.RULES,
    *flow.RULES,
    *imports.RULES,
    *policies.RULES,
    *cost.RULES,
    *mcp.RULES,
    *agents_api.RULES,
)
