"""SIGTERM and SIGHUP during ``stepswitch run``: stopped as Ctrl-C stops it, with the run
so far saved (exit 128 + the signal's number)."""

from __future__ import annotations

import asyncio
import signal
import threading
from typing import Any

__all__ = ["Stop"]

class Stop:
    """SIGTERM and SIGHUP (what docker, systemd, kubernetes and ``timeout`` send) stop a
    run as Ctrl-C does under ``asyncio.run``: the first cancels the run's task, so the
    run so far is saved on the way out; a second one raises ``KeyboardInterrupt`` where
    the process is (a tool that does not give way)."""

    SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))

    def __init__(self) -> None:
        self.signum: int | None = None
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> Stop:
        if threading.current_thread() is threading.main_thread():  # signal.signal's rule
            for sig in self.SIGNALS:
                self._old[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            if old is not None:  # None: a handler set outside Python, not restorable
                signal.signal(sig, old)

    def attach(self) -> None:
        """Stop the current task (the run's driver) on the first signal."""
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()

    def _on_signal(self, signum: int, frame: object) -> None:
        first = self.signum is None
        self.signum = signum
        task, loop = self._task, self._loop
        if first and task is not None and loop is not None and not task.done():
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake a loop asleep in select()
            return
        raise KeyboardInterrupt
