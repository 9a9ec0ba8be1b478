"""Pricing a run's reported usage against ``RunConfig(max_cost_usd=)``. Not API."""

from __future__ import annotations

from typing import Any

from stepswitch.context import Usage
from stepswitch.errors import CostLimitExceeded, UserError
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.run import Calls

__all__ = ["charge", "price_of"]


def price_of(config: RunConfig, model: Any, request: Any) -> tuple[str, float, float]:
    """The name a call is priced under and its (input, output) USD per 1M tokens:
    the model the agent asks for (``Agent(model="…")``, as ``check`` prices it), else
    the model object's own name. ``UserError`` before the call when it has no price."""
    from stepswitch._prices import price_table

    name = getattr(request, "model", None) or getattr(model, "model", None) or getattr(
        model, "name", None)
    prices = price_table(config.prices)[1]
    if not isinstance(name, str) or name not in prices:
        raise UserError(
            f"RunConfig(max_cost_usd=...): the model {name!r} is not in the price table "
            "(stepswitch/prices.json): price it with RunConfig(prices=...) (for `stepswitch "
            "run --max-cost`, in [tool.stepswitch.prices] of pyproject.toml) or run "
            "without a cost ceiling; nothing was sent to it")
    p_in, p_out = prices[name]
    return name, p_in, p_out


def charge(calls: Calls, config: RunConfig, priced: tuple[str, float, float],
           usage: Usage) -> None:
    """Add one model call's priced usage to the run's spend; past the config's
    ``max_cost_usd``, stop the run (the loop attaches ``run_data``)."""
    limit = config.max_cost_usd
    assert limit is not None  # the loop charges only a run with a ceiling
    name, p_in, p_out = priced
    calls.usd += (usage.input_tokens * p_in + usage.output_tokens * p_out) / 1_000_000
    if calls.usd > limit:
        raise CostLimitExceeded(calls.usd, limit, name)
