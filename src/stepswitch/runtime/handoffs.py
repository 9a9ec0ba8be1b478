"""Handoffs on the trusted side: budgets, the first valid handoff wins, ``on_handoff``,
input filters.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.context import RunContext
from stepswitch.errors import (
    UserError,
)
from stepswitch.ir import HandoffTo, StateIR
from stepswitch.runtime import hooks as _hooks
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import MachineCore, ToolRow
from stepswitch.runtime.items import (
    HandoffOutputItem,
    RunItem,
    ToolCallOutputItem,
)
from stepswitch.runtime.model import (
    InputItem,
    OutputFunctionCall,
)
from stepswitch.runtime.run import Run, call_hook, visible
from stepswitch.runtime.tools import (
    MULTIPLE_HANDOFFS,
    ArgumentError,
    parse_typed,
)

__all__ = ["HandoffInputData", "remove_all_tools", "spent_handoffs", "take_handoffs"]


@dataclass(frozen=True, slots=True)
class HandoffInputData:
    """What a handoff input filter gets and returns (the SDK's shape)."""

    input_history: tuple[InputItem, ...]
    pre_handoff_items: tuple[RunItem, ...]
    new_items: tuple[RunItem, ...]
    run_context: RunContext[Any] | None = None


_TOOL_ITEMS = frozenset({"tool_call_item", "tool_call_output_item", "handoff_call_item",
                         "handoff_output_item", "tool_approval_item"})
_TOOL_RESPONSES_ITEMS = frozenset({
    "reasoning", "function_call", "function_call_output", "computer_call",
    "computer_call_output", "file_search_call", "web_search_call", "mcp_call",
    "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "code_interpreter_call", "image_generation_call", "local_shell_call",
    "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call",
    "apply_patch_call_output", "custom_tool_call", "custom_tool_call_output",
    "tool_search_call", "tool_search_output",
})


def _no_tools(items: tuple[Any, ...]) -> tuple[Any, ...]:
    kept = []
    for item in items:
        kind = item.type
        if kind in _TOOL_ITEMS:
            continue
        if kind == "responses_item" and item.item.get("type") in _TOOL_RESPONSES_ITEMS:
            continue
        kept.append(item)
    return tuple(kept)


def remove_all_tools(data: HandoffInputData) -> HandoffInputData:
    """An input filter that leaves out every tool item (function calls and outputs,
    handoff calls and outputs, approval requests, hosted tools' and reasoning items):
    the next agent sees the conversation's messages only. The Agents SDK's
    ``handoff_filters.remove_all_tools`` for stepswitch's items; ``from_sdk`` reads that
    filter as this one."""
    return HandoffInputData(
        input_history=_no_tools(data.input_history),
        pre_handoff_items=_no_tools(data.pre_handoff_items),
        new_items=_no_tools(data.new_items),
        run_context=data.run_context,
    )


_NO_HIDDEN: frozenset[str] = frozenset()


def spent_handoffs(core: MachineCore, run: Run, state: StateIR) -> frozenset[str]:
    """The handoffs of ``state`` whose ``max_uses`` this run has used up."""
    if not run.uses:
        return _NO_HIDDEN
    spent = [
        name
        for (agent, name), n in run.uses.items()
        if agent == state.agent
        and isinstance(a := core.tables[agent][name].action, HandoffTo)
        and a.max_uses is not None
        and n >= a.max_uses
    ]
    return frozenset(spent) if spent else _NO_HIDDEN


def take_handoffs(
    core: MachineCore,
    run: Run,
    config: RunConfig,
    state: StateIR,
    calls: list[tuple[OutputFunctionCall, ToolRow | None]],
    start: int,
    own: Any = None,
) -> Generator[Any, Any, str | None]:
    """Take the first handoff of the turn that may be taken (``own``: the agent's hooks,
    told of it with the run's); None when none was."""
    agent = state.agent
    winner: tuple[OutputFunctionCall, HandoffTo, Any] | None = None
    for call, row in calls:
        if row is None or type(row.action) is not HandoffTo:
            continue
        action = row.action
        key = (agent, call.name)
        used = run.uses.get(key, 0)
        if action.max_uses is not None and used >= action.max_uses:
            message = (
                f"Handoff {call.name} is no longer available: it was already taken "
                f"{used} time(s), its max_uses. Continue without it."
            )
        elif winner is not None:
            message = MULTIPLE_HANDOFFS
        else:
            try:
                value = None
                if action.input_type is not None:
                    value = parse_typed(
                        f"handoff {call.name}", core.obj(action.input_type), call.arguments
                    )
                winner = (call, action, value)
                continue
            except ArgumentError as exc:
                message = str(exc)
        run.append(ToolCallOutputItem(agent, call.call_id, message, call.name, True))
    if winner is None:
        return None
    call, action, value = winner
    if action.on_handoff is not None:
        hook = core.obj(action.on_handoff)
        hooked = hook(run.ctx, value) if action.input_type is not None else hook(run.ctx)
        yield from call_hook(hooked)
    if config.run_hooks is not None or own is not None:
        yield from _hooks.handoff(run, config.run_hooks, own, state, core.state(action.target))
    output = HandoffOutputItem(
        agent, call.call_id, _transfer_text(action.target), agent, action.target
    )
    flt = core.obj(action.input_filter) if action.input_filter is not None else None
    flt = flt or config.handoff_input_filter
    history: list[InputItem] | None = None
    if flt is not None:
        # the filter sees the handoff's output among the turn's new items (as in the SDK)
        data = HandoffInputData(
            input_history=run.input,
            pre_handoff_items=tuple(run.items[:start]),
            new_items=(*run.items[start:], output),
            run_context=run.ctx,
        )
        filtered = yield from call_hook(flt(data))
        if not isinstance(filtered, HandoffInputData):
            raise UserError(
                f"handoff {call.name}: the input filter returned {type(filtered).__name__}, "
                "not HandoffInputData"
            )
        history = list(filtered.input_history)
        history.extend(i for i in filtered.pre_handoff_items if visible(i))
        history.extend(i for i in filtered.new_items if visible(i))
    # Only now does the handoff take effect: a filter that raised leaves the run at the
    # source agent with the handoff call unanswered (a run stopped mid-turn), never an
    # output that says "moved" beside a state that did not move.
    key = (agent, call.name)
    run.uses[key] = run.uses.get(key, 0) + 1
    run.append(output)
    if history is not None:
        run.history = history
        run.history_filtered = True
        run.history_from = len(run.items)
    return action.target


_TRANSFERS: dict[str, str] = {}


def _transfer_text(target: str) -> str:
    """The handoff output the model sees: ``{"assistant": "<target>"}`` (as the SDK)."""
    text = _TRANSFERS.get(target)
    if text is None:
        text = _TRANSFERS.setdefault(target, json.dumps({"assistant": target}))
    return text
