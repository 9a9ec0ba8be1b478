"""What a turn's calls come to: each call's output item once its job's outcome is in.

The loop (:mod:`~stepswitch.runtime.loop`) plans a turn's calls and runs them; these
are the outputs it records for them when they did not simply return a value: a
function tool that raised, an agent tool's nested run (its result, its failure, or its
pause lifted to the caller), a call of a tool the agent does not have.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

from stepswitch.errors import MCPServerError, ModelBehaviorError, ToolTimeoutError, UserError
from stepswitch.ir import RunAgent, RunFunction
from stepswitch.runtime.approvals import lift
from stepswitch.runtime.core import MachineCore, ToolRow
from stepswitch.runtime.effects import Err, Ok, Outcome
from stepswitch.runtime.items import MessageOutputItem, ToolApprovalItem, ToolCallOutputItem
from stepswitch.runtime.model import OutputFunctionCall
from stepswitch.runtime.result import RunResult
from stepswitch.runtime.run import Run, call_hook
from stepswitch.runtime.tools import (
    ArgumentError,
    error_output,
    error_text,
    output_text,
    parse_arguments,
    result_text,
)

__all__ = [
    "agent_outcome",
    "call_id_reused",
    "call_id_twice",
    "function_error",
    "parse_again",
    "unknown_outputs",
]


def unknown_outputs(
    run: Run, agent: str, calls: Iterable[tuple[OutputFunctionCall, ToolRow | None]]
) -> None:
    """An error output for each call of a tool the agent does not have (no row)."""
    for call, row in calls:
        if row is None:
            run.append(
                ToolCallOutputItem(
                    agent, call.call_id, f"Tool '{call.name}' not found.", call.name, True
                )
            )


def function_error(
    core: MachineCore, run: Run, agent: str, call: OutputFunctionCall, row: ToolRow,
    outcome: Outcome,
) -> Generator[Any, Any, ToolCallOutputItem]:
    """The output of a function call that raised (or ``UserError`` when the tool says
    raise)."""
    assert type(outcome) is Err
    err = outcome.error
    if isinstance(err, MCPServerError):
        raise err  # a server that did not start, died or drifted: located, run kept
    if row.failure == "raise":
        if isinstance(err, ToolTimeoutError):
            raise err  # its own clear error; the run so far goes with it
        raise UserError(f"Error running tool {call.name}: {error_text(err)}") from err
    if row.failure == "custom":
        action = row.action
        assert type(action) is RunFunction
        handler = core.obj(action.ref).failure_error_function
        text = yield from call_hook(handler(run.ctx, err))
        message = str(text)
    else:
        message = error_output(err)
    return ToolCallOutputItem(agent, call.call_id, message, call.name, True)


def agent_outcome(
    core: MachineCore, run: Run, agent: str, call: OutputFunctionCall, row: ToolRow,
    outcome: Outcome,
) -> Generator[Any, Any, ToolCallOutputItem | None]:
    """The caller's tool output for a nested run; None when the nested run paused."""
    action = row.action
    assert type(action) is RunAgent
    if type(outcome) is Err:
        if isinstance(outcome.error, AssertionError):
            raise outcome.error  # a broken test (e.g. a script run dry) is never model output
        return ToolCallOutputItem(
            agent, call.call_id, error_output(outcome.error), call.name, True
        )
    assert type(outcome) is Ok
    result: RunResult = outcome.value
    if result.interruptions:
        run.nested[call.call_id] = result.to_state()
        known = {(i.run_path, i.call_id) for i in run.items if type(i) is ToolApprovalItem}
        for item in result.interruptions:
            lifted = lift(item, call.call_id)
            if (lifted.run_path, lifted.call_id) not in known:
                run.append(lifted)
        return None
    if action.output_extractor is not None:
        value = yield from call_hook(core.obj(action.output_extractor)(result))
        text, failed = result_text(call.name, value)
        if failed:
            return ToolCallOutputItem(agent, call.call_id, text, call.name, True)
    else:
        value, text = _nested_output(result)
    return ToolCallOutputItem(agent, call.call_id, text, call.name, False, value)


def _nested_output(result: RunResult) -> tuple[Any, str]:
    final = result.final_output
    if final is not None and final != "":
        return final, output_text(final)
    if result.output_guardrail_results:
        # the guardrails passed the (empty) final output, not the run's earlier items
        return final, "" if final is None else output_text(final)
    for item in reversed(result.new_items):
        if type(item) is MessageOutputItem and item.content:
            return item.content, item.content
        if type(item) is ToolCallOutputItem and item.output:
            return item.output, item.output
    return "", ""


def call_id_twice(out: OutputFunctionCall, agent: str) -> ModelBehaviorError:
    """A response that gave two calls one id."""
    return ModelBehaviorError(
        f"the model used call id {out.call_id!r} twice in one response "
        f"(tool {out.name}, agent {agent})"
    )


def call_id_reused(out: OutputFunctionCall, agent: str) -> ModelBehaviorError:
    # an earlier call's id: its decision or output must not carry over
    return ModelBehaviorError(
        f"the model reused call id {out.call_id!r} of an earlier call "
        f"(tool {out.name}, agent {agent}); every call needs a new id"
    )


def parse_again(
    core: MachineCore, row: ToolRow, call: OutputFunctionCall, agent: str
) -> Any:
    """A function call's parameters once the one-pass validation refused them: the
    lax parse (``parse_arguments``), or the error output that names the problem for
    the model (``ModelBehaviorError`` when the tool says raise)."""
    action = row.action
    assert type(action) is RunFunction
    try:
        return parse_arguments(core.function(action.ref).tool, call.arguments)
    except ArgumentError as exc:
        if action.failure == "raise":
            raise ModelBehaviorError(str(exc)) from None
        return ToolCallOutputItem(agent, call.call_id, str(exc), call.name, True)
