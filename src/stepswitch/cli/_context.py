"""``stepswitch run --context``: the object handed to tools as ``ctx.context``.

``--context module:factory`` (or ``file.py:factory``) calls the factory with no
arguments; without it, a workflow that declares ``context_type`` gets
``context_type()`` when that constructs with no arguments, and a clear error naming
``--context`` when it does not.
"""

from __future__ import annotations

from typing import Any

from stepswitch.cli.targets import TargetError, a_type, import_target
from stepswitch.dsl.workflow import Workflow
from stepswitch.errors import UserError

__all__ = ["build_context"]


def build_context(spec: str | None, workflow: Workflow) -> Any:
    """The run's context object (None when the workflow declares none and none is asked)."""
    if spec:
        factory, label = import_target(spec, what="--context")
        if not callable(factory):
            raise TargetError(
                f"--context {spec}: {label} is {a_type(factory)}, not a function or "
                "class to call with no arguments"
            )
        try:
            return factory()
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [""])[0]
            raise UserError(
                f"--context {spec}: calling {label}() raised {type(exc).__name__}: {first}"
            ) from None
    context_type = workflow.context_type
    if context_type is None or not isinstance(context_type, type):
        return None
    try:
        return context_type()
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        raise UserError(
            f"workflow {workflow.name!r} declares context_type={context_type.__name__}, which "
            f"does not construct with no arguments ({type(exc).__name__}: {first}); pass "
            "--context module:factory, a function returning the context object"
        ) from None
