"""``stepswitch run TARGET --input TEXT``: run a workflow against a real model (or a
scripted transcript), showing progress as it happens.

Exit codes: 0 the run finished, or paused with its state saved to ``--state``;
1 the run failed (the model misbehaved or refused, its server failed, a run limit
hit) or paused with nowhere to save its state; 2 a usage, target, key, file or state error;
130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (each saves the run so far, as far as it got).
Progress (agent switches, tool calls, handoffs) goes to stderr, the final output to
stdout, so ``stepswitch run ... > answer.txt`` keeps only the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import shlex
import signal
import sys
import sysconfig
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeGuard

from pydantic import BaseModel

from stepswitch._files import FileRefused, read_regular
from stepswitch._site import PACKAGE_DIR
from stepswitch._visible import visible
from stepswitch.cli._context import build_context
from stepswitch.cli._session import (
    add_session_flags,
    check_resumed_session,
    continue_script,
    load_cli_session,
    refuse_flow,
    session_flags,
)
from stepswitch.cli.targets import TargetError, load_targets, refuse_own_source
from stepswitch.context import Usage
from stepswitch.errors import (
    FlowBudgetExceeded,
    MaxTurnsExceeded,
    ModelBehaviorError,
    ModelProviderError,
    RunLimitError,
    SessionConflict,
    SessionError,
    StateError,
    StepswitchError,
    UserError,
)
from stepswitch.runtime.approvals import owner_of
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.events import (
    AgentUpdatedStreamEvent,
    FlowNodeStreamEvent,
    RawResponsesStreamEvent,
    RunItemStreamEvent,
)
from stepswitch.runtime.items import (
    HandoffOutputItem,
    MessageOutputItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from stepswitch.runtime.model import Model, ModelRequest, ModelResponse
from stepswitch.runtime.state import RunState

if TYPE_CHECKING:
    from stepswitch.models.provider import TranscriptModel

__all__ = ["add_parser", "run"]

DEFAULT_MODEL = "gpt-4.1"
_SCRIPTED = "scripted:"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="run a workflow against a model; pause for approvals; resume from saved state",
        description="Run a workflow. Progress goes to stderr, the final output to stdout.",
    )
    p.add_argument("target", metavar="TARGET", help="file.py:NAME or package.module:NAME")
    p.add_argument("--input", metavar="TEXT", help="the user's message (required unless --resume)")
    p.add_argument(
        "--model",
        metavar="NAME",
        help=f"model name (default: $STEPSWITCH_MODEL or {DEFAULT_MODEL}), "
        "scripted:FILE.json to replay a scripted transcript, or FILE.py:NAME, a model "
        "object in your code",
    )
    p.add_argument(
        "--base-url", metavar="URL", help="an OpenAI-compatible server (default: $OPENAI_BASE_URL)"
    )
    p.add_argument(
        "--api",
        choices=("responses", "chat"),
        default="responses",
        help="wire API: responses (OpenAI) or chat (most compatible servers)",
    )
    p.add_argument(
        "--state",
        metavar="FILE",
        help="save the run's state here when it pauses, fails or finishes",
    )
    p.add_argument(
        "--resume",
        metavar="FILE",
        help="resume a run from a saved state; the file is rewritten with the run's new state",
    )
    p.add_argument(
        "--approve",
        choices=("ask", "all", "none"),
        help="approvals: ask on the terminal (default on a TTY), all, or none (pause)",
    )
    p.add_argument("--stream", action="store_true", help="stream the model's text as it comes")
    p.add_argument(
        "--trace", metavar="FILE.jsonl",
        help="write the run's OpenTelemetry spans to FILE as JSON lines "
        "(print them with `stepswitch trace FILE`)",
    )
    p.add_argument(
        "--record", metavar="FILE",
        help="write the finished run to FILE for `stepswitch replay`; a FILE named "
        "*.trail.json is a case for `stepswitch test` (the run's outcome as expectations)",
    )
    p.add_argument(
        "--context", metavar="MODULE:FACTORY",
        help="build the run context (ctx.context of tools and guardrails) by calling "
        "FACTORY() (default: the workflow's context_type(), when it takes no arguments)",
    )
    p.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="stop the run once its priced usage passes USD (RunConfig(max_cost_usd=))",
    )
    p.add_argument(
        "--max-turns",
        type=int,
        metavar="N",
        help="model-call budget (default: the workflow's, or the saved run's on --resume)",
    )
    add_session_flags(p, default_help="default: none; the run continues at the session's agent")
    durable = p.add_argument_group("durable runs on Temporal (see docs/durable.md)")
    durable.add_argument("--temporal", metavar="HOST:PORT",
                         help="start the run on this Temporal server (a worker runs it)")
    durable.add_argument("--task-queue", metavar="Q",
                         help="the workers' task queue (default: stepswitch)")
    durable.add_argument("--workflow-id", metavar="ID",
                         help="the run's workflow id; an id of a running run attaches to it")
    durable.add_argument("--worker-wait", type=float, metavar="SECONDS",
                         help="how long to wait for a worker on the task queue (default: 10)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "temporal", None):
        from stepswitch.cli._durable import run_durable

        args.task_queue = "stepswitch" if args.task_queue is None else args.task_queue
        args.worker_wait = 10.0 if args.worker_wait is None else args.worker_wait
        return run_durable(args)
    for flag, value in (("--task-queue", args.task_queue), ("--workflow-id", args.workflow_id),
                        ("--worker-wait", args.worker_wait)):
        if value is not None:
            # without it the run would go on here, in this process, on another model
            raise UserError(f"{flag} is for a durable run: add --temporal HOST:PORT, or drop "
                            f"{flag} to run here")
    if args.resume and args.input is not None:
        raise UserError("--resume continues a saved run; drop --input")
    if not args.resume and args.input is None:
        raise UserError("--input TEXT is required (or --resume FILE to continue a saved run)")
    if args.max_cost is not None and not 0 < args.max_cost < float("inf"):
        raise UserError("--max-cost must be a positive number of US dollars")
    if args.max_turns is not None and args.max_turns < 1:
        raise UserError("--max-turns must be at least 1")
    for path in _save_paths(args):
        _check_state_path(path, "--state" if path == args.state else "--resume")
    # the model layer (openai and the http modules under it) loads before the target's
    # folder goes first on sys.path: an openai.py or http.py there cannot shadow it
    importlib.import_module("stepswitch.models.provider")
    [loaded] = _one_workflow(args.target)
    refuse_own_source(args.state, loaded, flag="--state")
    machine = loaded.workflow.compile()
    args.workflow = loaded.workflow
    if getattr(args, "session", None) is not None:
        refuse_flow(machine, "--session keeps a conversation")
    args.context_object = build_context(args.context, loaded.workflow)
    # a flow of steps only never calls a model: it needs no key, no --model
    model: Model | None = _model(args) if _calls_models(machine) else None
    policy = args.approve or ("ask" if sys.stdin.isatty() else "none")
    start: str | RunState = args.input
    if args.resume:
        start = _read_state(args.resume, machine, args)
        check_resumed_session(start, args.resume, getattr(args, "session", None),
                              getattr(args, "session_id", None))
        if _is_transcript(model):
            # a transcript picks up after the model calls the saved run already made:
            # nested agent-tool runs' and a flow's nodes' too, not only the top run's turns
            model.skip(start.calls_made)
    # opened only once the target, model and saved run are known good: a command that
    # fails on them leaves no session store behind
    scripted_session = getattr(args, "session", None) is not None and _is_transcript(model)
    args.session_object, snap = load_cli_session(
        getattr(args, "session", None), getattr(args, "session_id", None),
        machine=None if args.resume else machine, items=scripted_session,
    )
    if scripted_session:
        continue_script(model, snap, start if isinstance(start, RunState) else None)
    args.run_config = None
    provider = None
    if args.trace:
        from stepswitch.otel import file_provider

        provider = file_provider(args.trace)
        args.run_config = RunConfig(tracer_provider=provider)
    if args.max_cost is not None:
        args.run_config = RunConfig(tracer_provider=provider, max_cost_usd=args.max_cost)
    stop = args.stop = _Stop()
    try:
        with stop:
            return asyncio.run(_drive(machine, start, model, args, policy))
    except (KeyboardInterrupt, asyncio.CancelledError):
        if stop.signum is not None:
            print(f"\nstepswitch: interrupted ({signal.Signals(stop.signum).name})",
                  file=sys.stderr)
            return 128 + stop.signum
        print("\nstepswitch: interrupted", file=sys.stderr)
        return 130
    finally:
        if provider is not None:
            provider.shutdown()


class _Stop:
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

    def __enter__(self) -> _Stop:
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


def _one_workflow(target: str) -> list[Any]:
    found = load_targets([target])
    if len(found) != 1:
        names = ", ".join(w.label for w in found)
        raise TargetError(f"{target}: names {len(found)} workflows ({names}); pick one with :NAME")
    return found


def _flow_edge(args: argparse.Namespace | None, source: str) -> tuple[str, int | None]:
    """Where flow node ``source``'s exit is declared, and its max_uses, for the messages
    of a spent flow budget. The spec (IR has no locations) is built again only then,
    not on every run."""
    edges: dict[str, tuple[str, int | None]] | None = getattr(args, "flow_edges", None)
    if edges is None:
        workflow = getattr(args, "workflow", None)
        flow = workflow.to_spec().flow if workflow is not None else None
        edges = {e.source: (str(e.location), e.max_uses) for e in flow or ()}
        if args is not None:
            args.flow_edges = edges
    return edges.get(source, ("its declaration", None))


def _with_site(exc: StepswitchError, args: argparse.Namespace) -> str:
    """``exc.summary``; for a spent flow budget, with where that edge is declared."""
    if isinstance(exc, FlowBudgetExceeded):
        where, max_uses = _flow_edge(args, exc.source)
        if max_uses is not None:
            return f"{exc.summary} (max_uses={max_uses} at {where})"
    return exc.summary


def _calls_models(machine: Any) -> bool:
    """False for a flow whose nodes are all steps (it makes no model call)."""
    flow = machine.ir.flow
    return flow is None or any(n.kind == "agent" for n in flow.nodes)


def _is_transcript(model: Model | None) -> TypeGuard[TranscriptModel]:
    from stepswitch.models.provider import TranscriptModel

    return isinstance(model, TranscriptModel)


def _model(args: argparse.Namespace) -> Model:
    # imported here: the openai client is slow to import, and other commands never need it
    from stepswitch.models.provider import OpenAIProvider, TranscriptModel

    name = args.model or os.environ.get("STEPSWITCH_MODEL") or DEFAULT_MODEL
    if args.model is not None:
        from stepswitch.cli.worker import user_model

        mine = user_model(args.model)  # FILE.py:NAME, as `stepswitch worker` takes it
        if mine is not None:
            return mine if args.stream else _Unstreamed(mine)
    if name.startswith(_SCRIPTED):
        path = name[len(_SCRIPTED) :]
        if not path:
            raise UserError("--model scripted:FILE.json needs a file name")
        return TranscriptModel.from_file(path)
    base_url = args.base_url or os.environ.get("OPENAI_BASE_URL")
    if base_url and not base_url.startswith(("http://", "https://")):
        where = "--base-url" if args.base_url else "OPENAI_BASE_URL"
        raise UserError(
            f"{where} {base_url!r} is not an http(s) URL; e.g. http://localhost:11434/v1"
        )
    key = os.environ.get("OPENAI_API_KEY")
    if not key and not base_url:
        raise UserError(
            "no OpenAI API key: set OPENAI_API_KEY, or pass --base-url to a server that "
            "needs none, or --model scripted:FILE.json"
        )
    provider = OpenAIProvider(api=args.api, base_url=base_url, api_key=key or "unused")
    model: Model = provider.get_model(name)
    return model if args.stream else _Unstreamed(model)


class _Unstreamed:
    """A model seen without its streaming side: the run calls it once per turn."""

    def __init__(self, model: Model) -> None:
        self._model = model
        # what spans name the model by (see stepswitch.runtime.tracing)
        self.model = getattr(model, "model", None)
        self.provider_name = getattr(model, "provider_name", None)

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        return await self._model.get_response(request)


def _read_state(path: str, machine: Any, args: argparse.Namespace | None = None) -> RunState:
    """The saved run at ``path``, refused unless it is intact and of ``machine``'s workflow.

    Checked here, not only when the run resumes: a state whose calls all await approval
    may pause again before the machine ever sees it.
    """
    try:  # a FIFO or a device is never read, nor a file past the size bound
        text = read_regular(path).decode("utf-8")
    except FileRefused as exc:
        raise UserError(f"--resume {path}: {exc}; name a saved run") from None
    except UnicodeDecodeError:
        raise UserError(f"--resume {path}: not a saved run (not UTF-8 text)") from None
    try:
        state = RunState.from_json(text)
    except StateError as exc:
        raise UserError(f"--resume {path}: {exc}") from None
    if state.workflow != machine.name:
        raise UserError(
            f"--resume {path}: the saved run is of workflow {state.workflow!r}, "
            f"not {machine.name!r}"
        )
    if state.status == "finished":
        raise UserError(
            f"--resume {path}: the saved run already finished (resuming it would run it "
            "again); start a new run with --input"
        )
    if state.resumed:
        raise UserError(f"--resume {path}: {_taken(state)}")
    if state.flow is not None and state.flow.spent is not None:
        source, _, target = state.flow.spent.partition("->")
        where = _flow_edge(args, source)[0]
        raise UserError(
            f"--resume {path}: the saved run stopped when flow edge {source} → "
            f"{target.strip('<>')} had used up its max_uses, and resuming would take it again; "
            f"raise max_uses at {where}, or let the loop end sooner, and start a new run "
            "with --input"
        )
    return state


def _taken(state: RunState) -> str:
    """Why a state saved as its resume began (and never saved again: the process was
    killed) is not resumed: what it was about to run may have run."""
    started = _approved_unanswered(state)
    what = (f"approved call(s) {', '.join(started)} had started and may have run"
            if started else "what it was about to run may have run")
    return (f"a run resumed this saved run and stopped before it could save where it got "
            f"to (killed?): {what}, so it is not run again (at most once); check what it "
            "did, then start a new run with --input")


def _approved_unanswered(state: RunState) -> list[str]:
    """The approved calls of ``state`` (nested runs' included) that have no output yet:
    ``name(arguments) [call id]``."""
    out: list[str] = []
    for item in state.items:
        if not isinstance(item, ToolApprovalItem):
            continue
        owner = owner_of(state, item.run_path)
        if owner is None:
            continue
        decision = owner.decisions.get(item.call_id)
        key = (item.agent, item.name)
        approved = (decision.approved if decision is not None
                    else owner.always.get(key, state.always.get(key, False)))
        answered = any(isinstance(i, ToolCallOutputItem) and i.call_id == item.call_id
                       for i in owner.items)
        if approved and not answered:
            out.append(f"{_call(item)} [{visible(item.call_id)}]")
    return out


def _save_paths(args: argparse.Namespace) -> list[str]:
    """Where the run's state goes: ``--state``, and the ``--resume`` file, which a resumed
    run consumes (rewritten with the new state, so running the command again never
    repeats what this run did)."""
    paths = [p for p in (args.state, args.resume) if p]
    if len(paths) == 2 and Path(paths[0]).absolute() == Path(paths[1]).absolute():
        paths.pop()
    return paths


def _save(args: argparse.Namespace, state: RunState) -> list[str]:
    """Write ``state`` everywhere it goes; the paths written."""
    paths = _save_paths(args)
    for path in paths:
        _write_state(path, state, "--state" if path == args.state else "--resume")
    return paths


def _check_state_path(path: str, flag: str = "--state") -> None:
    """Refuse a ``--state`` the run could not be saved to, before anything runs: a run
    that pauses has already called the model and run tools, and would be lost."""
    target = Path(path).absolute()
    if target.is_dir():
        raise UserError(f"{flag} {path}: is a folder; name a file to save the run to")
    if target.exists() and not target.is_file():  # /dev/stdout, a FIFO: replaced, not written
        raise UserError(f"{flag} {path}: not a regular file; name a file to save the run to")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise UserError(f"{flag} {path}: cannot write there ({folder} is not a writable folder)")


def _write_state(path: str, state: RunState, flag: str = "--state") -> None:
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(state.to_json(indent=2), encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise UserError(f"{flag} {path}: cannot write it: {exc.strerror or exc}") from None
    except StateError as exc:  # text JSON cannot hold exactly (see stepswitch._json.dumps)
        raise UserError(f"{flag} {path}: {exc}") from None


async def _drive(
    machine: Any, start: str | RunState, model: Model | None, args: argparse.Namespace,
    policy: str
) -> int:
    out = _Progress(sys.stderr, stream_text=args.stream)
    stop = getattr(args, "stop", None)
    if stop is not None:
        stop.attach()
    total = Usage()
    next_input: str | RunState = start
    if isinstance(start, RunState):
        pending = start.interruptions
        if pending and not _decide(start, pending, policy, out):
            return _paused(start, pending, args, out)
    while True:
        options: dict[str, Any] = {"model": model}
        if args.context_object is not None:
            options["context"] = args.context_object
        if args.run_config is not None:
            options["run_config"] = args.run_config
        if args.max_turns is not None:  # a resumed run takes a new budget too
            options["max_turns"] = args.max_turns
        if getattr(args, "session_object", None) is not None:
            options["session"] = args.session_object
        streamed = machine.run_streamed(next_input, **options)
        if isinstance(next_input, RunState) and _save_paths(args):
            # saved as taken (state.resumed) before any of its approved calls runs: a
            # process killed from here on leaves a file no resume runs again (at most
            # once); however the run ends, its own state replaces this one
            _save(args, next_input)
        # the decisions just made are said once the run has taken them (its first event,
        # or its end): a resume the runtime refuses (a stale session pin, a tampered
        # state) must not be preceded by "approved …"
        try:
            async for event in streamed.stream_events():
                out.event(event)
        except (RunLimitError, ModelBehaviorError, ModelProviderError, SessionError) as exc:
            # its summary: the hint speaks of Python (RunConfig, exc.run_data), not flags;
            # what the CLI can do instead, _keep says
            out.drop_held()
            return _failed(_with_site(exc, args), exc, args, out)
        except UserError as exc:
            cause = exc.__cause__
            if (isinstance(cause, Exception) and not isinstance(cause, StepswitchError)
                    and _in_user_code(cause)):
                # the user's own code raised (a tool with failure_error_function=None):
                # a failed run (exit 1) that names the exception and its line
                out.flush_held()
                text, tail = str(exc), str(cause)
                head = text[: -len(tail)] if tail and text.endswith(tail) else f"{text}: "
                return _failed(head + _user_code_error(cause) + _no_context(cause, args), exc,
                               args, out)
            out.drop_held()
            _keep(exc, args, out)
            raise
        except Exception as exc:  # raised by the user's own tool, hook or guardrail
            out.flush_held()
            return _failed(_user_code_error(exc) + _no_context(exc, args), exc, args, out)
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:  # Ctrl-C
            out.drop_held()
            out.end_text()
            _keep(exc, args, out)
            raise KeyboardInterrupt from None  # run() says so and exits 130
        out.flush_held()
        out.end_text()
        total.add(streamed.usage)
        if getattr(args, "record", None) and not streamed.interruptions:  # for replay
            from stepswitch.review.replay import write_record

            write_record(args.record, streamed, machine.name, case=args.target)
        if not streamed.interruptions:
            # finished: a resume of it is refused (and with nowhere to save it, it is not
            # made: a flow's last value need not have a JSON form)
            saved = _save(args, streamed.to_state()) if _save_paths(args) else []
            if saved:
                out.line(f"saved the finished run to {', '.join(saved)}")
            # a flow may end on a step, which is no agent
            last = streamed.last_agent
            what = "agent" if machine.ir.state(last) is not None else "step"
            out.done(last, total, what)
            refused = _refusal(streamed.new_items)
            if refused is not None and not streamed.final_output:
                print(f"stepswitch: the model refused: {visible(refused, keep=_TEXT)}",
                      file=sys.stderr)
                return 1
            _print_output(streamed.final_output)
            return 0
        state = streamed.to_state()
        pending = state.interruptions
        if not _decide(state, pending, policy, out):
            return _paused(state, pending, args, out)
        next_input = state


def _decide(state: RunState, pending: list[ToolApprovalItem], policy: str, out: _Progress,
            *, can_pause: bool = True) -> bool:
    """Apply the approval policy; False when the run must pause instead (``can_pause``
    False, as in a chat, which cannot wait: the prompt offers no pause)."""
    if policy == "none":
        return False
    for item in pending:
        if policy == "all":
            out.hold(f"  approved {_call(item)} (--approve all)")
            state.approve(item)
            continue
        choices = "[y/N/p(ause)]" if can_pause else "[y/N]"
        answer = _ask(f"approve {_call(item)} for agent {visible(item.agent)}? {choices} ")
        if answer is None or (can_pause and answer.startswith("p")):
            return False
        if answer in ("y", "yes"):
            state.approve(item)
        else:
            state.reject(item)
            out.hold(f"  rejected {visible(item.name)}")
    return True


def _ask(prompt: str) -> str | None:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        print(file=sys.stderr)
        return None
    return line.strip().lower()


def _paused(
    state: RunState, pending: list[ToolApprovalItem], args: argparse.Namespace, out: _Progress
) -> int:
    out.line(f"paused: {len(pending)} call(s) wait for approval:")
    for item in pending:
        out.line(f"  {visible(item.call_id)}: {_call(item)} by {visible(item.agent)}")
    saved = _save(args, state)
    if not saved:
        out.line("stepswitch: the paused run was not saved; rerun with --state FILE to keep it")
        return 1
    out.line(
        f"saved the run to {', '.join(saved)}; continue with: stepswitch run "
        f"{shlex.quote(args.target)} --resume {shlex.quote(saved[0])} --approve all"
        f"{_run_flags(args)}{session_flags(args)}"
    )
    return 0


def _run_flags(args: argparse.Namespace) -> str:
    """The flags this command was given that its resumption needs again: the model and
    how to reach it, and the context factory (a resumed run rebuilds its context)."""
    out = ""
    for flag, value in (("--model", args.model), ("--base-url", args.base_url),
                        ("--api", None if args.api == "responses" else args.api),
                        ("--context", args.context)):
        if value is not None:
            out += f" {flag} {shlex.quote(value)}"
    return out


def _in_user_code(exc: BaseException) -> bool:
    """True when a frame of ``exc``'s traceback is the user's own code: neither
    stepswitch, nor an installed package (openai, httpx), nor the standard library."""
    paths = sysconfig.get_paths()
    skip = (PACKAGE_DIR, paths["stdlib"], paths["purelib"], paths["platlib"])
    return any(not f.filename.startswith(skip) and not f.filename.startswith("<")
               for f in traceback.extract_tb(exc.__traceback__))


def _user_code_error(exc: BaseException) -> str:
    """``Type: message`` and where in the user's code it was raised (no traceback)."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(PACKAGE_DIR) and "asyncio" not in f.filename
    ]
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc} (raised in your code{where})"


