"""Run one scenario under all three surfaces and insist they agree.

``run_all(machine, input, script)`` runs ``machine.run`` (awaited),
``machine.run_sync`` and ``machine.run_streamed`` (events consumed) on fresh
``ScriptedModel``s built from the same script, and compares what a user can
observe: the items, final output, last agent, interruptions, the model calls
(agent, tools offered, input items) and, when the run fails, the exception's
type and message and the items it carries. It returns the ``run_sync`` outcome.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from stepswitch import RunState
from stepswitch.runtime.events import (
    AgentUpdatedStreamEvent,
    FlowNodeStreamEvent,
    RunItemStreamEvent,
)
from stepswitch.testing import ScriptedModel, ScriptStep

SURFACES = ("run", "run_sync", "run_streamed")


class Runs(Protocol):
    """What ``run_all`` drives: a ``StateMachine``, or a differential ``Mixed`` that
    sends some surfaces to a generated twin."""

    def run(self, *args: Any, **kwargs: Any) -> Any: ...
    def run_sync(self, *args: Any, **kwargs: Any) -> Any: ...
    def run_streamed(self, *args: Any, **kwargs: Any) -> Any: ...


@dataclass
class Outcome:
    """What one surface produced."""

    surface: str
    model: ScriptedModel
    result: Any = None
    error: BaseException | None = None
    events: list[Any] = field(default_factory=list)

    @property
    def items(self) -> list[Any]:
        if self.result is not None:
            return list(self.result.new_items)
        data = getattr(self.error, "run_data", None)
        return list(data.new_items) if data is not None else []

    def observed(self) -> dict[str, Any]:
        calls = [
            (c.agent, c.instructions, c.tools, tuple(c.input), c.output_schema)
            for c in self.model.calls
        ]
        out: dict[str, Any] = {"items": self.items, "calls": calls}
        if self.result is not None:
            out.update(
                final_output=self.result.final_output,
                last_agent=self.result.last_agent,
                interruptions=list(self.result.interruptions),
                responses=len(self.result.raw_responses),
            )
        else:
            data = getattr(self.error, "run_data", None)
            out.update(
                error=(type(self.error), str(self.error)),
                last_agent=getattr(data, "last_agent", None),
            )
        return out


def _surface(
    surface: str, machine: Runs, input: Any, model: ScriptedModel, kwargs: dict[str, Any]
) -> Outcome:
    outcome = Outcome(surface, model)
    try:
        if surface == "run":
            outcome.result = asyncio.run(machine.run(input, model=model, **kwargs))
        elif surface == "run_sync":
            outcome.result = machine.run_sync(input, model=model, **kwargs)
        else:
            streamed = machine.run_streamed(input, model=model, **kwargs)

            async def consume() -> None:
                async for event in streamed.stream_events():
                    outcome.events.append(event)

            asyncio.run(consume())
            outcome.result = streamed.result()
    except Exception as exc:
        outcome.error = exc
    return outcome


def run_all(
    machine: Runs,
    input: str | list[Any] | RunState,
    script: Sequence[ScriptStep] | Callable[[], ScriptedModel],
    *,
    ledger: Any = None,
    **kwargs: Any,
) -> Outcome:
    """Run under every surface, assert they agree, return the ``run_sync`` outcome.

    ``ledger`` (an object with a ``ran`` list that tools append to) is emptied before
    each surface and compared after; it ends holding what the last surface ran.
    """
    outcomes = []
    ran: list[list[Any]] = []
    for surface in SURFACES:
        if ledger is not None:
            ledger.ran.clear()
        model = script() if callable(script) else ScriptedModel(copy.deepcopy(list(script)))
        run_input = input.copy() if isinstance(input, RunState) else input
        outcomes.append(_surface(surface, machine, run_input, model, kwargs))
        if ledger is not None:
            ran.append(list(ledger.ran))
    base = outcomes[1].observed()
    for other in (outcomes[0], outcomes[2]):
        assert other.observed() == base, f"{other.surface} differs from run_sync"
    if ledger is not None:
        assert ran[0] == ran[1] == ran[2], f"surfaces ran different tools: {ran}"
    streamed = outcomes[2]
    if streamed.error is not None and getattr(streamed.error, "run_data", None) is None:
        return outcomes[1]  # a foreign error carries no items to compare events with
    item_events = [e.item for e in streamed.events if isinstance(e, RunItemStreamEvent)]
    visible = [i for i in streamed.items if i.type != "tool_approval_item"]
    already = 0
    if isinstance(input, RunState):
        already = sum(1 for i in input.items if i.type != "tool_approval_item")
    assert item_events == visible[already:], (
        f"stream events do not match the new items:\n{trace(item_events)}\n"
        f"{trace(visible[already:])}"
    )
    agents = [e.new_agent for e in streamed.events if isinstance(e, AgentUpdatedStreamEvent)]
    # a flow announces its node first (FlowNodeStreamEvent), then the node's agent
    events = [e for e in streamed.events if not isinstance(e, FlowNodeStreamEvent)]
    if events:
        assert agents and events[0] == AgentUpdatedStreamEvent(agents[0]), (
            "a streamed run starts with an agent_updated event"
        )
    return outcomes[1]


def trace(items: Sequence[Any]) -> list[tuple[str, ...]]:
    """A compact view of items: (type, agent, tool name / output / message text)."""
    out: list[tuple[str, ...]] = []
    for i in items:
        if i.type in ("tool_call_output_item", "handoff_output_item"):
            label = i.output
        elif i.type == "message_output_item":
            label = i.content
        elif i.type == "responses_item":  # a reasoning item, or what a hosted tool did
            label = str(i.item.get("type"))
        else:
            label = i.name
        out.append((i.type, i.agent, label))
    return out


def scenario_files() -> list[str]:
    """The conformance files whose tests run scenarios through ``run_all``, as paths from
    the repository's top folder: what a plugin wrapping ``run_all`` sees (the
    differential and trail replays run only these)."""
    here = Path(__file__).resolve().parent
    return sorted(f"tests/conformance/{p.name}" for p in here.glob("test_*.py")
                  if "run_all(" in p.read_text(encoding="utf-8"))
