"""``stepswitch studio TARGET...``: the workflow, its findings, its runs and its changes
in a local, read-only web page on 127.0.0.1."""

from __future__ import annotations

import argparse
import sys

from stepswitch.errors import TargetError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "studio",
        help="see a workflow, its findings and its runs in a local web page",
        description="Serve a read-only page on 127.0.0.1: the diagram (click an agent for "
        "its declaration), the findings, a recorded run stepped turn by turn (arrow keys), "
        "and a diff. The page reloads when the workflow's file changes.",
    )
    p.add_argument("targets", nargs="+", metavar="TARGET",
                   help="path/file.py:NAME or a file; two TARGETs: the first is the base "
                   "of a diff")
    p.add_argument("--port", type=int, default=0, metavar="N",
                   help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--trail", action="append", default=[], metavar="FILE",
                   help="a recorded run: a saved RunState, a `run --record` file or case "
                   "(*.trail.json), or a JSON list of items (repeatable)")
    p.add_argument("--trace", action="append", default=[], metavar="FILE",
                   help="a run's spans, as `stepswitch run --trace FILE.jsonl` writes them "
                   "(repeatable)")
    p.add_argument("--base", default=None, metavar="REF",
                   help="show the diff from this git ref on the diagram")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from stepswitch.studio.server import BuildError, Studio

    if not 0 <= args.port <= 65535:
        raise TargetError(f"--port {args.port}: not a port (0-65535)")
    forwarded = list(args.targets)
    for trail in args.trail:
        forwarded += ["--trail", trail]
    for trace in args.trace:
        forwarded += ["--trace", trace]
    if args.base is not None:
        forwarded += ["--base", args.base]
    try:
        studio = Studio(forwarded)
    except BuildError as exc:
        raise TargetError(str(exc)) from None
    try:
        server = studio.serve(args.port)
    except OSError as exc:
        raise TargetError(f"--port {args.port}: cannot listen on 127.0.0.1: "
                          f"{exc.strerror or exc}") from None
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"stepswitch studio: serving {url} (Ctrl-C to stop)", flush=True)
    if args.open:
        import webbrowser

        webbrowser.open(url)
    try:
        studio.run(server)
    except KeyboardInterrupt:
        print(file=sys.stderr)
    return 0
