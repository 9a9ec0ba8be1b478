"""What a client and the workflow exchange: ``RunInput``, ``RunOutput``, ``Decision``,
``Interruption``.

No ``from __future__ import annotations`` here, on purpose: Temporal's data converter
calls ``typing.get_type_hints`` on these dataclasses each time it decodes one (every
run's start on the worker, every result on the client), and string annotations are
compiled and evaluated again on every such call (about three times the cost of the
whole decode; bench/bench_temporal.py, docs/durable.md "Performance").
"""

from dataclasses import field
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.errors import UserError
from stepswitch.temporal._tracing import current_traceparent

__all__ = ["Decision", "Interruption", "RunInput", "RunOutput", "input_problem"]


def input_problem(value: Any) -> str | None:
    """What is wrong with a run's input (``RunInput.input``), or None: it must be a
    string or a list of input items as dicts, which is all Temporal's converter decodes
    (anything else would fail every workflow task of the run, retried forever)."""
    if isinstance(value, str):
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, dict) or not all(isinstance(k, str) for k in item):
                return (f"RunInput.input[{i}]: expected an input item as a dict (such as "
                        f"{{'role': 'user', 'content': '...'}}), got {type(item).__name__}")
        return None
    return (f"RunInput.input: expected the user's text (a string) or a list of input "
            f"items (dicts), got {type(value).__name__}")


@dataclass
class RunInput:
    """What starts a run: the user's input (text or input items as dicts).

    ``session_id`` continues a conversation kept in the worker's sessions
    (``worker_for(..., sessions=...)``): it must be the workflow id (a conversation is
    one workflow id, run once per message, so two runs of it never overlap). The run
    reads the conversation and continues at its current agent; each settled turn is
    appended. Both are activities.

    ``state`` continues a saved run instead (a ``RunState``'s JSON; the workflow's own
    continue-as-new uses it); ``context`` is the run context's value, handed to tools
    and hooks (JSON). ``max_turns`` replaces the workflow's budget.
    """

    input: str | list[dict[str, Any]]
    session_id: str | None = None
    context: Any = None
    max_turns: int | None = None
    state: str | None = None
    digest: str | None = None
    """The IR digest this run is pinned to (``machine_digest(machine)``). Unset, the
    first worker to run it stamps its own, in a local activity; a client that has the
    machine may pin it here instead (one activity less per run), and a worker of
    another version then fails the run at once. Continue-as-new carries it."""
    usage: list[int] | None = None
    runs: int = 1
    traceparent: str | None = field(default_factory=current_traceparent)
    """The span the run's spans go under: by default the caller's current span, when
    there is one (docs/tracing.md, "On Temporal")."""

    def __post_init__(self) -> None:
        problem = input_problem(self.input)
        if problem is not None:
            raise UserError(problem)


@dataclass
class Decision:
    """A human's answer to one pending approval (``message``: what the model sees on
    a rejection).

    ``path`` says which call when pending calls share ``call_id`` (a flow's fan-out
    branches whose models number calls alike, ``call_0`` each): the ``path`` of the
    ``Interruption`` decided. Unset, ``call_id`` must name one pending call."""

    call_id: str
    approve: bool
    message: str | None = None
    path: list[str] | None = None


@dataclass
class Interruption:
    """A call waiting for approval.

    ``path`` is where it waits: the runs that hold it, outermost first (a flow node's
    run as ``flow:NODE``, a fan-out branch's as ``flow:NODE#INDEX``, an agent tool's
    nested run by its call id); empty for a call of the run itself. A ``Decision``
    passes it back when another pending call has the same ``call_id``."""

    call_id: str
    name: str
    arguments: str
    agent: str
    path: list[str] = field(default_factory=list)


@dataclass
class RunOutput:
    """A finished run: the final output (as JSON), the last agent, every item."""

    final_output: Any
    last_agent: str
    items: list[dict[str, Any]]
    digest: str
    usage: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    runs: int = 1
    """How many workflow runs (continue-as-new) the conversation took."""
