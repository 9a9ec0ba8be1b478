"""The model price table the package ships (``stepswitch/prices.json``). Not API.

A leaf: the analyzer bounds a workflow's worst-case spend with it (SW206-SW208) and
the runtime prices each call against ``RunConfig(max_cost_usd=)``; neither imports
the other for it.
"""

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
    merged = dict(models)
    merged.update(extra or {})
    return read, merged
