"""``gc_paused``: the cyclic collector off for one pass. Not API.

A leaf: every stage that builds many small objects at once (the DSL's build, the
graph's index and facts, the analyzer, lowering) uses it, and it imports nothing of
stepswitch, so none of them has to import another stage for it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off for a pass that allocates many small acyclic objects
    (building, indexing, the facts, lowering, analysis): letting it scan the growing
    heap over and over made large workflows superlinear. The one helper for it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
