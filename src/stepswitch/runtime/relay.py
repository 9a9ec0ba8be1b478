"""The relay: how every driver steps a run loop's generator, written once.

A run loop (:func:`~stepswitch.runtime.loop.run_loop`, a flow's
:func:`~stepswitch.runtime.flow.flow_loop`, or a wrapper of either) yields effects and
receives their outcomes. Each driver, the :class:`~stepswitch.runtime.pump.Pump`, the
tracing and conversation wrappers and the Temporal workflow, does the same three things
with it: send the last effect's outcome in (or throw its error in), take the next
effect until the loop returns, and close the loop however the driver ends, so the
loop's ``finally`` blocks run now rather than whenever the garbage collector finds it.
:class:`Relay` is those three things; a driver adds only what it does with an effect::

    with Relay(loop) as relay:
        outcome, error = None, None
        while (effect := relay.step(outcome, error)) is not None:
            outcome, error = perform(effect), None   # or: error = exc
        return relay.result
"""

from __future__ import annotations

from collections.abc import Generator
from types import TracebackType
from typing import Any

__all__ = ["Relay"]


class Relay:
    """One run loop's generator, stepped by a driver.

    :meth:`step` sends an outcome in (or throws an error in) and returns the loop's next
    effect, or ``None`` once the loop has returned; ``result`` then holds what it
    returned. An exception the loop raises passes through :meth:`step` as it is. As a
    context manager the relay closes the loop on the way out, however the ``with``
    block ends (closing a loop that has finished does nothing).
    """

    __slots__ = ("loop", "result")

    def __init__(self, loop: Generator[Any, Any, Any]) -> None:
        self.loop = loop
        self.result: Any = None
        """What the loop returned (set when :meth:`step` returns ``None``)."""

    def step(self, outcome: Any = None, error: BaseException | None = None) -> Any:
        """The loop's next effect after it receives ``outcome`` (or, when ``error`` is
        set, after ``error`` is raised where the loop waits); ``None`` when the loop
        returned instead. A loop never yields ``None``: every effect is an object."""
        try:
            if error is None:
                return self.loop.send(outcome)
            return self.loop.throw(error)
        except StopIteration as stop:
            # the value is kept and the handler left at once: a driver that does more
            # at the end does it outside this clause, so nothing it raises chains the
            # StopIteration (whose value is the whole result) into its traceback
            self.result = stop.value
            return None

    def close(self) -> None:
        """Close the loop now: its ``finally`` blocks run (a finished loop: nothing)."""
        self.loop.close()

    def __enter__(self) -> Relay:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.loop.close()
