"""The run context: the object handed to tools and guardrails as ``ctx.context``.

``--context module:factory`` (or ``file.py:factory``) calls the factory with no
arguments; without it, a workflow that declares ``context_type`` gets
``context_type()`` when that constructs with no arguments, and a clear error naming
``--context`` when it does not. ``run``, ``chat``, ``replay`` and ``stepswitch test``
cases all build it here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepswitch.dsl.workflow import Workflow
from stepswitch.errors import TargetError, UserError
from stepswitch.targets.load import a_type, compile_one, import_target

if TYPE_CHECKING:
    from stepswitch.runtime.machine import StateMachine

__all__ = ["build_context", "load_machine"]


_ADVICE = "; pass --context module:factory, a function returning the context object"


def build_context(spec: str | None, workflow: Workflow, *, advice: str = _ADVICE) -> Any:
    """The run's context object (None when the workflow declares none and none is asked).

    ``advice`` ends the message of a ``context_type`` that does not construct: what the
    command offers instead (``--context``, where it has that flag)."""
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
            raise UserError(
                f"--context {spec}: calling {label}() raised {type(exc).__name__}: "
                f"{_first_line(exc)}"
            ) from None
    context_type = workflow.context_type
    if context_type is None or not isinstance(context_type, type):
        return None
    try:
        return context_type()
    except Exception as exc:
        raise UserError(
            f"workflow {workflow.name!r} declares context_type={context_type.__name__}, which "
            f"does not construct with no arguments ({type(exc).__name__}: {_first_line(exc)})"
            f"{advice}"
        ) from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0]


def load_machine(target: str, *, flag: str = "--workflow") -> tuple[StateMachine, str, Any]:
    """The compiled machine of the one workflow ``target`` names, its label and the run
    context its ``context_type`` builds (None without one): what a replay runs on."""
    loaded, machine = compile_one(target, flag=flag)
    return machine, loaded.label, build_context(None, loaded.workflow, advice="")
