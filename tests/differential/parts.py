"""Importable parts for random workflows: tools, an output type, a tool-use function."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

import stepswitch as ss


@ss.function_tool
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo {text}"


@ss.function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@ss.function_tool(needs_approval=True)
def approve_me(order_id: int) -> str:
    """A call that needs a human's yes."""
    return f"approved {order_id}"


@ss.function_tool
def fail(x: int) -> str:
    """Always raises; the model sees an error output."""
    raise ValueError(f"no {x}")


class Answer(BaseModel):
    """A typed final output."""

    value: int


def stop_on_stop(ctx: ss.RunContext[Any], results: list[Any]) -> ss.ToolsToFinalOutputResult:
    """Final when a tool's output mentions 'stop'."""
    for result in results:
        if "stop" in str(result.output):
            return ss.ToolsToFinalOutputResult(is_final_output=True, final_output=result.value)
    return ss.ToolsToFinalOutputResult(is_final_output=False)


TOOLS = {"echo": echo, "add": add, "approve_me": approve_me, "fail": fail}
GOOD_ARGS: dict[str, dict[str, Any]] = {
    "echo": {"text": "stop now"},
    "add": {"a": 1, "b": 2},
    "approve_me": {"order_id": 7},
    "fail": {"x": 3},
}
