"""``workflow_for(machine)``: the run loop as a Temporal workflow.

The workflow drives the very generator the in-process drivers drive
(:func:`stepswitch.runtime.loop.run_loop`), so every decision of the loop (what the
model is sent, which tool runs, handoffs, budgets, approvals, the step rule) is made
inside the deterministic workflow and replays from history. What touches the world
becomes an activity: the model call, each function tool, and the hooks that may do
I/O (local activities). A flow's ``@ss.step`` functions are activities too (user code
that may do I/O); the flow's own decisions (its edges, branch predicates, routes,
budgets, fan-out and join) are made in the workflow by the flow loop
(:func:`stepswitch.runtime.flow.flow_loop`), as in-process. Pure user callables
(tool-use-behaviour functions, handoff input filters, output extractors, failure
formatters, and a flow's branch predicates, which like handoff input filters are pure
functions of a value already in the workflow) run inside the workflow and must be
deterministic.

The workflow reads the user's objects through a resolver whose entries for those
effects are stand-ins (:mod:`~stepswitch.temporal._standins`); the driver
(:mod:`~stepswitch.temporal._driver`) turns the effects they produce into activity
calls, and keeps a pause's decisions in :mod:`~stepswitch.temporal._approvals`. How
the workflow fails is :mod:`~stepswitch.temporal._failures`. This module makes the
workflow class: its run method, queries and update.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.converter import value_to_type
from temporalio.exceptions import ApplicationError

from stepswitch.errors import UserError
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.flow import FlowCore
from stepswitch.temporal._activities import activity_names, machine_digest
from stepswitch.temporal._codec import write_items
from stepswitch.temporal._driver import Driver, Options
from stepswitch.temporal._failures import NOT_RETRYABLE, ToolFailure
from stepswitch.temporal._messages import (
    Decision,
    Interruption,
    RunInput,
    RunOutput,
    input_problem,
)
from stepswitch.temporal._standins import workflow_core, workflow_flow

if TYPE_CHECKING:
    from stepswitch.runtime.machine import StateMachine

__all__ = [
    "Decision",
    "Interruption",
    "RunInput",
    "RunOutput",
    "ToolFailure",
    "workflow_for",
    "workflow_name",
]


def workflow_name(machine: StateMachine) -> str:
    """The Temporal workflow type of ``machine``'s runs."""
    return f"stepswitch.{machine.name}"


