"""The one pump every driver shares: it performs a run loop's effects on asyncio.

:mod:`~stepswitch.runtime.effects` says what the loop asks for; this module does it.
It is the runtime's only import of :mod:`asyncio` (with the drivers in
:mod:`~stepswitch.runtime.machine`, which import this on first use), so importing a
generated runner does not load asyncio and its dependencies (ssl, sockets, logging,
subprocess, concurrent.futures): about a fifth of a runner's cold start, which the
first ``run_sync`` pays instead (``await machine.run(...)`` is called from code that
has an event loop, so asyncio is there already).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Generator,
    Iterator,
    Sequence,
    Sized,
)
from typing import Any

from stepswitch.errors import ModelBehaviorError, RunTimeoutError, ToolTimeoutError
from stepswitch.runtime._quick import quick_maker
from stepswitch.runtime.effects import (
    Await,
    CallJob,
    CallModel,
    Effect,
    Emit,
    Err,
    Job,
    NestedJob,
    Ok,
    Outcome,
    RunJobs,
)
from stepswitch.runtime.events import (
    AgentUpdated,
    AgentUpdatedStreamEvent,
    FlowNodeStreamEvent,
    RawResponsesStreamEvent,
    RunItemStreamEvent,
    StreamEvent,
    item_event_name,
)
from stepswitch.runtime.model import ModelResponse, ResponseCompleted
from stepswitch.runtime.relay import Relay

__all__ = ["Pump", "discard", "drive", "perform", "settle", "start_alongside"]


class Pump:
    """Drives one run-loop generator to its end: the one pump every driver shares.

    ``events()`` sends each effect's outcome back into the loop (or throws its error
    in), performs the effects, and yields stream events when ``stream`` is set: the
    loop's ``Emit`` effects as item and agent events, and a streaming model's raw
    events. Without ``stream`` it yields nothing, and ``Emit`` costs one type check.
    When it ends, however it ends (the loop returned or raised, or the consumer of a
    stream stopped early), the loop generator is closed, so its ``finally`` blocks run
    now rather than whenever the garbage collector finds it. ``result`` holds what the
    loop returned.
    """

    __slots__ = ("deadline", "done", "loop", "result", "stream", "timeout")

    def __init__(
        self, loop: Generator[Any, Any, Any], *, stream: bool = False,
        timeout: float | None = None,
    ) -> None:
        self.loop = loop
        self.stream = stream
        self.result: Any = None
        self.done = False
        self.timeout = timeout
        """``RunConfig.timeout``: every effect is awaited within it (never a yield to the
        consumer of a stream, which is not the run's to bound)."""
        self.deadline: float | None = None

    async def _in_time(self, awaitable: Awaitable[Any]) -> Any:
        if self.deadline is None:
            return await awaitable
        async with asyncio.timeout_at(self.deadline):
            return await awaitable

    def _expired(self) -> bool:
        return (
            self.deadline is not None
            and asyncio.get_running_loop().time() >= self.deadline
        )

    async def events(self) -> AsyncGenerator[StreamEvent, None]:
        relay = Relay(self.loop)
        step = relay.step
        stream = self.stream
        send: Any = None
        error: BaseException | None = None
        running = asyncio.get_running_loop()
        if self.timeout is not None:
            self.deadline = running.time() + self.timeout
        in_time = self._in_time
        here = id(running)
        _LIVE[here] = _LIVE.get(here, 0) + 1
        try:
            while True:
                effect = step(send, error)
                if effect is None:
                    self.result = relay.result
                    self.done = True
                    return
                error = None
                send = None
                kind = type(effect)
                if kind is Emit:
                    if stream:
                        for event in _stream_events(effect):
                            yield event
                    continue
                guards: Sequence[asyncio.Future[Any]] = ()
                try:
                    # the two effects of every turn, performed inline (no extra coroutine)
                    if kind is CallModel and stream and hasattr(effect.model, "stream_response"):
                        guards = start_alongside(effect.alongside)
                        response: ModelResponse | None = None
                        raws = aiter(effect.model.stream_response(effect.request))
                        while True:
                            try:
                                raw = await in_time(anext(raws))
                            except StopAsyncIteration:
                                break
                            if isinstance(raw, ResponseCompleted):
                                response = raw.response
                            else:
                                yield RawResponsesStreamEvent(raw)
                        outcomes = await in_time(settle(guards))
                        if response is None:
                            raise ModelBehaviorError(
                                f"the model's stream for agent {effect.request.agent!r} ended "
                                "without a completed response"
                            )
                        send = (response, outcomes) if effect.alongside else response
                    elif self.deadline is not None:
                        # the same effects, each awaited within the run's deadline
                        if kind is CallModel and not effect.alongside:
                            send = await in_time(effect.model.get_response(effect.request))
                        else:
                            send = await in_time(perform(effect))
                    elif kind is CallModel and not effect.alongside:
                        send = await effect.model.get_response(effect.request)
                    elif (
                        kind is RunJobs
                        and len(effect.jobs) == 1
                        and type(effect.jobs[0]) is CallJob
                    ):
                        job = effect.jobs[0]
                        if (
                            not job.is_async
                            and job.timeout is None
                            and _LIVE[here] == 1
                            and _alone(running)
                        ):
                            # the only run and the only task on its loop: a sync call
                            # blocks nobody, and calling it here saves the thread hop
                            # (~50 µs, several times the loop's own cost per turn)
                            try:
                                value = job.fn(*job.args, **job.kwargs)
                                if type(value) is not str and inspect.isawaitable(value):
                                    value = await value
                                send = (_ok(value),)
                            except Exception as exc:
                                send = (Err(exc),)
                        else:
                            send = (await _job(job),)
                    else:
                        send = await perform(effect)
                except GeneratorExit:
                    raise
                except BaseException as exc:  # Ctrl-C and cancellation too: the loop keeps
                    error = exc  # the run (as exc.run_data) and raises it again
                    if isinstance(exc, TimeoutError) and self._expired():
                        assert self.timeout is not None
                        error = RunTimeoutError(self.timeout)
                    if guards:  # a failed call leaves no task behind for asyncio to warn of
                        await discard(guards)
        finally:
            left = _LIVE.pop(here) - 1
            if left:
                _LIVE[here] = left
            relay.close()


def _stream_events(effect: Emit) -> Iterator[StreamEvent]:
    event = effect.event
    if type(event) is AgentUpdated:
        yield AgentUpdatedStreamEvent(event.agent)
        return
    if type(event) is FlowNodeStreamEvent:  # a flow moved to a node: passed as is
        yield event
        return
    for item in event:
        name = item_event_name(item)
        if name is not None:
            yield RunItemStreamEvent(name, item)


async def drive(loop: Generator[Any, Any, Any], *, timeout: float | None = None) -> Any:
    """Drive a loop to its end, performing every effect; stream events are dropped.
    ``timeout``: seconds the whole run may take (``RunConfig.timeout``)."""
    pump = Pump(loop, timeout=timeout)
    async for _ in pump.events():
        pass  # never reached: a pump without ``stream`` yields nothing
    return pump.result


async def perform(effect: Effect) -> Any:
    """Perform one effect (not ``Emit``) and return its outcome."""
    if type(effect) is CallModel:
        if not effect.alongside:
            return await effect.model.get_response(effect.request)
        call = asyncio.ensure_future(effect.model.get_response(effect.request))
        outcomes = await settle(start_alongside(effect.alongside))
        response: ModelResponse = await call
        return response, outcomes
    if type(effect) is RunJobs:
        jobs = effect.jobs
        if len(jobs) == 1:
            return (await _job(jobs[0]),)
        sem = asyncio.Semaphore(effect.limit) if effect.limit else None
        tasks = [asyncio.ensure_future(_limited(job, sem)) for job in jobs]
        return tuple(await asyncio.gather(*tasks))
    if type(effect) is Await:
        return await effect.awaitable
    raise TypeError(f"not an effect: {effect!r}")


async def _thunk(t: Callable[[], Any]) -> Any:
    value = t()
    if inspect.isawaitable(value):
        value = await value
    return value


def start_alongside(thunks: tuple[Callable[[], Any], ...]) -> list[asyncio.Future[Any]]:
    """Start the thunks of a ``CallModel`` as tasks."""
    return [asyncio.ensure_future(_thunk(t)) for t in thunks]


async def discard(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Cancel the tasks and wait for them, keeping none of their outcomes: nothing is
    left pending, and no exception is left unretrieved for asyncio to print."""
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


async def settle(tasks: Sequence[asyncio.Future[Any]]) -> tuple[Outcome, ...]:
    """Each task's outcome, in order."""
    out: list[Outcome] = []
    for task in tasks:
        try:
            out.append(Ok(await task))
        except Exception as exc:
            out.append(Err(exc))
    return tuple(out)


def _task_sets() -> tuple[Sized, ...] | None:
    """asyncio's own registries of live tasks (all loops), where this Python has them:
    ``_all_tasks`` (3.11), ``_scheduled_tasks`` and ``_eager_tasks`` (3.12, 3.13)."""
    tasks_module = asyncio.tasks
    names: tuple[str, ...] = ("_scheduled_tasks", "_eager_tasks")
    if not hasattr(tasks_module, names[0]):
        names = ("_all_tasks",)
    # a WeakSet's len() is Python code; the set of references it keeps (``data``)
    # counts in C, and never fewer tasks than are alive (dead ones may linger)
    sets = tuple(getattr(s, "data", s) for s in
                 (getattr(tasks_module, name, None) for name in names))
    if all(hasattr(s, "__len__") for s in sets):
        return sets  # type: ignore[return-value]
    return None


_TASK_SETS = _task_sets()


def _alone(running: asyncio.AbstractEventLoop) -> bool:
    """Whether the current task is the only unfinished task on ``running``.

    ``asyncio.all_tasks`` answers by iterating a weak set (about 3 µs, the largest
    single cost of a tool turn); asyncio's registries hold every task of every loop,
    so when they hold just one, it is the current task, and the answer is yes without
    iterating. Otherwise (other tasks, other loops, tasks not yet collected, or a
    Python without these registries) the exact count decides."""
    sets = _TASK_SETS
    if sets is not None:
        count = 0
        for tasks in sets:
            count += len(tasks)
        if count == 1:
            return True
    return len(asyncio.all_tasks(running)) == 1


_ok = quick_maker(Ok)  # a sync tool's outcome, every turn, without the class's call

_LIVE: dict[int, int] = {}
"""Pumps (top and nested runs) driving a run now, by ``id`` of their event loop."""


async def _limited(job: Job, sem: asyncio.Semaphore | None) -> Outcome:
    if sem is None:
        return await _job(job)
    async with sem:
        return await _job(job)


async def _job(job: Job) -> Outcome:
    try:
        if type(job) is NestedJob:
            return Ok(await drive(job.loop))
        assert type(job) is CallJob
        if job.timeout is None:
            return Ok(await _call(job))
        timer = asyncio.timeout(job.timeout)
        try:
            async with timer:
                return Ok(await _call(job))
        except TimeoutError:
            if not timer.expired():
                raise  # the tool's own TimeoutError
            return Err(ToolTimeoutError(job.name, job.timeout))
    except Exception as exc:
        return Err(exc)


async def _call(job: CallJob) -> Any:
    """Call a function tool: awaited when async, in a worker thread when not (so it
    cannot block the other runs on the event loop; see ``Pump`` for the one exception)."""
    if job.is_async:
        return await job.fn(*job.args, **job.kwargs)
    value = await asyncio.to_thread(job.fn, *job.args, **job.kwargs)
    if type(value) is not str and inspect.isawaitable(value):
        value = await value
    return value
