"""Replay a recorded run on the workflow as it is now, and say where it first diverges.

A recording (a saved ``RunState``, a Responses API item list, a session's history as
stepswitch item records, or a file written by ``RunConfig(record=PATH)``) is read into
a :class:`Recording` (:mod:`stepswitch.review.recording`, re-exported here): the input
each run of the conversation started with, the agent it started at, and every model
response with the tool outputs that answered it. The compiled machine then runs for
real, with a model that plays the recorded responses back and tool calls answered with
the recorded outputs (no tool runs, no model is called); guardrails, approvals, budgets
and output types are the workflow's own, as they are today. The first place the run
stops being the recorded one is a :class:`Divergence` with a code of
:data:`REPLAY_CODES` (each has an ``explain`` page).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from importlib import resources
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.errors import (
    GuardrailTripwireTriggered,
    MaxTurnsExceeded,
    ModelBehaviorError,
)
from stepswitch.ir import RunAgent
from stepswitch.review.recording import (
    Recording,
    ReplayError,
    Turn,
    as_recording,
    read_recording,
    record_doc,
    write_record,
)
from stepswitch.runtime.effects import CallJob, NestedJob, RunJobs
from stepswitch.runtime.model import (
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
)
from stepswitch.runtime.relay import Relay
from stepswitch.runtime.tools import REJECTED

__all__ = [
    "REPLAY_CODES",
    "Divergence",
    "Recording",
    "ReplayCode",
    "ReplayError",
    "ReplayOutcome",
    "read_recording",
    "record_doc",
    "replay",
    "replay_code_doc",
    "replay_run",
    "write_record",
]

@dataclass(frozen=True, slots=True)
class ReplayCode:
    code: str
    name: str
    summary: str


_ALL = (
    ReplayCode("RP101", "tool-gone",
               "a recorded call names a tool the agent no longer has (renamed or removed)"),
    ReplayCode("RP102", "arguments-rejected",
               "the tool's schema now rejects a call's recorded arguments"),
    ReplayCode("RP103", "handoff-gone", "a recorded handoff is no longer offered"),
    ReplayCode("RP104", "budget-spent", "a turn budget (max_turns) is now spent before the "
               "recorded run ended"),
    ReplayCode("RP105", "approval-required", "a call that ran now waits for a human's "
               "approval"),
    ReplayCode("RP106", "guardrail-trips", "a guardrail now trips on the recorded run"),
    ReplayCode("RP107", "output-rejected", "the output type now rejects the recorded final "
               "output"),
    ReplayCode("RP108", "agent-changed", "a recorded turn is now taken by another agent"),
    ReplayCode("RP109", "ended-early", "the run now ends before the recorded run did"),
    ReplayCode("RP110", "goes-on", "the run now asks for a model turn the recording does "
               "not have"),
    ReplayCode("RP111", "run-error", "the replayed run raised an error the recorded run "
               "did not"),
    ReplayCode("RP112", "route-changed", "a flow route now leads elsewhere than the "
               "recorded run went"),
    ReplayCode("RP113", "unanswered-call", "the run now carries out a call the recorded "
               "run never answered (it waited for approval, or the recording ends there)"),
    ReplayCode("RP114", "approval-dropped", "a call the recorded run ran only after a "
               "human's approval now runs without one"),
)

REPLAY_CODES: dict[str, ReplayCode] = {c.code: c for c in _ALL}
"""Every replay code, in order."""


def replay_code_doc(code: str) -> str:
    """The documentation page of a replay code (Markdown); ``KeyError`` when unknown."""
    if code not in REPLAY_CODES:
        raise KeyError(code)
    return (resources.files("stepswitch.review") / "docs" / f"{code}.md").read_text("utf-8")


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where the replay first left the recorded run."""

    code: str
    message: str
    turn: int
    """The model turn (1-based, across the whole recording) where it diverged."""
    where: str
    """The recorded item it points at (``[3]`` in a list, ``items[3]`` in a state)."""
    agent: str | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.code} {REPLAY_CODES[self.code].name}: {self.message}"


# -- replaying -------------------------------------------------------------------------


