"""The flow loop: agents and steps chained by the flow IR's exits.

One generator, like :func:`~.loop.run_loop`, and driven by the same three drivers: it
yields the same effects (an agent node runs the agent loop inline, so its model calls,
tools, approvals and stream events pass straight through; a fan-out is one
``RunJobs`` of nested loops). A node's step ends in Final (``END``), Handoff (a move
to the next node, by :func:`~.flow_core.next_node`, the flow's step switch),
Interruption (an agent node, or a fan-out branch, waits for approvals) or RunAgain (an
agent node's own turns).

The flow IR made ready to run is :class:`~.flow_core.FlowCore`; one run's state, its
snapshots and its start or resume are in :mod:`.flow_state`. Their names are
re-exported here, where the drivers and generated runners import them.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Generator, Sequence
from typing import Any

from stepswitch.context import RunContext
from stepswitch.errors import FlowBudgetExceeded, ModelBehaviorError, StepswitchError, UserError
from stepswitch.flow_ir import FlowExit, FlowNode, edge_key
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.effects import Await, Emit, Err, NestedJob, RunJobs
from stepswitch.runtime.events import FlowNodeStreamEvent
from stepswitch.runtime.flow_core import (
    Callee,
    FlowCore,
    FlowStep,
    misfit,
    next_node,
    no_route,
    predicate_of,
    route_key,
    to_text,
)
from stepswitch.runtime.flow_state import Fan, FlowRun, flow_run, lifted, run_key
from stepswitch.runtime.items import RunItem
from stepswitch.runtime.loop import run_loop
from stepswitch.runtime.result import RunResult
from stepswitch.runtime.run import Run
from stepswitch.runtime.state import RunState

__all__ = [
    "FlowCore",
    "FlowRun",
    "FlowStep",
    "flow_loop",
    "flow_run",
    "misfit",
    "next_node",
    "no_route",
    "predicate_of",
    "route_key",
    "to_text",
]

Loop = Generator[Any, Any, RunResult]


def flow_loop(fc: FlowCore, fr: FlowRun, config: RunConfig) -> Loop:
    """Drive a flow to its result, yielding effects; an error carries the run so far."""
    try:
        return (yield from _flow(fc, fr, config))
    except GeneratorExit:
        raise
    except BaseException as exc:
        # Ctrl-C and cancellation too. A node's run attached its own run data on the way
        # out (for a model's or a hook's error as well); the flow's holds every node's
        with contextlib.suppress(AttributeError):  # a type that refuses attributes
            exc.run_data = fr.error_details(fc)  # type: ignore[attr-defined]
        raise


def _flow(fc: FlowCore, fr: FlowRun, config: RunConfig) -> Loop:
    # Every table read per node was made once, with the FlowCore (bench/README.md, flows)
    nodes = fc.nodes
    callees = fc.callees
    awaits = fc.awaits
    exits = fc.exits
    sync_fans = fc.sync_fans
    while True:
        node = nodes[fr.node]
        if fr.fan is not None:  # resumed inside a fan-out
            source = nodes[fr.fan.source]
            joined = yield from _fan(fc, fr, config, source)
            if joined is None:
                return fr.result(fc, None, paused=True)
            out: Any = joined
            ex: FlowExit | None = source.exit
            assert ex is not None
            here = source.name
            target = ex.target
        else:
            here = node.name
            if node.kind == "step":
                if fr.emit:
                    yield Emit(FlowNodeStreamEvent(here, "step"))
                value = fr.value  # an entry step's input was parsed when the run started
                fr.fresh = False
                if here in awaits:
                    out = yield from _step(fc, node, value, fr.ctx)
                else:  # a sync step: the call written out, no frame of its own
                    fn, takes_context, accepts, check = callees[here]
                    out = fn(fr.ctx, value) if takes_context else fn(value)
                    if not isinstance(out, accepts):
                        check(out)
            else:
                if fr.emit:
                    yield Emit(FlowNodeStreamEvent(here, "agent"))
                result = yield from _agent_node(fc, fr, config, node)
                if result.interruptions:
                    fr.child = result.to_state()
                    return fr.result(fc, None, paused=True)
                fr.items.extend(lifted(result.new_items, run_key(here)))
                fr.live = []
                out = result.final_output
            ex = node.exit
            assert ex is not None
            if ex.kind != "fan_out":
                target = exits[here](node, out)
            else:
                # the fields read in place when they plainly fit, else by _elements
                value = getattr(out, ex.field or "", None)
                if type(value) is list and not isinstance(out, dict) and (
                        ex.max_items is None or len(value) <= ex.max_items):
                    elements = value.copy()
                else:
                    elements = _elements(node, ex, out)
                callee = sync_fans.get(here)
                if callee is None:
                    fr.fan = Fan(here, elements)
                    fr.node = ex.each or ""
                    joined = yield from _fan(fc, fr, config, node)
                    if joined is None:
                        return fr.result(fc, None, paused=True)
                else:  # sync step branches, called here; their Fan is made if one fails
                    done: dict[int, Any] = {}
                    try:
                        if fr.emit:
                            yield Emit(FlowNodeStreamEvent(ex.each or "", "fan_out",
                                                           len(elements)))
                        joined = _calls(callee, elements, fr.ctx, done)
                    except BaseException:
                        fr.fan = Fan(here, elements, done)
                        fr.node = ex.each or ""
                        raise
                out = joined
                target = ex.target
        if ex.max_uses is not None:
            key = fc.edge_keys[here].get(target) or edge_key(here, target)
            used = fr.uses.get(key, 0)
            if used >= ex.max_uses:
                fr.node, fr.value, fr.spent = here, None, key
                raise FlowBudgetExceeded(here, target, used)
            fr.uses[key] = used + 1
        if target is None:
            return fr.result(fc, out, paused=False)
        fr.node = target
        fr.value = out


def _elements(node: FlowNode, ex: FlowExit, out: Any) -> list[Any]:
    name = ex.field or ""
    value = out.get(name) if isinstance(out, dict) else getattr(out, name, None)
    if not isinstance(value, (list, tuple)):  # a tuple: ``list | tuple`` is built per call
        raise UserError(
            f"flow node {node.name!r}: fan-out over {name!r} needs a list, got "
            f"{type(value).__name__}"
        )
    if ex.max_items is not None and len(value) > ex.max_items:
        raise ModelBehaviorError(
            f"flow node {node.name!r} gave {len(value)} elements in {name!r}, more than the "
            f"fan-out's max_items={ex.max_items}"
        )
    return list(value)


def _agent_node(fc: FlowCore, fr: FlowRun, config: RunConfig, node: FlowNode
                ) -> Generator[Any, Any, RunResult]:
    """Run (or resume) an agent node inline: its effects and events pass through."""
    child = fr.child
    fr.child = None
    if child is not None:
        run = _resumed_child(fc, fr, child)
    else:
        given = fr.raw_input if fr.fresh else to_text(fr.value)
        fr.fresh = False
        run = Run.start(fr.workflow, node.name, given, max_turns=fr.max_turns, ctx=fr.ctx,
                        calls=fr.calls)
        run.always = dict(fr.always)
    run.model = fr.model
    run.emit = fr.emit
    fr.live = run.items
    fr.running = run
    try:
        result: RunResult = yield from run_loop(fc.core, run, config)
    except StepswitchError:
        fr.child = run.snapshot(pending=None, status="stopped")
        fr.live = []
        raise
    finally:
        fr.running = None
    fr.responses.extend(result.raw_responses)
    return result


def _resumed_child(fc: FlowCore, fr: FlowRun, child: RunState) -> Run:
    """Resume a node's paused run (its decisions are in its own state) with the flow's
    standing 'always' decisions."""
    child.always.update(fr.always)
    budget = fr.max_turns if fr.max_turns is not None else child.max_turns
    return Run.resume(fc.core, child, max_turns=budget, ctx=fr.ctx, calls=fr.calls)


def _step(fc: FlowCore, node: FlowNode, value: Any, ctx: RunContext[Any]
          ) -> Generator[Any, Any, Any]:
    """Call an awaited step node on ``value`` (async, or one a driver performs) and
    check its output, for a node and for each fan-out branch."""
    fn, takes_context, accepts, check = fc.callees[node.name]
    out = yield Await(fn(ctx, value) if takes_context else fn(value))
    if not isinstance(out, accepts):
        check(out)
    return out


def _calls(callee: Callee, values: Sequence[Any], ctx: RunContext[Any],
           done: dict[int, Any]) -> list[Any]:
    """A fan-out's branches over a sync step (``callee``, its row of ``fc.callees``):
    the step called on each of ``values`` in order and its output checked, as
    :func:`_flow` calls a sync step node, written out in the loop (a frame per element
    is a third of what a fan-out costs).

    A call that never awaits gains nothing from a task of its own (nor a concurrency
    limit from a semaphore), so the branches are called here, one after another
    (bench/README.md, fan-out). Each call's outcome is its own, as with jobs: every
    value is called, and the first failure in order is raised once all were; ``done``
    holds the outputs of values called before (a resumed fan-out) and receives the
    finished ones when one failed, so a resume calls only the failed again."""
    fn, takes_context, accepts, check = callee
    if takes_context:
        fn = functools.partial(fn, ctx)
    outs: list[Any] = []
    failed: list[int] = []
    error: Exception | None = None
    for value in values:
        if done and len(outs) in done:
            outs.append(done[len(outs)])
            continue
        try:
            out = fn(value)
            if not isinstance(out, accepts):
                check(out)
        except Exception as exc:
            error = error or exc
            failed.append(len(outs))
            out = None
        outs.append(out)
    if error is not None:
        done.update((i, out) for i, out in enumerate(outs) if i not in failed)
        raise error
    return outs


def _fan(fc: FlowCore, fr: FlowRun, config: RunConfig, source: FlowNode
         ) -> Generator[Any, Any, list[Any] | None]:
    """Run the branches not yet finished; the joined list, or None when some paused."""
    fan = fr.fan
    assert fan is not None
    ex = source.exit
    assert ex is not None
    each = fc.nodes[ex.each or ""]
    if fr.emit:
        yield Emit(FlowNodeStreamEvent(each.name, "fan_out", len(fan.elements)))
    callee = fc.sync_fans.get(source.name)
    if callee is not None:  # a resumed fan-out over a sync step
        joined = _calls(callee, fan.elements, fr.ctx, fan.results)
        fr.fan = None
        fr.node = source.name
        return joined
    todo = [i for i in range(len(fan.elements)) if i not in fan.results]
    jobs: list[NestedJob] = []
    runs: dict[int, Run] = {}
    for i in todo:
        if each.kind == "step":
            jobs.append(NestedJob(_step(fc, each, fan.elements[i], fr.ctx)))
            continue
        paused = fan.paused.pop(i, None)
        if paused is not None:
            run = _resumed_child(fc, fr, paused)
        else:
            run = Run.start(fr.workflow, each.name, to_text(fan.elements[i]),
                            max_turns=fr.max_turns, ctx=fr.ctx, calls=fr.calls)
            run.always = dict(fr.always)
        run.model = fr.model
        runs[i] = run
        jobs.append(NestedJob(run_loop(fc.core, run, config)))
    outcomes = (yield RunJobs(tuple(jobs), ex.concurrency)) if jobs else ()
    error: BaseException | None = None
    made: list[RunItem] = []
    for i, outcome in zip(todo, outcomes, strict=True):
        if type(outcome) is Err:
            if i in runs:  # what the branch did so far stays resumable
                fan.paused[i] = runs[i].snapshot(pending=None, status="stopped")
            error = error or outcome.error
            continue
        value = outcome.value
        if each.kind == "step":
            fan.results[i] = value
            continue
        result: RunResult = value
        fr.responses.extend(result.raw_responses)
        if result.interruptions:
            fan.paused[i] = result.to_state()
        else:
            fan.results[i] = result.final_output
            made.extend(lifted(result.new_items, run_key(each.name, i)))
    # Finished branches' items join the run now, in element order; a branch that paused
    # adds its items when it finishes, so the items of a paused run stay a prefix.
    fr.items.extend(made)
    if fr.emit and made:
        yield Emit(tuple(made))
    if error is not None:
        raise error
    if fan.paused:
        return None
    joined = [fan.results[i] for i in range(len(fan.elements))]
    fr.fan = None
    fr.node = source.name
    return joined