def _no_context(exc: BaseException, args: argparse.Namespace) -> str:
    """The hint for user code (instructions, a tool) that read ``ctx.context`` of a run
    given none: its error is about ``None``, and the fix is a flag."""
    if getattr(args, "context_object", None) is not None:
        return ""
    if not isinstance(exc, AttributeError | TypeError | KeyError) or "NoneType" not in str(exc):
        return ""
    return ("; the run has no context object (ctx.context is None): pass `--context "
            "module:factory`, a function returning it")


def _failed(message: str, exc: Exception, args: argparse.Namespace, out: _Progress) -> int:
    out.end_text()
    print(f"stepswitch: error: the run failed: {message}", file=sys.stderr)
    _keep(exc, args, out)
    return 1


def _keep(exc: BaseException, args: argparse.Namespace, out: _Progress) -> None:
    """Save the run so far that ``exc`` carries, so a retry resumes it instead of
    repeating what it did (a resumed run's file is rewritten even without --state)."""
    data = getattr(exc, "run_data", None)
    to_state = getattr(data, "to_state", None)
    if not callable(to_state):
        return
    try:
        state = to_state()
        saved = _save(args, state)
    except (UserError, RuntimeError):
        return
    if not saved:
        return
    if isinstance(exc, SessionConflict):
        # the session moved on since this run loaded it: the same state conflicts again
        out.line(f"saved the run so far to {', '.join(saved)}; another run has added to the "
                 "session since, so this one cannot continue there: start a new run")
        return
    if isinstance(exc, FlowBudgetExceeded):
        # resuming would take the spent edge again: no retry, a new run (which starts the
        # edge's count afresh) with a larger max_uses or a loop that ends sooner
        where = _flow_edge(args, exc.source)[0]
        out.line(f"saved the run so far to {', '.join(saved)} (it cannot be resumed: the "
                 f"edge's budget is spent); raise max_uses at {where}, or let the loop end "
                 "sooner, and start a new run with --input")
        return
    more = ""
    if isinstance(exc, MaxTurnsExceeded):  # the saved budget is spent: retry with a larger one
        spent = state.max_turns or args.max_turns or 10
        more = f" --max-turns {2 * spent}"
    out.line(f"saved the run so far to {', '.join(saved)}; retry with --resume {saved[0]}"
             f"{more}{session_flags(args)}")


