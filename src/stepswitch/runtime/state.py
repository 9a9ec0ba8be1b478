"""``RunState``: a paused (or stopped) run, to decide approvals on and resume.

A state is data: the input, every item so far, the current agent, the turn count,
the interrupted turn's calls, the decisions taken, and the paused nested runs of
agent tools. Agents and tools are referenced by name and re-resolved against the
machine that resumes it. JSON crosses processes (see :mod:`.state_json`).
"""

from __future__ import annotations

from dataclasses import field, replace
from typing import Any, Literal

from stepswitch._dataclass import dataclass
from stepswitch.context import Usage
from stepswitch.runtime.approvals import AlwaysKey, find_approval, open_approvals
from stepswitch.runtime.items import RunItem, ToolApprovalItem
from stepswitch.runtime.model import InputItem, OutputItem

__all__ = [
    "ApprovalDecision", "FanState", "FlowState", "PendingAppend", "PendingTurn", "RunState",
    "SessionPin", "usage_tuple",
]


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """A human's answer for one call: approve, or reject with the message the model sees."""

    approved: bool
    message: str | None = None


@dataclass(frozen=True, slots=True)
class PendingTurn:
    """The interrupted turn: the response's output, settled on resume without a new
    model call."""

    agent: str
    output: tuple[OutputItem, ...]
    start: int
    """Index in the run's items where the turn's items begin."""
    disabled: frozenset[str] = frozenset()
    """The agent's tools and handoffs ``is_enabled`` kept from the model that turn: a
    call of one was a call of an unknown tool, and stays one on resume."""


@dataclass(frozen=True, slots=True)
class PendingAppend:
    """A session append that was sent but not acknowledged: resuming sends it again
    under the same operation id (a no-op when it had committed)."""

    operation_id: str
    items: tuple[InputItem, ...]
    expected_version: int | None
    current_agent: str | None
    synced: int
    """The run's items up to this index are in the session once it is applied."""


@dataclass(frozen=True, slots=True)
class SessionPin:
    """Where a run taken with a session stands in it: the version it last wrote or
    read, how many of its items the session holds, and an unacknowledged append."""

    session_id: str
    version: int
    synced: int
    """``items[:synced]`` are in the session."""
    input_saved: bool
    """The run's input is in the session (it goes with the run's first append)."""
    pending: PendingAppend | None = None


FLOW_KEY = "flow:"
"""Paused runs of a flow sit in ``RunState.nested`` under ``flow:<node>`` (an agent
node) or ``flow:<node>#<i>`` (branch ``i`` of a fan-out), so approvals find them as
they find paused agent-tool runs."""


@dataclass(slots=True)
class FanState:
    """A fan-out in progress: its elements and the finished branches' outputs (kept,
    never run again); paused branches' runs are in ``RunState.nested``. Values are
    JSON (see ``runtime.flow``)."""

    source: str
    """The node whose output is fanned out."""
    elements: list[Any]
    results: dict[int, Any] = field(default_factory=dict)

    def copy(self) -> FanState:
        return replace(self, elements=list(self.elements), results=dict(self.results))


@dataclass(slots=True)
class FlowState:
    """Where a flow stopped: the node, its input (JSON), the edge budgets used, and a
    fan-out in progress. A paused agent node's run is in ``RunState.nested``."""

    node: str
    value: Any
    uses: dict[str, int] = field(default_factory=dict)
    done: int = 0
    """``items[:done]`` belong to finished nodes; the rest to the paused run(s)."""
    fan: FanState | None = None
    spent: str | None = None
    """The edge (``source->target``, as ``uses`` counts it) whose ``max_uses`` ran out
    and stopped the run: such a state does not resume (the edge would be spent again)."""

    def copy(self) -> FlowState:
        return replace(self, uses=dict(self.uses),
                       fan=None if self.fan is None else self.fan.copy())


