"""``stepswitch run TARGET --temporal HOST:PORT``: start (or attach to) a durable run,
show its progress, ask for approvals through the ``decide`` update, print the result.

The run itself happens on a worker (``stepswitch worker``); this process only starts
it and watches, so it may be stopped (Ctrl-C) and attached again with
``--workflow-id``: the run goes on without it.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import uuid
from datetime import timedelta
from typing import Any

from stepswitch._visible import visible
from stepswitch.cli._console import Progress, ask, print_output
from stepswitch.errors import UserError
from stepswitch.targets.load import compile_target, load_one

__all__ = ["run_durable"]


def run_durable(args: argparse.Namespace) -> int:
    if args.resume or args.state:
        raise UserError("--temporal keeps the run on the server; drop --resume/--state")
    if args.input is None and not args.workflow_id:
        raise UserError("--input TEXT is required (or --workflow-id ID to attach to a run)")
    if getattr(args, "trace", None):
        raise UserError(
            "--trace records this process's spans, but a run on Temporal runs on its worker: "
            "start the worker with `stepswitch worker ... --trace FILE.jsonl` (see "
            "docs/durable.md, Tracing)"
        )
    for flag, value in (("--model", args.model), ("--base-url", args.base_url)):
        if value is not None:
            # the worker calls the model: here it would be silently ignored
            raise UserError(
                f"{flag}: on Temporal the worker calls the model: start it with "
                f"`stepswitch worker ... {flag} {shlex.quote(value)}` and drop {flag} here"
            )
    if getattr(args, "wait_timeout", None) is not None:
        raise UserError(
            "--wait-timeout: on Temporal the worker calls the model, and its "
            "--model-timeout bounds each call; drop --wait-timeout here"
        )
    if getattr(args, "session", None):
        raise UserError(
            "with --temporal the worker keeps the conversations: start it with "
            "`stepswitch worker ... --session URL` and pass only --session-id ID here"
        )
    session_id = getattr(args, "session_id", None)
    if session_id is not None:
        if args.workflow_id and args.workflow_id != session_id:
            raise UserError(
                f"--session-id {session_id!r} and --workflow-id {args.workflow_id!r} differ: "
                "a conversation on Temporal is one workflow id (drop --workflow-id)"
            )
        args.workflow_id = session_id
    try:
        import stepswitch.temporal  # noqa: F401
    except ImportError as exc:
        raise UserError(str(exc)) from None
    loaded = load_one(args.target)
    machine = compile_target(loaded.workflow)
    from stepswitch.temporal import workflow_for

    workflow_for(machine)  # what no worker could run is refused before any connection
    if session_id is not None:
        from stepswitch.cli._session import refuse_flow

        refuse_flow(machine, "--session-id continues a conversation")
    policy = args.approve or ("ask" if sys.stdin.isatty() else "none")
    try:
        return asyncio.run(_watch(machine, args, policy))
    except KeyboardInterrupt:
        print("\nstepswitch: stopped watching; the run goes on (attach with --workflow-id)",
              file=sys.stderr)
        return 130


async def _watch(machine: Any, args: argparse.Namespace, policy: str) -> int:
    from temporalio.client import (
        WorkflowFailureError,
        WorkflowQueryFailedError,
        WorkflowUpdateFailedError,
    )
    from temporalio.common import WorkflowIDConflictPolicy
    from temporalio.exceptions import ApplicationError
    from temporalio.service import RPCError

    import stepswitch.temporal as st
    from stepswitch.temporal._codec import read_items

    out = Progress(sys.stderr, stream_text=False)
    client = await st.connect(args.temporal)
    workflow_id = args.workflow_id or f"{machine.name}-{uuid.uuid4().hex[:12]}"
    session_id = getattr(args, "session_id", None)
    queue = args.task_queue
    if args.input is None:  # attaching: the run's own task queue, not the flag's default
        queue = await _check_exists(client, workflow_id, args.temporal, machine)
    if args.input is not None:
        await st.wait_for_worker(client, args.task_queue, timeout=args.worker_wait,
                                 target=args.target)
        handle = await client.start_workflow(
            st.workflow_name(machine),
            # pinned to the machine this command compiled: a worker of another version
            # (the file edited since it started) fails the run before anything runs,
            # instead of running what the worker has
            st.RunInput(args.input, session_id=session_id, max_turns=args.max_turns,
                        digest=st.machine_digest(machine)),
            id=workflow_id,
            task_queue=args.task_queue,
            result_type=st.RunOutput,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
    else:
        handle = client.get_workflow_handle(workflow_id, result_type=st.RunOutput)
    out.line(f"run {workflow_id} on {args.temporal} (task queue {queue})")
    result = asyncio.ensure_future(handle.result())
    shown = 0
    asked: set[tuple[tuple[str, ...], str]] = set()
    try:
        while True:
            done, _ = await asyncio.wait({result}, timeout=0.25)
            try:
                items = await handle.query("items", result_type=list[dict[str, Any]],
                                           rpc_timeout=_QUERY_TIMEOUT)
                pending = [] if done else await handle.query(
                    "interruptions", result_type=list[st.Interruption],
                    rpc_timeout=_QUERY_TIMEOUT)
            except (RPCError, WorkflowQueryFailedError) as exc:
                # no answer: a worker that cannot run the run (another workflow's worker
                # on this queue, a changed workflow) fails its workflow task over and
                # over, and a query waits for it; a busy worker only answers late
                finished, _ = await asyncio.wait({result}, timeout=1)
                if finished:  # a closed run: its outcome says more than a replay's error
                    break
                stuck = await _stuck(handle, workflow_id, queue)
                if stuck is not None:
                    raise UserError(stuck) from None
                if _slow(exc):
                    continue
                raise UserError(f"cannot watch run {workflow_id!r}: "
                                f"{_first_line(str(exc))}") from None
            for item in read_items(items[shown:]):
                out.item(item)  # type: ignore[arg-type]
            shown = max(shown, len(items))
            if done:
                break
            # calls of one id (fan-out branches whose models number calls alike) are
            # told apart, and decided, by where they wait
            ids = [p.call_id for p in pending]
            where = {
                id(p): f" at {visible('/'.join(p.path))}" if ids.count(p.call_id) > 1 else ""
                for p in pending
            }
            if policy == "none" and pending:
                for p in pending:
                    out.line(f"waiting for approval: {visible(p.call_id)}{where[id(p)]}: "
                             f"{visible(p.name)}({visible(p.arguments)}) by {visible(p.agent)}")
                out.line(f"the run waits on the server (id {workflow_id}); decide with: "
                         f"{_attach_command(args, workflow_id)}")
                return 0
            # a decided call leaves the pending list; one back under its key is a new
            # round's (a loop back to the node), asked afresh
            asked &= {(tuple(p.path), p.call_id) for p in pending}
            for p in pending:
                key = (tuple(p.path), p.call_id)
                if key in asked:
                    continue
                asked.add(key)
                approve = True
                if policy == "ask":
                    answer = ask(f"approve {p.name}({p.arguments}) for agent {p.agent}"
                                  f"{where[id(p)]}? [y/N] ")
                    approve = answer in ("y", "yes")
                try:
                    # by its path too: exactly this call (a worker older than paths
                    # lists none and ignores it)
                    said = await handle.execute_update("decide", st.Decision(
                        p.call_id, approve, path=p.path))
                except WorkflowUpdateFailedError as exc:  # the run refused it
                    cause = exc.cause
                    why = cause.message if isinstance(cause, ApplicationError) else str(
                        cause or exc)
                    print(f"stepswitch: error: the decision on {p.call_id}{where[id(p)]} failed: "
                          f"{_first_line(why)}", file=sys.stderr)
                    return 1
                out.line(f"  {said}")
        output: st.RunOutput = result.result()
    except WorkflowFailureError as exc:
        cause = exc.cause
        message = cause.message if isinstance(cause, ApplicationError) else str(cause or exc)
        print(f"stepswitch: error: the run failed: {message}", file=sys.stderr)
        return _failure_code(cause.type if isinstance(cause, ApplicationError) else None)
    finally:
        if not result.done():
            result.cancel()
        elif not result.cancelled():
            result.exception()  # seen: a run that failed meanwhile is no stray traceback
    # a flow may end on a step, which is no agent (as in-process)
    what = "agent" if machine.ir.state(output.last_agent) is not None else "step"
    out.line(f"done: last {what} {output.last_agent}, {output.usage[0]} model call(s)")
    print_output(output.final_output)
    return 0


def _failure_code(kind: str | None) -> int:
    """The exit code of a run that failed with our error ``kind``, as in-process: 1 for
    a failed run (a limit, the model, its server, the session, a changed machine), 2
    for a mistake in what the run was given (a script that ran out, a bad context)."""
    from stepswitch.errors import (
        ModelBehaviorError,
        ModelProviderError,
        RunLimitError,
        SessionError,
        UserError,
    )
    from stepswitch.temporal._codec import error_class

    cls = error_class(kind)
    if cls is None or not issubclass(cls, UserError):
        return 1
    failed = (RunLimitError, ModelBehaviorError, ModelProviderError, SessionError)
    return 1 if issubclass(cls, failed) else 2


def _attach_command(args: argparse.Namespace, workflow_id: str) -> str:
    """The command that attaches to the run and approves what it waits for (``--approve
    ask`` on a terminal decides call by call)."""
    return (f"stepswitch run {shlex.quote(args.target)} --temporal "
            f"{shlex.quote(args.temporal)} --workflow-id {shlex.quote(workflow_id)} "
            "--approve all")


async def _check_exists(client: Any, workflow_id: str, address: str, machine: Any) -> str:
    """Attaching: the run's task queue, or a clear error for an id the server does not
    know (not Temporal's RPC traceback), or for a run of another workflow than TARGET's
    (its calls would be decided, and shown, as this workflow's)."""
    from temporalio.service import RPCError, RPCStatusCode

    import stepswitch.temporal as st

    try:
        described = await client.get_workflow_handle(workflow_id).describe()
        queue: str = described.task_queue
        kind = described.workflow_type
        if isinstance(kind, str) and kind != st.workflow_name(machine):
            theirs = kind.removeprefix("stepswitch.")
            raise UserError(
                f"run {workflow_id!r} on {address} is a run of workflow {theirs!r}, not of "
                f"{machine.name!r} (the TARGET given): attach with that workflow's TARGET, "
                "whose calls these are")
        return queue
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise UserError(
                f"no run with workflow id {workflow_id!r} on {address}: start one with "
                "--input TEXT, or check the id"
            ) from None
        raise UserError(f"cannot attach to run {workflow_id!r} on {address}: {exc.message}"
                        ) from None


_QUERY_TIMEOUT = timedelta(seconds=5)


def _slow(exc: Exception) -> bool:
    """A query that got no answer in time (Temporal's client reports its own timeout as
    CANCELLED): the worker may only be busy."""
    from temporalio.service import RPCError, RPCStatusCode

    return isinstance(exc, RPCError) and exc.status in (
        RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


async def _stuck(handle: Any, workflow_id: str, queue: str) -> str | None:
    """Why no worker can go on with the run, when its last workflow task failed (and
    none completed since): Temporal retries such a task forever, so the run would
    wait silently."""
    reason = None
    async for event in handle.fetch_history_events():
        if event.HasField("workflow_task_failed_event_attributes"):
            reason = event.workflow_task_failed_event_attributes.failure.message
        elif event.HasField("workflow_task_completed_event_attributes"):
            reason = None
    if reason is None:
        return None
    hint = ""
    if "is not registered on this worker" in reason:
        hint = (f" (a worker of another workflow polls task queue {queue!r}: give each "
                "workflow's workers a task queue of their own)")
    return (f"run {workflow_id!r} cannot go on: a worker on task queue {queue!r} fails it: "
            f"{_first_line(reason)}{hint}; the run stays on the server")
