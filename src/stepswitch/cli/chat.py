"""``stepswitch chat TARGET``: a conversation with a workflow on the terminal.

Each line you type is one run on the session: the run reads the conversation so far,
continues at the agent that holds it (a refund question stays with the refund agent),
and keeps its settled turns in the session. The answering agent's name prefixes each
answer; calls that need approval are asked for (``--approve all`` approves them). The
default store is an SQLite file under the working folder, ``.stepswitch/sessions.db``.
An empty line, ``/quit`` or end of input ends the chat.

Exit codes: 0 the chat ended; 1 a run failed (model, server, limit, session); 2 a
usage, target, key or session URL error.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from pathlib import Path
from typing import Any

from stepswitch._visible import visible
from stepswitch.cli._agents_api import API_CHOICES, add_wait_timeout, refuse_inexpressible
from stepswitch.cli._console import TEXT, Progress, decide
from stepswitch.cli._failures import add_mcp_drift_flag, summary, user_code_error
from stepswitch.cli._models import is_transcript, model_for
from stepswitch.cli._session import (
    DEFAULT_ID,
    add_session_flags,
    continue_script,
    load_cli_session,
    refuse_flow,
)
from stepswitch.errors import (
    MCPServerError,
    ModelBehaviorError,
    ModelProviderError,
    RunLimitError,
    SessionError,
    UserError,
)
from stepswitch.runtime.config import RunConfig
from stepswitch.runtime.state import RunState
from stepswitch.targets.context import build_context
from stepswitch.targets.load import compile_target, load_one

__all__ = ["add_parser", "run"]

DEFAULT_STORE = ".stepswitch/sessions.db"
_QUIT = ("", "/quit", "/exit")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "chat",
        help="talk with a workflow on the terminal; the conversation is kept in a session",
        description="A terminal conversation: each line is a run that continues at the "
        "agent holding the conversation.",
    )
    p.add_argument("target", metavar="TARGET", help="file.py:NAME or package.module:NAME")
    p.add_argument("--model", metavar="NAME",
                   help="model name, scripted:FILE.json to replay a scripted transcript, "
                   "or FILE.py:NAME, a model object in your code")
    p.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible server")
    p.add_argument("--api", choices=API_CHOICES, default="responses",
                   help="wire API: responses (OpenAI), chat (most compatible servers) or "
                   "agents (the hosted Agents API)")
    add_wait_timeout(p)
    p.add_argument("--approve", choices=("ask", "all"), default="ask",
                   help="calls that need approval: ask (default) or approve all")
    p.add_argument("--context", metavar="MODULE:FACTORY", help="build the run context")
    add_mcp_drift_flag(p)
    add_session_flags(p, default_help=f"default: sqlite:///{DEFAULT_STORE}")
    p.set_defaults(func=run, stream=False)


def run(args: argparse.Namespace) -> int:
    importlib.import_module("stepswitch.models.provider")
    loaded = load_one(args.target)
    machine = compile_target(loaded.workflow)
    # before the banner and before the store is made: there is no chat with a flow
    refuse_flow(machine, f"chat keeps a conversation in a session (run it with "
                f"`stepswitch run {args.target} --input TEXT`)")
    context = build_context(args.context, loaded.workflow)
    model = model_for(args)
    refused = refuse_inexpressible(loaded.workflow, model, "chat", args.api)
    if refused is not None:
        return refused
    # the store is opened (and its folder made) only once the target and model are
    # known good: a command that fails on them leaves nothing behind
    url = args.session
    if url is None:
        Path(DEFAULT_STORE).parent.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{DEFAULT_STORE}"
    # its one read (version and agent) serves the banner's "continuing at" too
    scripted = is_transcript(model)
    session, snap = load_cli_session(url, args.session_id, machine=machine, items=scripted)
    if scripted:
        continue_script(model, snap)
    print(
        f"chatting with {visible(machine.name)} (session "
        f"{visible(args.session_id or DEFAULT_ID)} in {url}); an empty line or Ctrl-D ends",
        file=sys.stderr,
    )
    try:
        config = RunConfig(mcp_drift=args.mcp_drift)
        return asyncio.run(_chat(machine, session, snap, model, context, args.approve, config))
    except KeyboardInterrupt:
        print("\nstepswitch: interrupted", file=sys.stderr)
        return 130


async def _chat(machine: Any, session: Any, snap: Any, model: Any, context: Any,
                policy: str, config: RunConfig) -> int:
    out = Progress(sys.stderr, stream_text=False)
    try:
        where = snap.current_agent or machine.entry
        if snap.version:
            out.line(f"(continuing the conversation at agent {visible(where)})")
        while True:
            print("you> ", end="", file=sys.stderr, flush=True)
            line = sys.stdin.readline()
            if line.strip() in _QUIT:
                if not line:
                    print(file=sys.stderr)
                return 0
            result = await _turn(machine, session, model, context, policy, line.strip(), out,
                                 config)
            answer = result.final_output
            text = answer.model_dump_json() if hasattr(answer, "model_dump_json") else answer
            print(f"{visible(result.last_agent)}> {visible(str(text), keep=TEXT)}",
                  flush=True)
    except (ModelBehaviorError, ModelProviderError, RunLimitError, SessionError,
            MCPServerError) as exc:
        # the summary: the hint speaks of Python (RunConfig, exc.run_data), not flags
        print(f"stepswitch: error: the run failed: {summary(exc)}", file=sys.stderr)
        return 1
    except UserError:
        raise
    except Exception as exc:  # raised by the user's own tool, hook or guardrail
        print(f"stepswitch: error: the run failed: {user_code_error(exc)}", file=sys.stderr)
        return 1
    finally:
        await session.close()


async def _turn(machine: Any, session: Any, model: Any, context: Any, policy: str,
                text: str, out: Progress, config: RunConfig) -> Any:
    next_input: str | RunState = text
    while True:
        streamed = machine.run_streamed(next_input, model=model, context=context,
                                        session=session, run_config=config)
        async for event in streamed.stream_events():
            out.event(event)
        if not streamed.interruptions:
            return streamed.result()
        state = streamed.to_state()
        pending = state.interruptions
        if not decide(state, pending, policy, out, can_pause=False):
            # input ended at the question (piped input): a chat cannot wait, so no is the
            # answer, and it says so rather than decline in silence
            for item in state.interruptions:
                state.reject(item)
                out.line(f"  declined {visible(item.name)}: the input ended before an answer "
                         "(pass --approve all to approve such calls)")
        next_input = state