@dataclass(slots=True)
class RunState:
    """A run that paused for approvals, or stopped at a limit, ready to resume.

    ``approve``/``reject`` take an interruption item or a call id and match by call
    id, so an item from the original result works on a reloaded state.
    """

    workflow: str
    input: tuple[InputItem, ...]
    items: list[RunItem]
    current_agent: str
    current_turn: int
    max_turns: int | None
    pending: PendingTurn | None = None
    decisions: dict[str, ApprovalDecision] = field(default_factory=dict)
    """This run's own calls' decisions, by call id (a nested run's are in its state)."""
    always: dict[AlwaysKey, bool] = field(default_factory=dict)
    """(agent, tool name) → approve (True) or reject (False) every call of that agent's
    tool from now on."""
    nested: dict[str, RunState] = field(default_factory=dict)
    """Paused nested runs of agent tools, by the outer call id."""
    history: tuple[InputItem, ...] | None = None
    """What the model saw last when a handoff input filter rewrote it; None means the
    input plus every model-visible item."""
    history_from: int = 0
    """Items from this index on follow ``history`` in the model's input."""
    depth: int = 0
    status: Literal["interrupted", "stopped", "finished"] = "interrupted"
    """``interrupted``: paused for approvals; ``stopped``: ended by an error or a limit;
    ``finished``: ended with a final output (``stepswitch run --resume`` refuses it)."""
    trace_context: str | None = None
    """The traceparent of the run's trace, when it was traced (a resume continues it)."""
    run_id: str | None = None
    """The run's id: session operation ids and tools' idempotency keys derive from it."""
    session: SessionPin | None = None
    """The session pin of a run taken with a session (resume it with that session)."""
    flow: FlowState | None = None
    """Where a flow stopped (None for a run that is not a flow)."""
    model_calls: int | None = None
    """The model calls the whole run had made when it was saved: its own turns, its
    nested agent-tool runs' (finished ones included) and a flow's nodes'. A scripted
    transcript resumes after that many steps. None in a state saved before stepswitch
    recorded it (see :func:`calls_made`)."""
    tool_uses: dict[str, int] = field(default_factory=dict)
    """How often each function tool with ``max_uses`` had run in the whole run (nested
    runs and a flow's nodes included) when it was saved; empty when none had."""
    spent_usd: float = 0.0
    """What the whole run's reported usage had cost when it was saved, priced under
    ``RunConfig(max_cost_usd=)`` (0.0 otherwise): a resumed run goes on from it, so a
    ceiling holds across pauses."""
    usage: tuple[int, int, int, int] = (0, 0, 0, 0)
    """The whole run's usage when it was saved (requests, input, output and total
    tokens; nested runs included): a resumed run's ``result.usage`` goes on from it, as
    the SDK's does."""
    resumed: bool = False
    """A run has taken this state (``machine.run(state)``): resuming it again is refused,
    as its approved calls may have run. Kept in its JSON: ``stepswitch run --resume``
    saves the state it resumes so marked before any of its calls runs, so a process
    killed mid-run leaves a file that no later resume runs again."""

    @property
    def calls_made(self) -> int:
        """:attr:`model_calls`; for an older state that lacks it, the turns its runs
        still record (its own and its paused nested runs'; finished nested runs' calls
        are not in such a state)."""
        if self.model_calls is not None:
            return self.model_calls
        return self.current_turn + sum(n.calls_made for n in self.nested.values())

    @property
    def interruptions(self) -> list[ToolApprovalItem]:
        """Every call still waiting for a decision, nested runs' calls included (their
        approval items are copied into this run's items, with ``run_path`` set)."""
        return open_approvals(self)

    def get_interruptions(self) -> list[ToolApprovalItem]:
        """The SDK's spelling of :attr:`interruptions`."""
        return self.interruptions

    def approve(self, item: ToolApprovalItem | str, always: bool = False) -> None:
        """Let the call run when the state resumes (``always``: every later call of that
        agent's tool in this run too, nested runs included)."""
        self._decide(item, ApprovalDecision(True), always)

    def reject(
        self, item: ToolApprovalItem | str, message: str | None = None, always: bool = False
    ) -> None:
        """Refuse the call; the model sees ``message`` (or the default) as its output."""
        self._decide(item, ApprovalDecision(False, message), always)

    def _decide(
        self, item: ToolApprovalItem | str, decision: ApprovalDecision, always: bool
    ) -> None:
        owner, approval = find_approval(self, item)
        owner.decisions[approval.call_id] = decision
        if always:
            self.always[(approval.agent, approval.name)] = decision.approved

    def all_decisions(self) -> list[tuple[str, ApprovalDecision]]:
        """Every decision taken on this state by call id: its own, then its paused
        nested runs' (agent tools', a flow's node runs'), in key order."""
        out = list(self.decisions.items())
        for _, child in sorted(self.nested.items()):
            out.extend(child.all_decisions())
        return out

    def copy(self) -> RunState:
        """A deep-enough copy: resuming it never changes this state."""
        return replace(
            self,
            items=list(self.items),
            decisions=dict(self.decisions),
            always=dict(self.always),
            nested={k: v.copy() for k, v in self.nested.items()},
            flow=None if self.flow is None else self.flow.copy(),
            tool_uses=dict(self.tool_uses),
        )

    def to_json(self, *, key: bytes | None = None, indent: int | None = None) -> str:
        """Versioned JSON with a digest over the body (an HMAC when ``key`` is given)."""
        from stepswitch.runtime.state_json import dump_state

        return dump_state(self, key=key, indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes, *, key: bytes | None = None) -> RunState:
        """Read a state written by :meth:`to_json`; ``StateError`` names what is wrong."""
        from stepswitch.runtime.state_json import load_state

        return load_state(text, key=key)


def usage_tuple(usage: Usage) -> tuple[int, int, int, int]:
    """``usage`` as :attr:`RunState.usage` keeps it."""
    return (usage.requests, usage.input_tokens, usage.output_tokens, usage.total_tokens)
