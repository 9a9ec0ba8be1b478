"""``stepswitch run TARGET --input TEXT``: run a workflow against a real model (or a
scripted transcript), showing progress as it happens.

Exit codes: 0 the run finished, or paused with its state saved to ``--state``;
1 the run failed (the model misbehaved or refused, its server failed, a run limit
hit) or paused with nowhere to save its state; 2 a usage, target, key, file or state error;
130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (each saves the run so far, as far as it got).
Progress (agent switches, tool calls, handoffs) goes to stderr, the final output to
stdout, so ``stepswitch run ... > answer.txt`` keeps only the answer.

This module parses the flags and drives the run; what it shows is ``cli/_console.py``,
the model it runs on ``cli/_models.py``, its state file ``cli/_state_files.py``, how a
failed run is told and kept ``cli/_failures.py``, SIGTERM/SIGHUP ``cli/_signals.py``,
and a durable run on Temporal ``cli/_durable.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import shlex
import signal
import sys
from typing import Any

from stepswitch._visible import visible
from stepswitch.cli._agents_api import API_CHOICES, add_wait_timeout, refuse_inexpressible
from stepswitch.cli._console import (
    TEXT,
    Progress,
    call_text,
    decide,
    print_output,
    where_waits,
)
from stepswitch.cli._failures import (
    add_mcp_drift_flag,
    failed,
    in_user_code,
    keep,
    no_context,
    refusal,
    user_code_error,
    with_site,
)
from stepswitch.cli._models import DEFAULT_MODEL, calls_models, is_transcript, model_for
from stepswitch.cli._session import (
    add_session_flags,
    check_resumed_session,
    continue_script,
    load_cli_session,
    refuse_flow,
    session_flags,
)
from stepswitch.cli._signals import Stop
from stepswitch.cli._state_files import check_state_path, read_state, save, save_paths
from stepswitch.context import Usage
from stepswitch.errors import (
    CompileError,
    ModelBehaviorError,
    ModelProviderError,
    RunLimitError,
    SessionError,
    StepswitchError,
    UserError,
)
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.items import ToolApprovalItem
from stepswitch.runtime.model import Model
from stepswitch.runtime.state import RunState
from stepswitch.targets.context import build_context
from stepswitch.targets.load import compile_target, load_one, refuse_own_source

__all__ = ["add_parser", "run"]


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
        choices=API_CHOICES,
        default="responses",
        help="wire API: responses (OpenAI), chat (most compatible servers) or agents "
        "(the hosted Agents API: sessions)",
    )
    add_wait_timeout(p)
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
        "--trace-content", action="store_true",
        help="with --trace: also record messages, instructions, tool arguments and results "
        "(RunConfig(trace_content=True); they may hold personal data)",
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
    add_mcp_drift_flag(p)
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

        if args.mcp_drift != "error":  # the worker calls the servers, by its own policy
            raise UserError("--mcp-drift is the worker's on a durable run: start it with "
                            "`stepswitch worker --mcp-drift allow`, and drop it here")

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
    for path in save_paths(args):
        check_state_path(path, "--state" if path == args.state else "--resume")
    if getattr(args, "record", None):  # refused now, not once the tools have run
        check_state_path(args.record, "--record")
    # the model layer (openai and the http modules under it) loads before the target's
    # folder goes first on sys.path: an openai.py or http.py there cannot shadow it
    importlib.import_module("stepswitch.models.provider")
    loaded = load_one(args.target)
    refuse_own_source(args.state, loaded, flag="--state")
    try:
        machine = compile_target(loaded.workflow)
    except CompileError as exc:  # findings, as `check` and `compile` count them: exit 1
        print(f"stepswitch: error: {loaded.label}: {exc}", file=sys.stderr)
        return 1
    args.workflow = loaded.workflow
    if getattr(args, "session", None) is not None:
        refuse_flow(machine, "--session keeps a conversation")
    args.context_object = build_context(args.context, loaded.workflow)
    # a flow of steps only never calls a model: it needs no key, no --model
    model: Model | None = model_for(args) if calls_models(machine) else None
    if model is not None:  # on the Agents API: what a session cannot hold, before a run
        refused = refuse_inexpressible(loaded.workflow, model, "run", args.api)
        if refused is not None:
            return refused
    policy = args.approve or ("ask" if sys.stdin.isatty() else "none")
    start: str | RunState = args.input
    if args.resume:
        start = read_state(args.resume, machine, args)
        check_resumed_session(start, args.resume, getattr(args, "session", None),
                              getattr(args, "session_id", None))
        if is_transcript(model):
            # a transcript picks up after the model calls the saved run already made:
            # nested agent-tool runs' and a flow's nodes' too, not only the top run's turns
            model.skip(start.calls_made)
    # opened only once the target, model and saved run are known good: a command that
    # fails on them leaves no session store behind
    scripted_session = getattr(args, "session", None) is not None and is_transcript(model)
    args.session_object, snap = load_cli_session(
        getattr(args, "session", None), getattr(args, "session_id", None),
        machine=None if args.resume else machine, items=scripted_session,
    )
    if scripted_session:
        continue_script(model, snap, start if isinstance(start, RunState) else None)
    config: dict[str, Any] = {}
    provider = None
    content = getattr(args, "trace_content", False)
    if content and not args.trace:
        raise UserError("--trace-content records content into the spans --trace FILE "
                        "writes; give --trace FILE.jsonl too")
    if args.trace:
        from stepswitch.otel import file_provider

        provider = config["tracer_provider"] = file_provider(args.trace)
        config["trace_content"] = content
    if args.max_cost is not None:
        from stepswitch.policies import prices_from_pyproject

        # priced as `check` prices its bound: the shipped table, the project's over it
        config.update(max_cost_usd=args.max_cost, prices=prices_from_pyproject() or None)
    if args.mcp_drift != "error":
        config["mcp_drift"] = args.mcp_drift
    args.run_config = RunConfig(**config) if config else None
    stop = args.stop = Stop()
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


async def _drive(
    machine: Any, start: str | RunState, model: Model | None, args: argparse.Namespace,
    policy: str
) -> int:
    out = Progress(sys.stderr, stream_text=args.stream)
    stop = getattr(args, "stop", None)
    if stop is not None:
        stop.attach()
    total = Usage()
    next_input: str | RunState = start
    if isinstance(start, RunState):
        pending = start.interruptions
        if pending and not decide(start, pending, policy, out):
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
        if isinstance(next_input, RunState) and save_paths(args):
            # saved as taken (state.resumed) before any of its approved calls runs: a
            # process killed from here on leaves a file no resume runs again (at most
            # once); however the run ends, its own state replaces this one
            save(args, next_input)
        # the decisions just made are said once the run has taken them (its first event,
        # or its end): a resume the runtime refuses (a stale session pin, a tampered
        # state) must not be preceded by "approved …"
        try:
            async for event in streamed.stream_events():
                out.event(event)
        except (RunLimitError, ModelBehaviorError, ModelProviderError, SessionError) as exc:
            # its summary: the hint speaks of Python (RunConfig, exc.run_data), not flags;
            # what the CLI can do instead, keep() says
            out.drop_held()
            return failed(with_site(exc, args), exc, args, out)
        except UserError as exc:
            cause = exc.__cause__
            if (isinstance(cause, Exception) and not isinstance(cause, StepswitchError)
                    and in_user_code(cause)):
                # the user's own code raised (a tool with failure_error_function=None):
                # a failed run (exit 1) that names the exception and its line
                out.flush_held()
                text, tail = str(exc), str(cause)
                head = text[: -len(tail)] if tail and text.endswith(tail) else f"{text}: "
                return failed(head + user_code_error(cause) + no_context(cause, args), exc,
                               args, out)
            out.drop_held()
            out.end_text()
            # the error first, then where the run so far was saved (main() would say
            # the error after it)
            print(f"stepswitch: error: {exc.summary}", file=sys.stderr)
            keep(exc, args, out)
            return 2
        except Exception as exc:  # raised by the user's own tool, hook or guardrail
            out.flush_held()
            if isinstance(exc, StepswitchError) and not in_user_code(exc):
                # stepswitch's own (an MCP server that drifted from its lock): no blame
                return failed(with_site(exc, args), exc, args, out)
            return failed(user_code_error(exc) + no_context(exc, args), exc, args, out)
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:  # Ctrl-C
            out.drop_held()
            out.end_text()
            keep(exc, args, out)
            raise KeyboardInterrupt from None  # run() says so and exits 130
        out.flush_held()
        out.end_text()
        total = streamed.usage  # the whole run's: a resume goes on from the saved usage
        unrecorded = False  # the record could not be written: said, and exit 2 at the end
        if getattr(args, "record", None) and not streamed.interruptions:  # for replay
            from stepswitch.review.replay import write_record

            try:  # its folder made as --state's is; the run's output is printed regardless
                os.makedirs(os.path.dirname(os.path.abspath(args.record)), exist_ok=True)
                write_record(args.record, streamed, machine.name, case=args.target)
            except OSError as exc:
                unrecorded = True
                print(f"stepswitch: error: --record {args.record}: cannot write it: "
                      f"{exc.strerror or exc}", file=sys.stderr)
        if not streamed.interruptions:
            # finished: a resume of it is refused (and with nowhere to save it, it is not
            # made: a flow's last value need not have a JSON form)
            saved = save(args, streamed.to_state()) if save_paths(args) else []
            if saved:
                out.line(f"saved the finished run to {', '.join(saved)}")
            # a flow may end on a step, which is no agent
            last = streamed.last_agent
            what = "agent" if machine.ir.state(last) is not None else "step"
            out.done(last, total, what)
            refused = refusal(streamed.new_items)
            if refused is not None and not streamed.final_output:
                print(f"stepswitch: the model refused: {visible(refused, keep=TEXT)}",
                      file=sys.stderr)
                return 1
            print_output(streamed.final_output)
            return 2 if unrecorded else 0
        state = streamed.to_state()
        pending = state.interruptions
        if not decide(state, pending, policy, out):
            return _paused(state, pending, args, out)
        next_input = state


def _paused(
    state: RunState, pending: list[ToolApprovalItem], args: argparse.Namespace, out: Progress
) -> int:
    out.line(f"paused: {len(pending)} call(s) wait for approval:")
    for item in pending:
        out.line(f"  {visible(item.call_id)}: {call_text(item)} by {visible(item.agent)}"
                 f"{where_waits(item)}")
    saved = save(args, state)
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
    wait = args.wait_timeout
    for flag, value in (("--model", args.model), ("--base-url", args.base_url),
                        ("--api", None if args.api == "responses" else args.api),
                        ("--wait-timeout", None if wait is None else f"{wait:g}"),
                        ("--context", args.context)):
        if value is not None:
            out += f" {flag} {shlex.quote(value)}"
    return out