def workflow_for(
    machine: StateMachine,
    *,
    model_timeout: timedelta = timedelta(minutes=5),
    tool_timeout: timedelta = timedelta(minutes=10),
    hook_timeout: timedelta = timedelta(minutes=1),
    model_retry: RetryPolicy | None = None,
    tool_retry: RetryPolicy | None = None,
    continue_as_new_after: int | None = 100,
    local_activities: bool | Literal["models"] = False,
    tracer_provider: Any = None,
    hooks: Any = None,
) -> type:
    """A Temporal workflow class that runs ``machine`` (workflow type
    ``stepswitch.<name>``), started with a :class:`RunInput`, answering a
    :class:`RunOutput`.

    ``continue_as_new_after`` model turns (or when Temporal suggests it), a run goes on
    in a fresh workflow run carrying its ``RunState``, so histories stay bounded.
    ``local_activities`` runs model calls and tools as local activities (in the worker
    that runs the workflow, without a round trip through the server per call: faster,
    for calls well under the workflow task timeout); ``"models"`` runs only the model
    calls so, and tools as activities. A local activity's result is recorded when the
    workflow task that ran it completes, so a worker that dies mid-task runs every local
    activity of that task again: harmless for a model call, a second run for a tool
    (docs/durable.md, "Local activities"). Timeouts bound one attempt of an
    activity; a worker that dies mid-activity is noticed when it runs out, and the
    activity runs again on another worker. ``tracer_provider`` (else the global one, if
    set) gets the run's workflow and agent spans. ``hooks``: the ``ss.RunHooks`` the
    worker's activities call (give the same object to ``activities_for``; ``worker_for``
    does): the workflow calls, as local activities, the methods it overrides.

    A flow runs too: its decisions in the workflow, each ``@ss.step`` as an activity
    (``tool_timeout`` and ``tool_retry``; a local one when tools are, with
    ``local_activities=True``).
    """
    if not isinstance(local_activities, bool) and local_activities != "models":
        raise UserError(
            f"local_activities={local_activities!r}: expected False (every model call and "
            'tool an activity), "models" (model calls local) or True (both local)'
        )
    options = Options(
        model_timeout,
        tool_timeout,
        hook_timeout,
        model_retry
        or RetryPolicy(
            initial_interval=timedelta(seconds=1),
            maximum_interval=timedelta(seconds=30),
            maximum_attempts=8,
            non_retryable_error_types=NOT_RETRYABLE,
        ),
        tool_retry or RetryPolicy(maximum_attempts=5, non_retryable_error_types=NOT_RETRYABLE),
        continue_as_new_after,
        local_activities is not False,
        local_activities is True,
        tracer_provider,
        _run_hooks(hooks),
    )
    core = workflow_core(machine)
    flow = workflow_flow(machine, core)
    digest = machine_digest(machine)
    names = activity_names(machine)

    cls_name = f"StepswitchRun_{machine.name}"

    async def run(self, input: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        # the output leaves as a shallow dict, which clients decode as the RunOutput it
        # is (the annotation below): the converter would encode the dataclass through
        # dataclasses.asdict, deep-copying every item, for the same JSON
        driver: Driver = self._driver
        return dict(vars(await driver.run(read_input(input))))

    # Temporal wants the run method defined on the class itself (it checks by name).
    # The input arrives as plain JSON and becomes a RunInput in the run's first step: a
    # value Temporal's converter cannot decode would fail every workflow task, retried
    # forever, before stepswitch code runs; read_input fails the run for good instead
    run.__qualname__ = f"{cls_name}.run"
    run.__annotations__ = {"input": Any, "return": RunOutput}
    attrs = {
        "run": workflow.run(run),
        "_setup": (core, digest, names, options, flow),
        "__module__": __name__,
    }
    cls = type(cls_name, (_RunBase,), attrs)
    cls.__doc__ = f"A durable run of workflow {machine.name!r}."
    defined: type = workflow.defn(name=workflow_name(machine), sandboxed=False)(cls)
    return defined


def read_input(raw: Any) -> RunInput:
    """The run's input as a ``RunInput`` (a client's dataclass arrives as a JSON object),
    or a non-retryable ``UserError`` failure naming what is wrong with it."""
    if isinstance(raw, RunInput):
        return raw
    problem = None
    if not isinstance(raw, dict):
        problem = f"expected a RunInput (a JSON object), got {type(raw).__name__}"
    elif "input" not in raw:
        problem = "RunInput.input is missing"
    else:
        problem = input_problem(raw["input"])
    if problem is None:
        plain = _plain_input(raw)
        if plain is not None:
            return plain
        try:
            read: RunInput = value_to_type(RunInput, raw)
            return read
        except (TypeError, ValueError, UserError) as exc:
            problem = str(exc) or type(exc).__name__
    raise ApplicationError(
        f"the run's input is not a RunInput: {problem}; start the run with "
        "RunInput(text) or RunInput([{'role': 'user', 'content': text}, ...])",
        type="UserError",
        non_retryable=True,
    )


_OPTIONAL_TEXT = frozenset(("session_id", "state", "digest", "traceparent"))


def _plain_input(raw: dict[str, Any]) -> RunInput | None:
    """The ``RunInput`` of a payload whose fields each hold exactly the type the field
    names (what a client's ``RunInput`` becomes), read as the converter would read it
    (unknown keys left out, the item dicts copied) but without its evaluating the
    class's type hints on every run; None for anything else, which the converter
    reads (or words what is wrong with). ``tests/temporal/test_run_input_read.py``
    holds it to the converter's reading."""
    fields: dict[str, Any] = {}
    for name, value in raw.items():
        if name == "input":
            fields[name] = value if type(value) is str else [dict(x) for x in value]
        elif name in _OPTIONAL_TEXT:
            if value is not None and type(value) is not str:
                return None
            fields[name] = value
        elif name == "context":
            fields[name] = value
        elif name == "max_turns" or name == "runs":
            if type(value) is not int and (value is not None or name == "runs"):
                return None
            fields[name] = value
        elif name == "usage":
            if value is not None and (type(value) is not list
                                      or any(type(x) is not int for x in value)):
                return None
            fields[name] = None if value is None else list(value)
        elif name in RunInput.__dataclass_fields__:  # a field with no plain reading here
            return None
    return RunInput(**fields)


_PLAIN_FIELDS = frozenset((*_OPTIONAL_TEXT, "input", "context", "max_turns", "runs", "usage"))
"""The ``RunInput`` fields ``_plain_input`` reads (a test holds them to the class's)."""


class _RunBase:
    """The workflow's handlers; ``workflow_for`` makes one subclass per machine."""

    _setup: tuple[MachineCore, str, dict[str, str], Options, FlowCore | None]

    def __init__(self) -> None:
        self._driver = Driver(*type(self)._setup)

    @workflow.query
    def interruptions(self) -> list[Interruption]:
        """The calls waiting for a decision now."""
        return list(self._driver.approvals.pending.values())

    @workflow.query
    def items(self) -> list[dict[str, Any]]:
        """The run's items so far (as a saved state writes them)."""
        return write_items(self._driver.items_so_far())

    @workflow.update
    async def decide(self, decision: Decision) -> str:
        """Approve or reject one pending call."""
        return await self._driver.decide(decision)

    @decide.validator
    def _check_decision(self, decision: Decision) -> None:
        self._driver.approvals.check(decision, early=True)


def _run_hooks(hooks: Any) -> Any:
    """The workflow's stand-in for ``workflow_for(hooks=)``, checked; None without."""
    if hooks is None:
        return None
    from stepswitch.lifecycle import check_hooks
    from stepswitch.temporal._hooks import remote_run_hooks

    check_hooks(hooks, "run", "workflow_for(hooks=...)")
    return remote_run_hooks(hooks)
