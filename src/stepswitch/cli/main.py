"""The ``stepswitch`` command: a thin shell over the library.

``main(argv) -> int``: 0 clean, 1 findings, 2 usage, import or I/O error. A user's
mistake never ends in a traceback.
"""

from __future__ import annotations

import os
import sys

from stepswitch._version import __version__

TYPE_CHECKING = False  # typing's, without importing typing (see stepswitch/__init__.py)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

__all__ = ["entry", "main"]

# Each name is a module stepswitch.cli.<name> with add_parser(sub) and run(args) -> int.
_COMMANDS: tuple[str, ...] = (
    "show", "check", "explain", "render", "run", "chat", "compile", "trace", "diff",
    "trail",
    "replay", "test",
    "worker", "mcp", "studio",
)


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given ``argv`` naming a command, only that command's module loads
    (``check`` in a pre-commit hook need not load the runtime or the renderers)."""
    import argparse
    import importlib

    parser = argparse.ArgumentParser(
        prog="stepswitch",
        description="Check, draw, compile and run agent workflows.",
    )
    parser.add_argument("--version", action="version", version=f"stepswitch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _commands(argv):
        importlib.import_module(f"stepswitch.cli.{name}").add_parser(sub)
    return parser


def _commands(argv: Sequence[str] | None) -> tuple[str, ...]:
    # The first word not starting with "-" is the command (the top level has only
    # flags); anything else (none, a typo, --help) gets every command, for the help.
    first = next((a for a in (argv or ()) if not a.startswith("-")), None)
    return (first,) if first in _COMMANDS else _COMMANDS


def main(argv: Sequence[str] | None = None) -> int:
    _escape_unencodable()
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "check":
        # a re-check of unchanged files is answered before the parser is even built
        # (argparse, and the modules it pulls in, are a third of such a run's time)
        from stepswitch.cli._check_cache import replay

        replayed = replay(argv[1:])
        if replayed is not None:
            return replayed
    from stepswitch.errors import UserError

    parser = _parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    args.argv = list(argv)  # the command line as given: the check cache's key
    try:
        code: int = args.func(args)
        return code
    except UserError as exc:  # a TargetError too; its summary: a hint speaks of Python
        # keywords, not flags
        print(f"stepswitch: error: {exc.summary}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


def _escape_unencodable() -> None:
    """What the terminal's encoding cannot hold (a lone surrogate in a name, say) is
    written as a backslash escape, never a ``UnicodeEncodeError`` after the work is
    done. In a JSON string the escape is the same character, so JSON stays valid."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:  # noqa: SIM105 - contextlib is not loaded on a cache hit's path
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # detached or closed: leave it
                pass


def entry() -> None:
    """Console-script entry point."""
    code = main()
    if "temporalio.bridge.temporal_sdk_bridge" in sys.modules:
        # Temporal's Rust runtime keeps threads that may call into Python while the
        # interpreter finalizes, which aborts the process ("PyGILState_Release ... must be
        # current") after the command is done, turning exit 2 into 134 now and then. The
        # command's work is finished and written: flush and leave without finalizing.
        import contextlib
        import logging

        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        os._exit(code)
    sys.exit(code)
