"""Tool guardrails, with the Agents SDK's names: ``@tool_input_guardrail`` and
``@tool_output_guardrail``.

A tool guardrail is a function (sync or async) of one argument, the call's
:class:`~stepswitch.tool_guardrails.ToolInputGuardrailData` or
:class:`~stepswitch.tool_guardrails.ToolOutputGuardrailData`, that returns a
:class:`~stepswitch.tool_guardrails.ToolGuardrailFunctionOutput`. Attach it with
``function_tool(tool_input_guardrails=[...], tool_output_guardrails=[...])``.

An input guardrail runs after the call's approval and the validation of its arguments
and before the tool runs: ``reject_content(message)`` gives the model ``message`` instead
(the tool never runs), ``raise_exception()`` ends the run. An output guardrail runs on the
tool's value before the output is recorded: ``reject_content`` replaces what the model
sees, ``raise_exception`` ends the run. Each verdict is kept in the result's
``tool_input_guardrail_results`` / ``tool_output_guardrail_results``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, overload

from stepswitch._hints import resolved_hints
from stepswitch._site import Site, caller_site, function_site
from stepswitch.errors import UserError

__all__ = [
    "ToolGuardrail",
    "ToolInputGuardrail",
    "ToolOutputGuardrail",
    "tool_input_guardrail",
    "tool_output_guardrail",
]


class ToolGuardrail:
    """What the two kinds share: the function, its name, where it was declared, and
    what its parameter and return annotations declare (the analyzer checks them)."""

    kind: Literal["input", "output"] = "input"

    def __init__(
        self, guardrail_function: Callable[..., Any], *, name: str | None = None,
        site: Site | None = None,
    ) -> None:
        self.guardrail_function = guardrail_function
        self.name = name or getattr(guardrail_function, "__name__", None) or "tool_guardrail"
        self.site = site if site is not None else function_site(guardrail_function)
        self.is_async = inspect.iscoroutinefunction(guardrail_function)
        self.arity, self.declared_type, self.returns = _declared(guardrail_function)
        self.__module__ = getattr(guardrail_function, "__module__", __name__)
        self.__qualname__ = getattr(guardrail_function, "__qualname__", self.name)

    def get_name(self) -> str:
        """The guardrail's name (the SDK's spelling)."""
        return self.name

    def __call__(self, data: Any) -> Any:
        return self.guardrail_function(data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class ToolInputGuardrail(ToolGuardrail):
    """Runs before a function tool is called (``@tool_input_guardrail``)."""

    kind: Literal["input", "output"] = "input"


class ToolOutputGuardrail(ToolGuardrail):
    """Runs on a function tool's output (``@tool_output_guardrail``)."""

    kind: Literal["input", "output"] = "output"


def _declared(fn: Callable[..., Any]) -> tuple[int | None, Any, Any]:
    """(how many parameters it takes, its first parameter's annotation, its return
    annotation); None and None where the signature cannot be read or says nothing."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None, None, None
    hints = resolved_hints(fn)
    required = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.default is p.empty]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        arity: int | None = None  # *args takes one as well as any
    else:
        arity = len(required) if required else len(
            [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    declared = hints.get(params[0].name) if params else None
    return arity, declared, hints.get("return")


def _make(cls: type[ToolGuardrail], fn: Any, name: str | None) -> Any:
    what = f"tool_{cls.kind}_guardrail"
    if isinstance(fn, ToolGuardrail):
        raise UserError(f"{what} at {caller_site()}: {fn.name!r} is already a tool guardrail")
    if not callable(fn):
        raise UserError(
            f"{what} at {caller_site()}: expected a function, got {type(fn).__name__} {fn!r}"
        )
    if name is not None and (not isinstance(name, str) or not name):
        raise UserError(f"{what} at {caller_site()}: name: expected a non-empty string, "
                        f"got {name!r}")
    guard = cls(fn, name=name)
    if guard.arity is not None and guard.arity != 1:
        data = "ToolInputGuardrailData" if cls.kind == "input" else "ToolOutputGuardrailData"
        raise UserError(
            f"{what} {guard.name!r} at {guard.site}: a tool guardrail takes one argument "
            f"(data: {data}), it takes {guard.arity}"
        )
    return guard


@overload
def tool_input_guardrail(fn: Callable[..., Any], /) -> ToolInputGuardrail: ...


@overload
def tool_input_guardrail(
    *, name: str | None = None
) -> Callable[[Callable[..., Any]], ToolInputGuardrail]: ...


def tool_input_guardrail(
    fn: Callable[..., Any] | None = None, /, *, name: str | None = None
) -> ToolInputGuardrail | Callable[[Callable[..., Any]], ToolInputGuardrail]:
    """Declare a tool input guardrail: ``fn(data: ToolInputGuardrailData) ->
    ToolGuardrailFunctionOutput``, sync or async."""
    if fn is not None:
        made: ToolInputGuardrail = _make(ToolInputGuardrail, fn, name)
        return made
    return lambda f: _make(ToolInputGuardrail, f, name)


@overload
def tool_output_guardrail(fn: Callable[..., Any], /) -> ToolOutputGuardrail: ...


@overload
def tool_output_guardrail(
    *, name: str | None = None
) -> Callable[[Callable[..., Any]], ToolOutputGuardrail]: ...


def tool_output_guardrail(
    fn: Callable[..., Any] | None = None, /, *, name: str | None = None
) -> ToolOutputGuardrail | Callable[[Callable[..., Any]], ToolOutputGuardrail]:
    """Declare a tool output guardrail: ``fn(data: ToolOutputGuardrailData) ->
    ToolGuardrailFunctionOutput``, sync or async."""
    if fn is not None:
        made: ToolOutputGuardrail = _make(ToolOutputGuardrail, fn, name)
        return made
    return lambda f: _make(ToolOutputGuardrail, f, name)
