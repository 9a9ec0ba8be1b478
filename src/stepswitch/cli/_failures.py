"""How a run that ended badly is told and kept: the one line that says why (a model's
error, a spent limit, an exception of the user's own code and where it was raised), and
the run so far saved to its state file with the command that continues it.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
import traceback

from stepswitch._site import PACKAGE_DIR
from stepswitch.cli._console import Progress
from stepswitch.cli._session import session_flags
from stepswitch.cli._state_files import flow_edge, save
from stepswitch.errors import (
    FlowBudgetExceeded,
    MaxTurnsExceeded,
    MCPServerError,
    ModelBehaviorError,
    SessionConflict,
    StepswitchError,
    UserError,
)
from stepswitch.runtime.items import MessageOutputItem, RunItem

__all__ = ["add_mcp_drift_flag", "failed", "in_user_code", "keep", "no_context", "refusal",
           "summary", "user_code_error", "with_site"]


def add_mcp_drift_flag(p: argparse.ArgumentParser) -> None:
    """``--mcp-drift``, as ``worker`` has it: what a drifted MCP server's message tells a
    command-line user to pass."""
    p.add_argument("--mcp-drift", choices=("error", "allow"), default="error",
                   help="an MCP server whose tools differ from stepswitch.mcp.lock: fail the "
                   "run (error, the default) or call it anyway (allow)")

def with_site(exc: StepswitchError, args: argparse.Namespace) -> str:
    """:func:`summary`; for a spent flow budget, with where that edge is declared."""
    if isinstance(exc, FlowBudgetExceeded):
        where, max_uses = flow_edge(args, exc.source)
        if max_uses is not None:
            return f"{exc.summary} (max_uses={max_uses} at {where})"
    return summary(exc)


def summary(exc: StepswitchError) -> str:
    """``exc.summary`` (its advice in Python left out), with the flag that does what that
    advice did where there is one: a drifted MCP server's ``--mcp-drift allow``."""
    if isinstance(exc, MCPServerError) and exc.hint:
        return f"{exc.summary}; or allow it: --mcp-drift allow"
    return exc.summary


def in_user_code(exc: BaseException) -> bool:
    """True when a frame of ``exc``'s traceback is the user's own code: neither
    stepswitch, nor an installed package (openai, httpx), nor the standard library."""
    paths = sysconfig.get_paths()
    skip = (PACKAGE_DIR, paths["stdlib"], paths["purelib"], paths["platlib"])
    return any(not f.filename.startswith(skip) and not f.filename.startswith("<")
               for f in traceback.extract_tb(exc.__traceback__))


def user_code_error(exc: BaseException) -> str:
    """``Type: message`` and where in the user's code it was raised (no traceback)."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(PACKAGE_DIR) and "asyncio" not in f.filename
    ]
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc} (raised in your code{where})"


def no_context(exc: BaseException, args: argparse.Namespace) -> str:
    """The hint for user code (instructions, a tool) that read ``ctx.context`` of a run
    given none: its error is about ``None``, and the fix is a flag."""
    if getattr(args, "context_object", None) is not None:
        return ""
    if not isinstance(exc, AttributeError | TypeError | KeyError) or "NoneType" not in str(exc):
        return ""
    return ("; the run has no context object (ctx.context is None): pass `--context "
            "module:factory`, a function returning it")


def failed(message: str, exc: Exception, args: argparse.Namespace, out: Progress) -> int:
    out.end_text()
    print(f"stepswitch: error: the run failed: {message}", file=sys.stderr)
    keep(exc, args, out)
    return 1


def keep(exc: BaseException, args: argparse.Namespace, out: Progress) -> None:
    """Save the run so far that ``exc`` carries, so a retry resumes it instead of
    repeating what it did (a resumed run's file is rewritten even without --state)."""
    data = getattr(exc, "run_data", None)
    to_state = getattr(data, "to_state", None)
    if not callable(to_state):
        return
    try:
        state = to_state()
        saved = save(args, state)
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
        where = flow_edge(args, exc.source)[0]
        out.line(f"saved the run so far to {', '.join(saved)} (it cannot be resumed: the "
                 f"edge's budget is spent); raise max_uses at {where}, or let the loop end "
                 "sooner, and start a new run with --input")
        return
    more = ""
    if isinstance(exc, MaxTurnsExceeded):  # the saved budget is spent: retry with a larger one
        spent = state.max_turns or args.max_turns or 10
        more = f" --max-turns {2 * spent}"
    # a mistake a resume would meet again (a step's wrong return type, a fan-out over
    # more than max_items) needs its fix first; a server's or the user's code's failure
    # may pass on a retry
    again = isinstance(exc, UserError) or (isinstance(exc, ModelBehaviorError)
                                           and "max_items" in str(exc))
    how = "once the cause is fixed, resume with" if again else "retry with"
    out.line(f"saved the run so far to {', '.join(saved)}; {how} --resume {saved[0]}"
             f"{more}{session_flags(args)}")


def refusal(items: list[RunItem]) -> str | None:
    """The refusal that ended the run, if its last message is one."""
    for item in reversed(items):
        if isinstance(item, MessageOutputItem):
            return item.refusal
    return None
