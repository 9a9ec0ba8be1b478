"""``stepswitch worker TARGET --address HOST:PORT --task-queue Q``: run a Temporal worker
for a workflow's durable runs until Ctrl-C (or SIGTERM).

``--model`` is what ``stepswitch run`` takes: a model name, ``scripted:FILE.json``, or
``FILE.py:NAME``, an object with ``async get_response(request)`` defined in your code.
``--trace FILE.jsonl`` writes the spans of the runs the worker serves, as ``run --trace``
does in process (``stepswitch trace FILE`` prints them).
Exit codes: 0 stopped, 2 a usage, target or connection error.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from stepswitch.cli._agents_api import API_CHOICES, refuse_inexpressible
from stepswitch.cli._failures import add_mcp_drift_flag
from stepswitch.cli._models import load_model
from stepswitch.errors import UserError
from stepswitch.targets.load import compile_target, load_one

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "worker",
        help="run a Temporal worker for a workflow's durable runs",
        description="Run a Temporal worker: the workflow's runs, model calls and tools.",
    )
    p.add_argument("target", metavar="TARGET", help="file.py:NAME or package.module:NAME")
    p.add_argument("--address", required=True, metavar="HOST:PORT",
                   help="the Temporal server, e.g. 127.0.0.1:7233")
    p.add_argument("--task-queue", required=True, metavar="Q", help="the task queue to poll")
    p.add_argument("--namespace", default="default", help="Temporal namespace (default: default)")
    p.add_argument(
        "--model", metavar="NAME",
        help="model for agents without their own: a name, scripted:FILE.json, or FILE.py:NAME",
    )
    p.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible server")
    p.add_argument("--api", choices=API_CHOICES, default="responses")
    p.add_argument("--model-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="how long one model call may take before it is tried again")
    p.add_argument(
        "--local-activities", choices=("none", "models", "all"), default="none",
        help="run model calls (models) or model calls and tools (all) as local activities: "
        "fewer server round trips; a worker that dies mid-task runs them again "
        "(default: none)",
    )
    p.add_argument(
        "--trace", metavar="FILE.jsonl",
        help="append the spans of the runs this worker serves to FILE as JSON lines "
        "(print them with `stepswitch trace FILE`)",
    )
    p.add_argument("--session", metavar="URL",
                   help="where conversations live (sqlite:///PATH.db, postgresql://…, "
                   "redis://…), for runs started with a session id")
    add_mcp_drift_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from datetime import timedelta

    if args.model_timeout <= 0:
        raise UserError("--model-timeout must be positive")
    loaded = load_one(args.target)
    machine = compile_target(loaded.workflow)
    model = load_model(args)
    # what the hosted Agents API cannot run is refused before the worker takes runs, as
    # `run --api agents` refuses it before a run
    refused = refuse_inexpressible(loaded.workflow, model, "worker", args.api)
    if refused is not None:
        return refused
    try:
        import stepswitch.temporal as st
    except ImportError as exc:
        raise UserError(str(exc)) from None
    # a machine that cannot run durably (a flow's step whose values have no JSON form)
    # is refused before any server is contacted
    st.workflow_for(machine)
    if args.session is not None:
        from stepswitch.cli._session import refuse_flow

        refuse_flow(machine, "--session keeps the worker's conversations")
    if args.session is not None:
        # reached once now: a store that is down is a flag error, not a traceback in
        # the worker's log at its first run
        from stepswitch.cli._session import open_cli_session

        asyncio.run(open_cli_session(args.session, None).close())
    provider = None
    if args.trace is not None:
        from stepswitch.otel import file_provider

        provider = file_provider(args.trace)  # a file it cannot write: exit 2 now

    async def serve() -> int:
        client = await st.connect(args.address, namespace=args.namespace)
        worker = st.worker_for(
            client, machine, task_queue=args.task_queue, model=model,
            sessions=args.session, model_timeout=timedelta(seconds=args.model_timeout),
            local_activities={"none": False, "models": "models", "all": True}[
                args.local_activities
            ],
            tracer_provider=provider, mcp_drift=args.mcp_drift,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(
            f"stepswitch: worker for {machine.name} ({st.machine_digest(machine)[:19]}) on "
            f"task queue {args.task_queue!r} at {args.address}; Ctrl-C stops it",
            file=sys.stderr, flush=True,
        )
        async with worker:
            await stop.wait()
        print("stepswitch: worker stopped", file=sys.stderr)
        return 0

    try:
        return asyncio.run(serve())
    finally:
        if provider is not None:
            provider.shutdown()
