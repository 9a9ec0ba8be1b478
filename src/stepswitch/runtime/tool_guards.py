"""Around one tool call: its tool guardrails and the ``on_tool_start`` / ``on_tool_end``
hooks, and each turn's ``is_enabled`` gates.

The loop calls :func:`before_call` for a call that is about to run (approved, its
arguments valid) and :func:`after_call` with the output it made, only for a tool with
guardrails or a run with hooks; :func:`gates` once per turn, only for an agent with
gated tools or handoffs. A call's guardrails and hooks run in call order, before (and
after) the turn's jobs run concurrently, so a tripwire on the second call stops the
turn before the first call has run.

The module loads with the first run that needs it (tests/test_layering.py).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from stepswitch.errors import (
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
    UserError,
)
from stepswitch.ir import RunFunction, StateIR, ToolGuardrailIR
from stepswitch.runtime import hooks as _hooks
from stepswitch.runtime.core import MachineCore, StateTable, ToolRow
from stepswitch.runtime.hooks import HookSet
from stepswitch.runtime.items import ToolCallOutputItem
from stepswitch.runtime.model import OutputFunctionCall
from stepswitch.runtime.run import Run, call_hook
from stepswitch.tool_guardrails import (
    ToolContext,
    ToolInputGuardrailData,
    ToolInputGuardrailResult,
    ToolOutputGuardrailData,
    ToolOutputGuardrailResult,
    behavior_of,
)

__all__ = ["after_call", "before_call", "gates"]


def gates(core: MachineCore, run: Run, table: StateTable) -> Generator[Any, Any, frozenset[str]]:
    """The names of ``table``'s tools, agent tools and handoffs disabled this turn: the
    ones declared ``is_enabled=False`` and those whose function says no now."""
    state = table.state
    off = set(table.off)
    for name, fn in table.gates:
        try:
            verdict = yield from call_hook(fn(run.ctx, state))
        except Exception as exc:
            exc.add_note(f"raised by is_enabled of {name!r} of agent {state.agent!r}{_at(fn)}")
            raise
        if not verdict:
            off.add(name)
    return frozenset(off)


def _context(run: Run, call: OutputFunctionCall) -> ToolContext[Any]:
    ctx = run.ctx
    return ToolContext(ctx.context, ctx.usage, f"{run.run_id}:{call.call_id}", call.name,
                       call.call_id, call.arguments)


def _tool(core: MachineCore, state: StateIR, row: ToolRow) -> Any:
    """What the hooks get as ``tool``: the function tool, or an agent tool's table row."""
    action = row.action
    if type(action) is RunFunction:
        return core.obj(action.ref)
    return core.tables[state.agent][row.name]


def before_call(
    core: MachineCore, run: Run, state: StateIR, row: ToolRow, call: OutputFunctionCall,
    hooks: HookSet | None, own: HookSet | None,
) -> Generator[Any, Any, ToolCallOutputItem | None]:
    """Run the call's input guardrails, then ``on_tool_start``. A rejection is the
    call's output (the tool does not run); ``raise_exception`` ends the run."""
    ctx = _context(run, call)
    agent = state.agent
    for g in row.in_guards:
        verdict = yield from call_hook(core.obj(g.ref)(ToolInputGuardrailData(ctx, state)))
        kind, message = _checked(core, g, "input", call, agent, verdict)
        result = ToolInputGuardrailResult(g.name, agent, call.name, call.call_id, verdict)
        run.tool_input_guardrail_results.append(result)
        if kind == "raise_exception":
            raise ToolInputGuardrailTripwireTriggered(
                f"tool input guardrail {g.name!r} of tool {call.name!r} (agent {agent!r}) "
                "stopped the run; the call did not run",
                guardrail=g.name, output=verdict, guardrail_result=result,
            )
        if kind == "reject_content":
            return ToolCallOutputItem(agent, call.call_id, message, call.name, False, message)
    if hooks is not None or own is not None:
        yield from _hooks.tool_start(hooks, own, ctx, state, _tool(core, state, row))
    return None


def after_call(
    core: MachineCore, run: Run, state: StateIR, row: ToolRow, call: OutputFunctionCall,
    done: ToolCallOutputItem, hooks: HookSet | None, own: HookSet | None,
) -> Generator[Any, Any, ToolCallOutputItem]:
    """Run the output guardrails on what the call gave (its value, or its error text, as
    the SDK does), then ``on_tool_end``; the output to record."""
    ctx = _context(run, call)
    agent = state.agent
    for g in row.out_guards:
        value = done.output if done.is_error else done.value
        data = ToolOutputGuardrailData(ctx, state, value)
        verdict = yield from call_hook(core.obj(g.ref)(data))
        kind, message = _checked(core, g, "output", call, agent, verdict)
        result = ToolOutputGuardrailResult(g.name, agent, call.name, call.call_id, verdict)
        run.tool_output_guardrail_results.append(result)
        if kind == "raise_exception":
            raise ToolOutputGuardrailTripwireTriggered(
                f"tool output guardrail {g.name!r} of tool {call.name!r} (agent {agent!r}) "
                "stopped the run; the tool ran, its output was not recorded",
                guardrail=g.name, output=verdict, guardrail_result=result,
            )
        if kind == "reject_content":
            done = ToolCallOutputItem(agent, call.call_id, message, call.name, False, message)
            break
    if hooks is not None or own is not None:
        result_value = done.output if done.is_error else done.value
        yield from _hooks.tool_end(hooks, own, ctx, state, _tool(core, state, row),
                                   result_value)
    return done


def _checked(core: MachineCore, g: ToolGuardrailIR, kind: str, call: OutputFunctionCall,
             agent: str, verdict: Any) -> tuple[str, str]:
    found = behavior_of(verdict)
    if found is not None:
        return found
    shown = getattr(verdict, "shown_type", None) or (  # shown_type: a verdict from afar
        "None" if verdict is None else type(verdict).__name__)
    raise UserError(
        f"tool {kind} guardrail {g.name!r}{_at(core.obj(g.ref))} of tool {call.name!r} "
        f"(agent {agent!r}) returned {shown}; a tool guardrail must return "
        "ToolGuardrailFunctionOutput.allow(), .reject_content(message) or "
        ".raise_exception()"
    )


def _at(obj: Any) -> str:
    """`` at file:line`` of a declared object or function, when it has one."""
    site = getattr(obj, "site", None)
    if site is not None and isinstance(getattr(site, "line", None), int):
        return f" at {site}"
    code = getattr(obj, "__code__", None) or getattr(getattr(obj, "__func__", None),
                                                     "__code__", None)
    if code is None:
        return ""
    from stepswitch._site import def_line, display_path

    return f" at {display_path(code.co_filename)}:{def_line(code)}"
