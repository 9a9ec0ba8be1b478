"""Function TARGETs: ``app.py:main``, ``app.py:build_agent``, ``package.module:factory``.

Most SDK apps build their agents inside ``main()`` and run them there. stepswitch reads
such an app by calling the function with every run entry point replaced: the SDK's
``Runner.run`` / ``run_sync`` / ``run_streamed`` (and ``AgentRunner``'s) and stepswitch's
``StateMachine.run*``. The first run the function starts is stopped at its first line,
before any model call, and what it was asked to run is the app; a function that returns
an agent or a workflow without running it gives that instead.

The call is fenced: standard input is closed (a function that waits for a user's line is
told so, not left hanging), what it prints goes to stderr, and it runs in a worker thread
for at most :data:`TIMEOUT` seconds (``STEPSWITCH_TARGET_TIMEOUT`` overrides).

Why replace rather than trace: a profile or trace hook would see the call, but could not
stop it before the SDK's own code ran (the SDK opens a trace and may call a model before
any frame of ours is entered). Replacing the entry points stops it at the door. The
replacements are delegating wrappers that act only inside a capture (a context
variable), so a thread that outlives its timeout still stops at a run instead of making
a real model call; they are removed when no capture is left running. Not API.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import os
import sys
import sysconfig
import threading
import traceback
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch._site import PACKAGE_DIR, def_line, display_path
from stepswitch.errors import TargetError

__all__ = ["TIMEOUT", "Reached", "call_target", "timeout_seconds"]

TIMEOUT = 10.0
"""Seconds a function TARGET may take to reach a run (or return)."""


def timeout_seconds() -> float:
    """:data:`TIMEOUT`, or the positive number ``STEPSWITCH_TARGET_TIMEOUT`` gives."""
    text = os.environ.get("STEPSWITCH_TARGET_TIMEOUT", "")
    if not text:
        return TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise TargetError(f"STEPSWITCH_TARGET_TIMEOUT={text!r}: expected a positive number "
                          "of seconds")
    return value


@dataclass(frozen=True, slots=True)
class Reached:
    """What a function TARGET gave: the object it returned or first tried to run."""

    app: Any
    """An SDK agent, a stepswitch ``Workflow``, or what the function returned."""
    how: str
    """``"returned"``, or the entry point it called (``"Runner.run_sync"``)."""
    where: str = ""
    """``file:line`` of the user's call of that entry point ("" when returned)."""
    input: Any = None
    """The run's input, when a run was reached."""
    options: tuple[tuple[str, Any], ...] = ()
    """The run's keyword arguments as given (``max_turns``, ``context``, ``session``...)."""
    source: str = ""
    """The file the function is defined in (its agents' declarations are there)."""


class _Stop(BaseException):
    """Raised inside the user's function to end it: not an ``Exception``, so an
    ``except Exception`` of theirs does not swallow it."""


class _RunReached(_Stop):
    def __init__(self, reached: Reached) -> None:
        super().__init__(reached.how)
        self.reached = reached


class _ReadsInput(_Stop):
    pass


@dataclass(slots=True)
class _Capture:
    label: str
    compiled: dict[int, tuple[Any, Any]]
    """id(machine) -> (the machine, kept alive; the Workflow whose ``compile()`` made
    it), during this call."""


_CAPTURE: contextvars.ContextVar[_Capture | None] = contextvars.ContextVar(
    "stepswitch_target_capture", default=None
)
_lock = threading.Lock()
_live = 0  # captures running (a timed-out one stays live while its thread does)
_saved: list[tuple[type, str, Any]] = []  # (class, attribute, what it held) to restore


