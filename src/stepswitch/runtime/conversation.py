"""Runs with a session: read the conversation, continue at its agent, append each
settled turn once.

Like tracing, this wraps the one loop generator and no driver holds any of it. The
wrapper knows a turn has settled when the loop asks for the next model call (every
item before it is settled) or ends without an interruption; it then appends the
items made since the last append (the run's input goes with the first) under the
operation id ``<run id>:t<turn>``, expecting the version it last saw. So a stored
conversation never holds an unanswered call, and two overlapping runs never
interleave: the second to append gets ``SessionConflict`` (or, with
``RunConfig(on_conflict="reload")``, appends its turn whole after the other's).

Resuming a ``RunState`` taken with a session first re-sends an unacknowledged append
(the same operation id: a no-op if it had committed), then *claims* the session: an
empty append, under a fresh id, expecting the pinned version. Only one resume of a
state can win that claim, so a second resume of the same state is
``SessionConflict`` before any approved tool could run again.

The session is duck-typed (``load`` and ``append`` coroutines), so the runtime loads
nothing of ``stepswitch.sessions``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Generator
from dataclasses import replace
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.errors import MaxTurnsExceeded, SessionConflict, SessionError, StateError, UserError
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.core import MachineCore
from stepswitch.runtime.effects import Await, CallModel
from stepswitch.runtime.model import InputItem, ModelResponse
from stepswitch.runtime.relay import Relay
from stepswitch.runtime.result import RunErrorDetails, RunResult
from stepswitch.runtime.run import Run, visible
from stepswitch.runtime.state import PendingAppend, PendingTurn, RunState, SessionPin

__all__ = ["SessionLink", "check_session", "resume", "start"]

Loop = Generator[Any, Any, Any]

_RELOADS = 5


def check_session(session: Any) -> str:
    """The session's id; ``UserError`` when ``session`` is not a session."""
    for name in ("load", "append"):
        if not callable(getattr(session, name, None)):
            raise UserError(
                f"session: expected a stepswitch session (load() and append(); see "
                f"stepswitch.sessions), got {type(session).__name__} without {name}(); wrap "
                "an SDK session with stepswitch.sessions.from_sdk_session"
            )
    session_id = getattr(session, "session_id", None)
    if not isinstance(session_id, str):
        raise UserError(f"session: {type(session).__name__} has no string session_id")
    return session_id


@dataclass(slots=True)
class SessionLink:
    """What a run knows of its session (mutable; its frozen form is a ``SessionPin``)."""

    session: Any
    session_id: str
    version: int
    synced: int
    input_saved: bool
    pending: PendingAppend | None = None

    def pin(self) -> SessionPin:
        return SessionPin(self.session_id, self.version, self.synced, self.input_saved,
                          self.pending)


def start(
    core: MachineCore,
    session: Any,
    make_run: Callable[[str], Run],
    make_loop: Callable[[Run], Loop],
    config: RunConfig,
    starting_agent: str | None,
) -> Loop:
    """A new run on ``session``: load it, then run at its current agent."""
    session_id = check_session(session)
    snap = yield Await(session.load())
    agent = starting_agent or snap.current_agent or core.ir.entry
    if agent not in core.states:
        raise StateError(
            f"session {session_id!r} continues at agent {agent!r}, which workflow "
            f"{core.ir.name!r} does not have",
            hint="pass starting_agent= to start elsewhere",
        )
    run = make_run(agent)
    run.history = [*snap.items, *run.input]
    run.history_filtered = True
    run.history_from = 0
    link = SessionLink(session, session_id, snap.version, 0, False)
    run.session = link
    return (yield from _synced(make_loop(run), run, link, config))


def resume(
    run: Run,
    state: RunState,
    session: Any,
    make_loop: Callable[[Run], Loop],
    config: RunConfig,
) -> Loop:
    """Resume a state taken with ``session``: re-send, claim, then run on. A state of
    another session is refused here, before the run takes it (it stays resumable)."""
    session_id = check_session(session)
    pin = state.session
    if pin is None:
        raise UserError(
            "this state was not taken with a session; resume it without session= (a "
            "session joins a run when the run starts)"
        )
    if pin.session_id != session_id:
        raise UserError(
            f"this state belongs to session {pin.session_id!r}, not {session_id!r}"
        )
    return _resumed(run, session, session_id, pin, make_loop, config)


