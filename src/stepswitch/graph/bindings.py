"""What the DSL's build hands to every later stage: the frozen spec and the live objects
it names. Plain data: the analyzer, the renderers and lowering read it, and none of
them needs the DSL (``stepswitch.dsl.build`` makes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.errors import UserError
from stepswitch.graph.spec import Ref, WorkflowSpec

__all__ = ["Bindings", "BuiltWorkflow"]


@dataclass(frozen=True, slots=True)
class Bindings:
    """The live objects a spec refers to, keyed by ``Ref.path``."""

    objects: Mapping[str, object]

    def resolve(self, ref: Ref) -> Any:
        """The object behind ``ref``; ``UserError`` when it is not bound."""
        try:
            return self.objects[ref.path]
        except KeyError:
            raise UserError(f"no object bound for {ref.path!r}") from None

    def get(self, ref: Ref | None) -> Any:
        """The object behind ``ref``, or None."""
        return None if ref is None else self.objects.get(ref.path)


@dataclass(frozen=True, slots=True)
class BuiltWorkflow:
    """A workflow's spec and the live objects it names."""

    spec: WorkflowSpec
    bindings: Bindings
    nearby_steps: tuple[str, ...] = ()
    """Steps visible where the workflow was declared, in its flow or not (for hints)."""
