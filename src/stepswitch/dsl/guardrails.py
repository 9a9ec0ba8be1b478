"""Input and output guardrails, in the Agents SDK's shapes.

``@input_guardrail`` functions take ``(ctx, agent, input)`` and ``@output_guardrail``
functions ``(ctx, agent, output)``; both return a :class:`GuardrailFunctionOutput`.
The third parameter's annotation is the type the guardrail expects; the analyzer
checks it against the agent's output type.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, overload

from stepswitch._dataclass import dataclass
from stepswitch._hints import resolved_hints
from stepswitch._site import Site, caller_site, function_site
from stepswitch.dsl.tools import context_param_type
from stepswitch.errors import UserError

__all__ = [
    "GuardrailFunctionOutput",
    "InputGuardrail",
    "OutputGuardrail",
    "input_guardrail",
    "output_guardrail",
]


@dataclass(frozen=True, slots=True)
class GuardrailFunctionOutput:
    """What a guardrail function returns."""

    output_info: Any
    tripwire_triggered: bool


class _Guardrail:
    kind: str = ""

    def __init__(
        self,
        guardrail_function: Callable[..., Any],
        *,
        name: str | None,
        run_in_parallel: bool,
        site: Site,
    ) -> None:
        self.guardrail_function = guardrail_function
        self.name = name or getattr(guardrail_function, "__name__", "guardrail")
        self.run_in_parallel = run_in_parallel
        self.site = site
        self.is_async = inspect.iscoroutinefunction(guardrail_function)
        self.declared_type, self.context_type = _declared_types(guardrail_function)
        self.__module__ = getattr(guardrail_function, "__module__", __name__)
        self.__qualname__ = getattr(guardrail_function, "__qualname__", self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.guardrail_function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class InputGuardrail(_Guardrail):
    """Runs on the entry agent's input before the first model call (blocking unless
    ``run_in_parallel=True``)."""

    kind = "input"


class OutputGuardrail(_Guardrail):
    """Runs on the final output of the agent it is attached to."""

    kind = "output"


def _declared_types(fn: Callable[..., Any]) -> tuple[Any, Any]:
    """(the third parameter's annotation, the context type) of a guardrail function."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None, None
    hints = resolved_hints(fn)
    declared = hints.get(params[2]) if len(params) >= 3 else None
    context = context_param_type(hints.get(params[0])) if params else None
    return declared, context


def _make(
    cls: type[_Guardrail], fn: Any, name: str | None, run_in_parallel: bool
) -> Any:
    if not callable(fn):
        raise UserError(
            f"{cls.kind}_guardrail at {caller_site()}: expected a function, "
            f"got {type(fn).__name__} {fn!r}"
        )
    site = function_site(fn)
    try:
        arity = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        arity = 3
    if arity != 3:
        raise UserError(
            f"{cls.kind}_guardrail {getattr(fn, '__name__', fn)!r} at {site}: a guardrail takes "
            f"(ctx, agent, {cls.kind}), got {arity} parameter(s)"
        )
    return cls(fn, name=name, run_in_parallel=run_in_parallel, site=site)


@overload
def input_guardrail(fn: Callable[..., Any], /) -> InputGuardrail: ...


@overload
def input_guardrail(
    *, name: str | None = None, run_in_parallel: bool = False
) -> Callable[[Callable[..., Any]], InputGuardrail]: ...


def input_guardrail(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    run_in_parallel: bool = False,
) -> InputGuardrail | Callable[[Callable[..., Any]], InputGuardrail]:
    """Declare an input guardrail. Unlike the SDK, it blocks the first model call by
    default: ``run_in_parallel=True`` lets the model (and tools) start before it ends."""
    if fn is not None:
        result: InputGuardrail = _make(InputGuardrail, fn, name, run_in_parallel)
        return result
    return lambda f: _make(InputGuardrail, f, name, run_in_parallel)


@overload
def output_guardrail(fn: Callable[..., Any], /) -> OutputGuardrail: ...


@overload
def output_guardrail(
    *, name: str | None = None
) -> Callable[[Callable[..., Any]], OutputGuardrail]: ...


def output_guardrail(
    fn: Callable[..., Any] | None = None, /, *, name: str | None = None
) -> OutputGuardrail | Callable[[Callable[..., Any]], OutputGuardrail]:
    """Declare an output guardrail, run on the final output of its agent."""
    if fn is not None:
        result: OutputGuardrail = _make(OutputGuardrail, fn, name, False)
        return result
    return lambda f: _make(OutputGuardrail, f, name, False)
