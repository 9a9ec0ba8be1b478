"""The dated price table the package ships (``stepswitch/prices.json``): what the cost
bound (SW206/SW207) and ``RunConfig(max_cost_usd=)`` price model calls with. A leaf
module, so a run under a cost ceiling loads nothing of the analyzer. Not API."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources

__all__ = ["price_table"]


@cache
def _shipped() -> tuple[str, dict[str, tuple[float, float]]]:
    raw = json.loads((resources.files("stepswitch") / "prices.json").read_text("utf-8"))
    models = {name: (float(p["input"]), float(p["output"])) for name, p in raw["models"].items()}
    return str(raw["read"]), models


def price_table(extra: Mapping[str, tuple[float, float]] | None = None,
                ) -> tuple[str, dict[str, tuple[float, float]]]:
    """The date the shipped prices were read, and model -> (input, output) USD per 1M
    tokens, with ``extra`` (``[tool.stepswitch.prices]``) over the shipped table."""
    read, models = _shipped()
    if not extra:
        return read, models
    merged = dict(models)
    merged.update(extra)
    return read, merged
