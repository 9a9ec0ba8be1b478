"""The SDK's own callables, made to run on stepswitch's values (``from_sdk``).

A ``tool_use_behavior`` function of the Agents SDK reads the SDK's tool results; an
SDK handoff input filter works on the SDK's items. :func:`tool_use_function` adapts the
first to the results the loop passes; :func:`sdk_filter` stands in for the second,
refusing to run with the reason (the analyzer tells it by its ``.<sdk>`` qualname).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from stepswitch.errors import UserError

__all__ = ["sdk_filter", "tool_use_function"]


class _SDKToolResult(BaseModel):
    """What an SDK ``tool_use_behavior`` function reads of each result."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    tool: Any
    output: Any
    run_item: Any = None


class _ToolRef(BaseModel):
    name: str


def tool_use_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An SDK ``(ctx, list[FunctionToolResult]) -> ToolsToFinalOutputResult`` function
    on our results (``.tool.name``, ``.output`` the value), its verdict turned into ours."""
    from stepswitch.runtime.steps import ToolsToFinalOutputResult

    def convert(verdict: Any) -> ToolsToFinalOutputResult:
        return ToolsToFinalOutputResult(
            is_final_output=bool(getattr(verdict, "is_final_output", False)),
            final_output=getattr(verdict, "final_output", None),
        )

    def adapter(ctx: Any, results: list[Any]) -> Any:
        sdk_results = [_SDKToolResult(tool=_ToolRef(name=r.name), output=r.value)
                       for r in results]
        verdict = fn(ctx, sdk_results)
        if hasattr(verdict, "__await__"):
            async def later() -> ToolsToFinalOutputResult:
                return convert(await verdict)

            return later()
        return convert(verdict)

    adapter.__name__ = getattr(fn, "__name__", "tool_use_behavior")
    adapter.__qualname__ = getattr(fn, "__qualname__", adapter.__name__) + ".<sdk>"
    adapter.__module__ = getattr(fn, "__module__", __name__)
    return adapter


def sdk_filter(fn: Callable[..., Any]) -> Callable[..., Any]:
    """SDK input filters work on the SDK's items; running one on ours is a clear error."""

    def refuse(data: Any) -> Any:
        raise UserError(
            f"the handoff input filter {getattr(fn, '__qualname__', fn)!r} is "
            "written for the Agents SDK's items; write it for stepswitch's HandoffInputData "
            "(docs/migrating.md)"
        )

    refuse.__qualname__ = getattr(fn, "__qualname__", "input_filter") + ".<sdk>"
    refuse.__module__ = getattr(fn, "__module__", __name__)
    return refuse
