"""``stepswitch render TARGET --format mermaid|dot|svg|png [-o FILE]``: draw a workflow."""

from __future__ import annotations

import argparse
import sys

from stepswitch.cli.targets import TargetError, load_targets
from stepswitch.render import FORMATS, render


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "render",
        help="draw a workflow as Mermaid, DOT, SVG or PNG",
        description="Draw one workflow. Mermaid and DOT are text; SVG and PNG run Graphviz "
        "(`dot`, or the graphviz-pure wheel from `pip install 'stepswitch[svg]'`).",
    )
    p.add_argument("target", metavar="TARGET", help="file.py:NAME or package.module:NAME")
    p.add_argument("--format", "-f", choices=FORMATS, default="mermaid",
                   help="output format (default: mermaid)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--tools", action="store_true",
                   help="draw function tools as nodes instead of listing them in their agent")
    p.add_argument("--view", choices=("graph", "machine"), default="graph",
                   help="graph: agents and edges (default); machine: the compiled state machine")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_targets([args.target])
    if len(loaded) != 1:
        names = ", ".join(item.label for item in loaded)
        raise TargetError(
            f"{args.target}: names {len(loaded)} workflows ({names}); render draws one, "
            "name it as FILE:NAME"
        )
    workflow = loaded[0].workflow
    fmt: str = args.format
    if args.output is None and fmt == "png" and sys.stdout.isatty():
        raise TargetError("PNG is binary and stdout is a terminal; write it with -o FILE")
    content = render(workflow, fmt, args.output, tools=args.tools, view=args.view)
    if args.output is None:
        if isinstance(content, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(content)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(content)
    else:
        print(f"wrote {args.output} ({fmt}, {loaded[0].label})", file=sys.stderr)
    return 0