class _Stop(Exception):
    """Raised inside the run to end it at a divergence."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.message)
        self.divergence = divergence


class _Player:
    """The recorded model and the recorded tools of one replay."""

    provider_name = "stepswitch.replay"

    def __init__(self, recording: Recording, flow: bool = False, machine: Any = None) -> None:
        self.rec = recording
        self.flow = flow
        self.machine = machine
        self.used: set[int] = set()
        self.turns: list[Turn] = []
        self.pos = 0
        self.turn_no = 0
        self.ran: set[str] = set()
        self.seen: set[str] = set()  # call ids whose replayed output was compared
        self.asked: set[str] = set()  # call ids the replayed run asked a human about
        self.last: Turn | None = None

    def start(self, turns: Sequence[Turn], turn_no: int) -> None:
        self.turns = list(turns)
        self.pos = 0
        self.used = set()
        self.turn_no = turn_no

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        self.compare_outputs(request.input)
        if self.pos >= len(self.turns):
            last = self.last
            raise _Stop(Divergence(
                "RP110", f"agent {request.agent!r} asks for model turn {self.turn_no + 1}, "
                "which the recording does not have", self.turn_no + 1,
                last.where[-1] if last is not None else "end", request.agent))
        index = self.pos
        if self.flow:  # fan-out branches may ask in another order: the agent's next turn
            index = next((i for i, t in enumerate(self.turns)
                          if i not in self.used and t.agent in (None, request.agent)), -1)
            if index < 0:
                ahead = self.next_turn()
                raise _Stop(Divergence(
                    "RP112", f"the flow now runs agent {request.agent!r}, which the recording "
                    f"does not have a turn of here"
                    + (f" (it goes on with {ahead.agent!r})" if ahead is not None else ""),
                    self.turn_no + 1, ahead.where[0] if ahead is not None else "end",
                    request.agent))
        self.used.add(index)
        turn = self.turns[index]
        self.pos += 1
        self.turn_no += 1
        self.last = turn
        if turn.agent is not None and turn.agent != request.agent:
            raise _Stop(Divergence(
                "RP108", f"recorded turn {self.turn_no} was made by agent {turn.agent!r}; the "
                f"run is now at {request.agent!r}", self.turn_no, turn.where[0], request.agent))
        offered = {t.name for t in request.tools}
        for item, where in zip(turn.output, turn.where, strict=True):
            if type(item) is OutputFunctionCall and item.name not in offered:
                shown = ", ".join(sorted(offered)) or "none"
                if item.call_id in turn.handoffs or item.name.startswith("transfer_to_"):
                    raise _Stop(Divergence(
                        "RP103", f"handoff {item.name!r} is no longer offered by agent "
                        f"{request.agent!r} (offered: {shown})", self.turn_no, where,
                        request.agent))
                raise _Stop(Divergence(
                    "RP101", f"call of {item.name!r}, which agent {request.agent!r} no longer "
                    f"has (tools: {shown})", self.turn_no, where, request.agent))
        return ModelResponse(turn.output, response_id=f"replay_{self.turn_no}")

    def next_turn(self) -> Turn | None:
        """The first recorded turn not played yet."""
        return next((t for i, t in enumerate(self.turns) if i not in self.used), None)

    def compare_outputs(self, history: Sequence[Any]) -> None:
        """Calls the tools did not run: did the workflow now answer them otherwise?"""
        last = self.last
        if last is None:
            return
        for item in history:
            call_id = getattr(item, "call_id", None)
            if (getattr(item, "type", None) != "tool_call_output_item" or call_id is None
                    or call_id in self.ran or call_id in self.seen):
                continue
            self.seen.add(call_id)
            recorded = self.rec.outputs.get(call_id)
            if recorded is None or recorded[0] == item.output:
                continue
            raise _Stop(Divergence(
                "RP102", f"the arguments of call {call_id!r} of {item.name!r} are now rejected: "
                f"{item.output}", self.turn_no, self.call_where(call_id, recorded[2]),
                item.agent))

    async def answer(self, call_id: str) -> str:
        return self.rec.outputs[call_id][0]

    def jobs(self, effect: RunJobs) -> RunJobs:
        jobs: list[Any] = []
        for job in effect.jobs:
            call_id = getattr(job, "call_id", "")
            if (call_id and call_id in self.rec.approvals and call_id in self.rec.outputs
                    and call_id not in self.asked):
                # a human was asked then and it ran; today nobody is asked
                raise _Stop(self.divergence_at(
                    "RP114", call_id, f"call {call_id!r} of {job.name!r} now runs without a "
                    "human's approval; the recorded run asked for one"))
            if type(job) is CallJob and job.call_id and job.call_id in self.rec.outputs:
                self.ran.add(job.call_id)
                jobs.append(CallJob(self.answer, (job.call_id,), {}, True, job.name,
                                    job.call_id))
            elif type(job) is NestedJob and job.call_id in self.rec.outputs:
                # an agent tool: its nested run answers with what it answered then, if the
                # nested agent's output type still takes it
                job.loop.close()
                rejected = self.nested_misfit(job.name, job.agent,
                                              self.rec.outputs[job.call_id][0])
                if rejected is not None:
                    raise _Stop(self.divergence_at("RP107", job.call_id, rejected))
                self.ran.add(job.call_id)
                jobs.append(NestedJob(_canned(self.rec.outputs[job.call_id][0]), job.name,
                                      job.call_id, job.agent))
            elif type(job) in (CallJob, NestedJob) and job.call_id:
                # no tool runs in a replay: a call the recorded run never answered (it
                # waited for a human, or the recording ends before its output) would
                raise _Stop(self.unanswered(job.call_id, job.name))
            else:
                jobs.append(job)
        return RunJobs(tuple(jobs), effect.limit)

    def nested_misfit(self, tool: str, agent: str, text: str) -> str | None:
        """Why the recorded output of agent tool ``tool`` (agent ``agent``) no longer
        fits that agent's output type; None when it does, when the agent's output is
        text, or when an ``output_extractor`` made the output (it is no such value)."""
        machine = self.machine
        state = machine.ir.state(agent) if machine is not None else None
        if state is None or state.output.kind == "text":
            return None
        for other in machine.ir.states:
            for entry in other.tools:
                action = entry.action
                if (entry.name == tool and isinstance(action, RunAgent)
                        and action.target == agent and action.output_extractor is not None):
                    return None
        from stepswitch.runtime.tools import parse_typed_output

        try:
            parse_typed_output(machine._core.obj(state.output.type_ref or ""), False, text)
        except ValueError as exc:
            return (f"agent tool {tool!r}: the output type of agent {agent!r} rejects the "
                    f"recorded output: {_one_line(str(exc))}")
        return None

    def unanswered(self, call_id: str, name: str) -> Divergence:
        waited = call_id in self.rec.approvals
        return self.divergence_at(
            "RP113", call_id, f"call {call_id!r} of {name!r} would now run; the recorded run "
            + ("waited for a human's decision on it" if waited else "has no output for it"))

    def call_where(self, call_id: str, otherwise: str) -> str:
        """Where the last turn played recorded the call ``call_id``; ``otherwise`` when
        it holds no such call."""
        last = self.last
        if last is not None:
            for out, w in zip(last.output, last.where, strict=True):
                if type(out) is OutputFunctionCall and out.call_id == call_id:
                    return w
        return otherwise

    def divergence_at(self, code: str, call_id: str, message: str,
                      agent: str | None = None) -> Divergence:
        """A divergence at the recorded call ``call_id`` of the last turn played (made
        by ``agent``, default that turn's)."""
        last = self.last
        end = last.where[-1] if last is not None else "end"
        if agent is None and last is not None:
            agent = last.agent
        return Divergence(code, message, self.turn_no, self.call_where(call_id, end), agent)


@dataclass(slots=True)
class _NestedAnswer:
    """What a replayed agent tool's nested run gives its caller: the recorded text."""

    final_output: str
    interruptions: tuple[Any, ...] = ()
    output_guardrail_results: tuple[Any, ...] = ()
    new_items: tuple[Any, ...] = ()


def _canned(text: str) -> Generator[Any, Any, _NestedAnswer]:
    return _NestedAnswer(text)
    yield  # a generator: the pump drives it as a nested run loop


def _intercept(loop: Generator[Any, Any, Any], player: _Player) -> Generator[Any, Any, Any]:
    """``loop`` with each tool call answered by its recorded output."""
    with Relay(loop) as relay:
        send: Any = None
        error: BaseException | None = None
        while (effect := relay.step(send, error)) is not None:
            error = None
            if type(effect) is RunJobs:
                effect = player.jobs(effect)
            try:
                send = yield effect
            except BaseException as exc:  # the driver threw in: pass it on
                error = exc
                send = None
        return relay.result


def replay(trail: Any, machine: Any, *, context: Any = None) -> Divergence | None:
    """Replay ``trail`` (a :class:`Recording`, a path, JSON text, a ``RunState`` or a
    list of items) on ``machine`` (a compiled ``StateMachine`` or a ``Workflow``); the
    first divergence, or None when the run goes the same way."""
    return replay_run(trail, machine, context=context).divergence


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    """A replay's verdict and what the replayed run did (for a case's expectations)."""

    divergence: Divergence | None
    results: tuple[Any, ...]
    """The ``RunResult`` of each run of the conversation that finished."""

    @property
    def last(self) -> Any:
        return self.results[-1] if self.results else None


def replay_run(trail: Any, machine: Any, *, context: Any = None) -> ReplayOutcome:
    """:func:`replay`, with the replayed runs' results."""
    from stepswitch.runtime.machine import _thread_loop

    recording = as_recording(trail)
    if not hasattr(machine, "_start") and hasattr(machine, "compile"):
        kind = getattr(machine, "context_type", None)
        if context is None and isinstance(kind, type):
            try:  # as the CLI does: a context_type that builds with no arguments
                context = kind()
            except Exception as exc:
                raise ReplayError(f"workflow {machine.name!r} declares context_type="
                                  f"{kind.__name__}, which does not construct with no "
                                  f"arguments ({type(exc).__name__}); pass context=") from None
        machine = machine.compile()
    if context is None and machine.ir.context_type is not None:
        raise ReplayError(f"workflow {machine.ir.name!r} declares context_type="
                          f"{machine.ir.context_type}: pass context=")
    if recording.workflow is not None and recording.workflow != machine.ir.name:
        # each of its turns would diverge from the first: say what is wrong instead
        what = "saved run" if recording.source == "state" else "recorded run"
        raise ReplayError(f"the {what} is of workflow {recording.workflow!r}, not "
                          f"{machine.ir.name!r}; replay it on its own workflow (a renamed "
                          "workflow: record the run again)")
    results: list[Any] = []
    found = _thread_loop().run_until_complete(_replay(recording, machine, context, results))
    return ReplayOutcome(found, tuple(results))


async def _replay(rec: Recording, machine: Any, context: Any,
                  results: list[Any]) -> Divergence | None:
    from stepswitch.runtime.pump import drive

    flow = machine.ir.flow is not None
    player = _Player(rec, flow, machine)
    history: list[Any] = list(rec.history)
    agent = rec.start_agent
    if flow:
        agent = None  # a flow starts at its first node
        if len(rec.segments) > 1:
            raise ReplayError("a flow's recording holds one run; this one holds "
                              f"{len(rec.segments)}")
    elif agent is not None and agent not in machine.agents:
        first = rec.segments[0].turns[0] if rec.segments[0].turns else None
        return Divergence("RP108", f"the recording starts at agent {agent!r}, which workflow "
                          f"{machine.ir.name!r} no longer has", 1,
                          first.where[0] if first is not None else "start", agent)
    turn_no = 0
    for seg in rec.segments:
        player.start(seg.turns, turn_no)
        player.last = None
        history.extend(seg.input)
        try:
            if flow:  # a flow takes its first node's input as given
                given: Any = history[0].content if len(history) == 1 else list(history)
                loop = machine._start(given, player, context, machine.ir.max_turns, None)
            else:
                loop = machine._start(list(history), player, context, machine.ir.max_turns,
                                      None, starting_agent=agent)
            result = await drive(_intercept(loop, player))
            while result.interruptions and all(
                    i.call_id in rec.approvals for i in result.interruptions):
                # the recorded run asked a human here too: decide as the human did, each
                # call it went on to answer (one it never answered, it is paused at)
                player.asked.update(i.call_id for i in result.interruptions)
                answered = [i for i in result.interruptions if i.call_id in rec.outputs]
                if not answered:
                    break
                state = result.to_state()
                for item in answered:
                    text = rec.outputs.get(item.call_id, ("",))[0]
                    approved, message = rec.decisions.get(item.call_id,
                                                          (text != REJECTED, None))
                    if approved:
                        state.approve(item)
                    else:
                        state.reject(item, message=message)
                loop = machine._start(state, player, context, state.max_turns, None)
                result = await drive(_intercept(loop, player))
        except _Stop as stop:
            return stop.divergence
        except MaxTurnsExceeded as exc:
            return _at(player, "RP104", f"{exc}")
        except GuardrailTripwireTriggered as exc:
            return _at(player, "RP106", f"{type(exc).__name__}: {exc}")
        except ModelBehaviorError as exc:
            text = str(exc)
            code = "RP107" if "parsing model output" in text else "RP111"
            said = text.partition("parsing model output")[2]
            if code == "RP107" and "(got " in said and "Invalid JSON:" not in said:
                # fields rejected (one "(got …)" each); the SDK's wording says JSON for
                # both, but here the JSON was fine
                text = text.replace("Invalid JSON when parsing model output",
                                    "the output type rejects the recorded output", 1)
            return _at(player, code, _one_line(text))
        except Exception as exc:
            return _at(player, "RP111", f"{type(exc).__name__}: {exc}")
        if result.interruptions and not _paused_as_recorded(result.interruptions, rec):
            pending = result.interruptions[0]
            return player.divergence_at(
                "RP105", pending.call_id, f"call {pending.call_id!r} of {pending.name!r} now "
                "waits for approval; the recorded run ran it", pending.agent)
        if player.pos < len(player.turns):
            nxt = player.next_turn()
            assert nxt is not None
            if flow:
                return Divergence("RP112", f"the flow now ends after turn {player.turn_no}; "
                                  f"the recording goes on with agent {nxt.agent!r}",
                                  player.turn_no + 1, nxt.where[0], nxt.agent)
            return Divergence("RP109", f"the run now ends after turn {player.turn_no}; the "
                              f"recording goes on with {len(player.turns) - player.pos} more",
                              player.turn_no + 1, nxt.where[0], result.last_agent)
        results.append(result)
        turn_no = player.turn_no
        history = list(result.to_input_list())
        agent = result.last_agent
    return None


def _one_line(text: str) -> str:
    """A validation error's lines as one (a divergence is one line of a report): the
    field and what is wrong with it, without pydantic's links to its documentation."""
    pieces: list[str] = []
    for row in text.splitlines():
        bare = row.strip()
        if not bare or bare.startswith("For further information"):
            continue
        if row[:1].isspace() and pieces:  # what is wrong with the field above it
            pieces[-1] += f": {bare}"
        else:
            pieces.append(bare)
    return "; ".join(pieces)


def _paused_as_recorded(waiting: Sequence[Any], rec: Recording) -> bool:
    """The replayed run waits on calls the recorded run asked a human about and never
    answered: the recording (a paused state) stopped at the same calls."""
    return all(i.call_id in rec.approvals and i.call_id not in rec.outputs for i in waiting)


def _at(player: _Player, code: str, message: str) -> Divergence:
    last = player.last
    ahead = player.next_turn()
    if last is None and ahead is not None:  # before the turn's response
        return Divergence(code, message, player.turn_no + 1, ahead.where[0], ahead.agent)
    where = last.where[-1] if last is not None else "start"
    return Divergence(code, message, max(player.turn_no, 1), where,
                      last.agent if last is not None else None)