def _resumed(
    run: Run,
    session: Any,
    session_id: str,
    pin: SessionPin,
    make_loop: Callable[[Run], Loop],
    config: RunConfig,
) -> Loop:
    link = SessionLink(session, session_id, pin.version, pin.synced, pin.input_saved)
    run.session = link
    if pin.pending is not None:
        yield from _send(run, link, config, pin.pending, reload=False)
    claim = f"{run.run_id}:t{run.turn}:resume:{uuid.uuid4().hex}"
    try:
        link.version = yield Await(session.append(
            [], operation_id=claim, expected_version=link.version, current_agent=None
        ))
    except SessionConflict as exc:
        if exc.found == 0 and link.version > 0:  # nothing here: another store, not a race
            raise SessionError(
                f"session {session_id!r} holds nothing in this store (version 0), but the "
                f"state was taken at its version {link.version}: resume it with the store "
                "the run was taken with (the same --session URL, from the same folder for "
                "a relative sqlite:/// path)",
                run_data=run.error_details(),
            ) from None
        raise SessionConflict(
            f"session {session_id!r} moved on since this state was taken (it was resumed "
            f"already, or another run wrote to the session): {exc.summary}",
            run_data=run.error_details(),
        ) from None
    except SessionError as exc:
        exc.run_data = run.error_details()
        raise
    return (yield from _synced(make_loop(run), run, link, config))


def _synced(inner: Loop, run: Run, link: SessionLink, config: RunConfig) -> Loop:
    """Pump ``inner``, appending the settled items at each turn boundary; however this
    ends, the loop is closed (its own cleanup runs now)."""
    with Relay(inner) as relay:
        send: Any = None
        error: BaseException | None = None
        turn_start = len(run.items)
        last: ModelResponse | None = None
        agent = run.current
        while True:
            try:
                effect = relay.step(send, error)
            except MaxTurnsExceeded:
                yield from _sync(run, link, config, f"{run.run_id}:t{run.turn}", None)
                raise
            if effect is None:
                result: RunResult = relay.result
                if not result.interruptions:
                    final = None
                    if last is not None:
                        final = PendingTurn(agent, tuple(last.output), turn_start)
                    yield from _sync(run, link, config, f"{run.run_id}:t{run.turn}", final)
                return result
            send, error = None, None
            is_call = type(effect) is CallModel
            if is_call:
                yield from _sync(run, link, config, f"{run.run_id}:t{run.turn - 1}", None,
                                 at_call=True)
                turn_start, agent = len(run.items), run.current
            try:
                send = yield effect
            except Exception as exc:
                error = exc
                continue
            if is_call:
                last = send[0] if type(send) is tuple else send


def _sync(
    run: Run, link: SessionLink, config: RunConfig, operation_id: str,
    final: PendingTurn | None, *, at_call: bool = False,
) -> Generator[Any, Any, None]:
    items: list[InputItem] = [i for i in run.items[link.synced:] if visible(i)]
    if not items:  # nothing settled since the last append (the input waits for a turn)
        link.synced = len(run.items)
        return
    if not link.input_saved:
        items[:0] = run.input
    pending = PendingAppend(operation_id, tuple(items), link.version, run.current,
                            len(run.items))
    yield from _send(run, link, config, pending, reload=config.on_conflict == "reload",
                     final=final, at_call=at_call)


def _send(
    run: Run, link: SessionLink, config: RunConfig, pending: PendingAppend, *,
    reload: bool, final: PendingTurn | None = None, at_call: bool = False,
) -> Generator[Any, Any, None]:
    session = link.session
    link.pending = pending
    for attempt in range(_RELOADS + 1):
        try:
            version = yield Await(session.append(
                list(pending.items), operation_id=pending.operation_id,
                expected_version=pending.expected_version, current_agent=pending.current_agent,
            ))
            break
        except SessionConflict as exc:
            if not reload or attempt == _RELOADS:
                link.pending = None
                exc.run_data = _details(run, final, at_call)
                raise
        except SessionError as exc:
            link.pending = None
            exc.run_data = _details(run, final, at_call)
            raise
        except Exception as exc:
            # Unknown outcome (it may have committed): the state keeps the append.
            raise SessionError(
                f"session {link.session_id!r}: appending {pending.operation_id!r} failed "
                f"({type(exc).__name__}: {exc})",
                hint="resume exc.run_data.to_state() with the session to send it again (a "
                "no-op if it had committed)",
                run_data=_details(run, final, at_call),
            ) from exc
        snap = yield Await(session.load(limit=0))
        pending = replace(pending, expected_version=snap.version)
        link.pending = pending
    link.version = version
    link.synced = pending.synced
    link.input_saved = True
    link.pending = None


def _details(run: Run, final: PendingTurn | None, at_call: bool) -> RunErrorDetails:
    """The run so far. Its state re-settles a finished run's last turn on resume
    instead of asking the model again; stopped before a model call, it does not count
    that call (the loop counts a turn just before asking)."""
    details = run.error_details()
    if final is not None:
        details._state = lambda: run.snapshot(pending=final, status="interrupted")
    elif at_call:
        def state() -> RunState:
            snap = run.snapshot(pending=None, status="stopped")
            snap.current_turn = max(0, snap.current_turn - 1)
            return snap

        details._state = state
    return details