def _refusal(items: list[RunItem]) -> str | None:
    """The refusal that ended the run, if its last message is one."""
    for item in reversed(items):
        if isinstance(item, MessageOutputItem):
            return item.refusal
    return None


_TEXT = "\n\t"
"""What a model's running text keeps as it is when shown (every other control escaped)."""


def _print_output(value: Any) -> None:
    # the model's text: a terminal escape in it is shown, never obeyed
    if isinstance(value, BaseModel):
        print(visible(value.model_dump_json(indent=2), keep=_TEXT))
    elif value is not None:
        print(visible(str(value), keep=_TEXT))


class _Progress:
    """Writes one short line per event; with ``stream_text`` also the model's text."""

    def __init__(self, file: TextIO, *, stream_text: bool) -> None:
        self.file = file
        self.stream_text = stream_text
        self._mid_text = False
        # the streamed text no completed message has claimed yet: a message whose text
        # was shown as deltas is not printed again, one that came without deltas (a
        # scripted model, a server that does not stream text) is printed whole
        self._streamed = ""
        self.calls = 0
        self._held: list[str] = []

    def line(self, text: str) -> None:
        self.flush_held()
        self.end_text()
        print(text, file=self.file, flush=True)

    def hold(self, text: str) -> None:
        """A line to print once what it says took effect (the next line or event);
        :meth:`drop_held` forgets it when it did not."""
        self._held.append(text)

    def flush_held(self) -> None:
        held, self._held = self._held, []
        for text in held:
            self.line(text)

    def drop_held(self) -> None:
        self._held.clear()

    def end_text(self) -> None:
        if self._mid_text:
            print(file=self.file, flush=True)
            self._mid_text = False

    def event(self, event: Any) -> None:
        self.flush_held()
        if isinstance(event, AgentUpdatedStreamEvent):
            self.line(f"→ agent {visible(event.new_agent)}")
        elif isinstance(event, FlowNodeStreamEvent):
            # a flow's agent nodes are announced by their own AgentUpdated event
            if event.kind == "step":
                self.line(f"→ step {visible(event.node)}")
            elif event.kind == "fan_out":
                self.line(f"→ fan-out {visible(event.node)} ×{event.count}")
        elif isinstance(event, RunItemStreamEvent):
            self.item(event.item)
        elif isinstance(event, RawResponsesStreamEvent) and self.stream_text:
            delta = _text_delta(event.data)
            if delta:
                if not self._mid_text:
                    print("  ", end="", file=self.file)
                # the model's text as it comes, with no control character that could
                # hide or rewrite what the terminal shows next (an approval prompt)
                print(visible(delta, keep="\n\t"), end="", file=self.file, flush=True)
                self._mid_text = True
                self._streamed += delta

    def item(self, item: RunItem) -> None:
        if isinstance(item, ToolCallItem):
            self.calls += 1
            self.line(f"  tool {visible(item.name)}({_short(item.arguments)})")
        elif isinstance(item, ToolCallOutputItem):
            mark = "error" if item.is_error else "→"
            self.line(f"    {mark} {_short(item.output)}")
        elif isinstance(item, HandoffOutputItem):
            self.line(
                f"  handoff {visible(item.source_agent)} → {visible(item.target_agent)}"
            )
        elif isinstance(item, MessageOutputItem):
            if item.refusal:
                self.line(f"  {visible(item.agent)} refused: {_short(item.refusal, 200)}")
            elif self.stream_text and self._shown_as_deltas(item.content):
                self.end_text()
            elif item.content:
                self.line(f"  {visible(item.agent)}: {_short(item.content, 200)}")
        elif isinstance(item, ToolApprovalItem):
            self.line(f"  {visible(item.name)} needs approval")

    def _shown_as_deltas(self, content: str) -> bool:
        """Whether ``content`` was already shown as streamed text (and claim it)."""
        if not self._streamed:
            return False
        at = self._streamed.find(content)
        if at < 0:  # shown, but not byte for byte: never print it twice
            self._streamed = ""
        else:
            self._streamed = self._streamed[at + len(content):]
        return True

    def done(self, last_agent: str, usage: Usage, what: str = "agent") -> None:
        self.line(
            f"done: last {what} {visible(last_agent)}, {usage.requests} model call(s), "
            f"{usage.total_tokens} token(s)"
        )


def _text_delta(data: Any) -> str | None:
    if getattr(data, "type", None) == "response.output_text.delta":
        delta = getattr(data, "delta", None)
        return delta if isinstance(delta, str) else None
    choices = getattr(data, "choices", None)
    if choices:
        delta = getattr(choices[0], "delta", None)
        content = getattr(delta, "content", None)
        return content if isinstance(content, str) else None
    return None


def _short(text: str, limit: int = 120) -> str:
    text = visible(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call(item: ToolApprovalItem) -> str:
    """``name(arguments)`` exactly as the model sent them, every hidden character
    escaped: what a person approves is what runs (never shortened)."""
    return f"{visible(item.name)}({visible(item.arguments)})"