def call_target(fn: Callable[..., Any], shown: str, *, timeout: float | None = None) -> Reached:
    """Call ``fn`` (no arguments) as a function TARGET named ``shown`` and return what it
    gave. Every way it can fail is a :class:`TargetError` of one located line."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    at = _def_site(fn)
    who = f"{shown}: {name}() ({at})" if at else f"{shown}: {name}()"
    _refuse_parameters(fn, who)
    limit = timeout_seconds() if timeout is None else timeout
    capture = _Capture(shown, {})
    outcome: list[Any] = []  # ("ok", value) | ("reached", Reached) | ("error", exc)

    def body() -> None:
        try:
            value = fn()
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
            outcome.append(("ok", value))
        except _RunReached as stop:
            outcome.append(("reached", stop.reached))
        except BaseException as exc:  # everything else is theirs to hear about
            outcome.append(("error", exc))

    context = contextvars.copy_context()
    context.run(_CAPTURE.set, capture)
    worker = threading.Thread(target=context.run, args=(body,), daemon=True,
                              name=f"stepswitch-target {shown}")
    _begin()
    finished = False
    try:
        with _fenced():
            worker.start()
            worker.join(limit)
            finished = not worker.is_alive()
            if not finished:
                where = _stuck_at(worker)
                raise TargetError(
                    f"{who}: did not reach a run or return within {limit:g} s"
                    f"{f' (it was at {where})' if where else ''}; a function TARGET must "
                    "build its agents and run (or return) them without waiting: move slow "
                    "work out of it, or raise STEPSWITCH_TARGET_TIMEOUT"
                )
    finally:
        _end(finished)
    kind, value = outcome[0]
    source = _def_file(fn)
    if kind == "reached":
        return _resolved(value, capture, who, source)
    if kind == "error":
        raise TargetError(_failure(value, who)) from None
    return Reached(_resolved_machine(value, capture, who), "returned", source=source)


async def _awaited(value: Any) -> Any:
    return await value


def _def_site(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    return f"{display_path(code.co_filename)}:{def_line(code)}"


def _refuse_parameters(fn: Callable[..., Any], who: str) -> None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    needed = [p.name for p in signature.parameters.values()
              if p.default is inspect.Parameter.empty
              and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    if needed:
        raise TargetError(
            f"{who}: takes {', '.join(needed)}, but a function TARGET is called with no "
            "arguments: give them defaults, or name a function that takes none"
        )


def _def_file(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    return code.co_filename if code is not None else ""


def _resolved(reached: Reached, capture: _Capture, who: str, source: str) -> Reached:
    app = _resolved_machine(reached.app, capture, who, reached.how, reached.where)
    return Reached(app, reached.how, reached.where, reached.input, reached.options, source)


def _resolved_machine(app: Any, capture: _Capture, who: str, how: str = "returned",
                      where: str = "") -> Any:
    """A ``StateMachine`` becomes the Workflow the function compiled it from."""
    from stepswitch.runtime.machine import StateMachine

    if not isinstance(app, StateMachine):
        return app
    made = capture.compiled.get(id(app))
    if made is not None:
        return made[1]
    verb = "returned" if how == "returned" else f"ran ({how} at {where})"
    raise TargetError(
        f"{who}: {verb} a compiled StateMachine {app.name!r} that it did not compile from a "
        "Workflow itself (a generated runner, or a machine made elsewhere): name the "
        "Workflow instead (FILE.py:NAME)"
    )


def _failure(exc: BaseException, who: str) -> str:
    where = _user_site(exc.__traceback__)
    at = f" at {where}" if where else ""
    if isinstance(exc, _ReadsInput):
        return (f"{who}: reads standard input{at}, which is closed while stepswitch calls a "
                "function TARGET; build the agents in a function that does not ask for "
                "input (the input is the run's, not the app's) and name that")
    if isinstance(exc, SystemExit):
        return (f"{who}: exited (SystemExit({exc.code!r})){at} before it ran an agent; a "
                "function TARGET must build its agents and run or return them")
    if isinstance(exc, KeyboardInterrupt):
        return f"{who}: interrupted{at}"
    return (f"{who}: raised {_type_and_text(exc)}{at} before it ran an agent (in your code, "
            "not in stepswitch)")


def _type_and_text(exc: BaseException) -> str:
    try:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    except Exception:  # its __str__ raised
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_LIBRARY_DIRS = tuple(
    os.path.realpath(p) + os.sep
    for key in ("stdlib", "platstdlib", "purelib", "platlib")
    if (p := sysconfig.get_paths().get(key))
)


def _is_user_file(filename: str) -> bool:
    if filename.startswith(PACKAGE_DIR) or filename.startswith("<"):
        return False
    return not os.path.realpath(filename).startswith(_LIBRARY_DIRS)


def _user_site(tb: TracebackType | None) -> str:
    frames = [f for f in traceback.extract_tb(tb) if _is_user_file(f.filename)]
    return f"{display_path(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""


def _caller_site() -> str:
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and not _is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return "" if frame is None else f"{display_path(frame.f_code.co_filename)}:{frame.f_lineno}"


def _stuck_at(worker: threading.Thread) -> str:
    frame = sys._current_frames().get(worker.ident or -1)
    innermost = ""
    while frame is not None:
        if _is_user_file(frame.f_code.co_filename) and not innermost:
            innermost = f"{display_path(frame.f_code.co_filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return innermost


# -- the fence: stdin closed, stdout to stderr ----------------------------------------------


class _ClosedInput:
    """Standard input while a function TARGET runs: any read stops the function."""

    closed = False
    encoding = "utf-8"

    def _refuse(self, *_: Any) -> Any:
        raise _ReadsInput("standard input")

    read = readline = readlines = _refuse

    def __iter__(self) -> Iterator[str]:
        self._refuse()
        return iter(())

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError("standard input is closed while stepswitch calls a function TARGET")


@contextlib.contextmanager
def _fenced() -> Iterator[None]:
    stdin = sys.stdin
    sys.stdin = _ClosedInput()  # type: ignore[assignment,unused-ignore]
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdin = stdin


# -- the entry points, replaced while a capture runs ---------------------------------------


def _begin() -> None:
    global _live
    with _lock:
        if _live == 0 and not _saved:
            _install()
        _live += 1


def _end(finished: bool) -> None:
    """One capture is over; ``finished`` is False when its thread still runs (then it
    keeps the replacements in place, so that thread can never reach a real run)."""
    global _live
    with _lock:
        if not finished:
            return
        _live -= 1
        if _live == 0:
            for cls, attr, original in reversed(_saved):
                setattr(cls, attr, original)
            _saved.clear()


def _install() -> None:
    from stepswitch.dsl.workflow import Workflow
    from stepswitch.runtime.machine import StateMachine

    for attr in ("run", "run_sync", "run_streamed"):
        _replace(StateMachine, attr, _machine_entry(attr))
    _replace(Workflow, "compile", _recording_compile)
    sdk_run = sys.modules.get("agents.run")
    if sdk_run is None and "agents" in sys.modules:
        import agents.run as sdk_run
    if sdk_run is not None:
        for attr in ("run", "run_sync", "run_streamed"):
            _replace(sdk_run.Runner, attr, _sdk_entry(f"Runner.{attr}", classmethod_=True))
            _replace(sdk_run.AgentRunner, attr, _sdk_entry(f"AgentRunner.{attr}",
                                                           classmethod_=False))


def _replace(cls: type, attr: str, make: Callable[[Any], Any]) -> None:
    original = inspect.getattr_static(cls, attr)
    _saved.append((cls, attr, original))
    setattr(cls, attr, make(original))


def _stop(app: Any, how: str, input: Any, options: dict[str, Any]) -> _RunReached:
    return _RunReached(Reached(app, how, _caller_site(), input, tuple(options.items())))


def _sdk_entry(how: str, *, classmethod_: bool) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        plain = original.__func__ if isinstance(original, classmethod) else original

        @functools.wraps(plain)
        def entry(owner: Any, starting_agent: Any = None, input: Any = None,
                  *args: Any, **kwargs: Any) -> Any:
            if _CAPTURE.get() is None:
                return plain(owner, starting_agent, input, *args, **kwargs)
            raise _stop(starting_agent, how, input, kwargs)

        return classmethod(entry) if classmethod_ else entry

    return make


def _machine_entry(attr: str) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        @functools.wraps(original)
        def entry(self: Any, input: Any = None, *args: Any, **kwargs: Any) -> Any:
            if _CAPTURE.get() is None:
                return original(self, input, *args, **kwargs)
            raise _stop(self, f"StateMachine.{attr}", input, kwargs)

        return entry

    return make


def _recording_compile(original: Any) -> Any:
    @functools.wraps(original)
    def compile(self: Any) -> Any:
        machine = original(self)
        capture = _CAPTURE.get()
        if capture is not None:
            capture.compiled[id(machine)] = (machine, self)
        return machine

    return compile
