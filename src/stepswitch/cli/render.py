"""``stepswitch render TARGET --format mermaid|dot|svg|png [-o FILE]``: draw a workflow.

The analyzer runs first and its findings are drawn on the elements they concern
(``--no-report`` leaves it out); a workflow with errors is still drawn, exit 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from stepswitch.errors import TargetError
from stepswitch.render import FORMATS, render
from stepswitch.targets.load import load_one, refuse_own_source

if TYPE_CHECKING:
    from stepswitch.analysis import Report

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "render",
        help="draw a workflow as Mermaid, DOT, SVG or PNG",
        description="Draw one workflow. Mermaid and DOT are text; SVG and PNG run Graphviz "
        "(`dot`, or the graphviz-pure wheel from `pip install 'stepswitch[svg]'`).",
    )
    p.add_argument("target", metavar="TARGET", help="file.py:NAME or package.module:NAME")
    p.add_argument("--format", "-f", choices=FORMATS, default=None,
                   help="output format (default: from the -o file's suffix, else mermaid)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--tools", action="store_true",
                   help="draw function tools as nodes instead of listing them in their agent "
                        "(an MCP server's tools in a box of that server)")
    p.add_argument("--view", choices=("graph", "machine"), default="graph",
                   help="graph: agents and edges (default); machine: the compiled state machine")
    p.add_argument("--highlight", metavar="CODE",
                   help="light the counterexample path of the first CODE finding (SW801 ...)")
    p.add_argument("--no-report", dest="report", action="store_false",
                   help="do not run the analyzer (by default its findings are highlighted)")
    p.set_defaults(func=run)


_SUFFIXES = {".mmd": "mermaid", ".mermaid": "mermaid", ".dot": "dot", ".gv": "dot",
             ".svg": "svg", ".png": "png"}


def _format_for(output: str | None) -> str:
    if output is None:
        return "mermaid"
    suffix = Path(output).suffix.lower()
    return _SUFFIXES.get(suffix, "mermaid")


def run(args: argparse.Namespace) -> int:
    loaded = load_one(args.target, advice="render draws one, name it as FILE:NAME")
    workflow = loaded.workflow
    refuse_own_source(args.output, loaded)
    fmt: str = args.format or _format_for(args.output)
    if args.output is None and fmt == "png" and sys.stdout.isatty():
        raise TargetError("PNG is binary and stdout is a terminal; write it with -o FILE")
    graph = workflow.graph()  # built once: the analyzer and the drawing share it
    report = None
    if args.report or args.highlight:
        from stepswitch.analysis import analyze
        from stepswitch.policies import policies_from_pyproject, prices_from_pyproject

        # the findings check would print: [tool.stepswitch] policies and prices too
        report = analyze(graph, policies=policies_from_pyproject(workflow=graph.spec.name),
                         prices=prices_from_pyproject())
    if args.highlight and report is not None:
        report = _path_of(report, args.highlight, args.target)
    content = render(graph, fmt, args.output, tools=args.tools, view=args.view, report=report)
    if args.output is None:
        if isinstance(content, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(content)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(content)
    else:
        print(f"wrote {args.output} ({fmt}, {loaded.label})", file=sys.stderr)
    return 0


def _path_of(report: Report, code: str, target: str) -> Report:
    """A report of one step per element on the counterexample path of the first
    ``code`` finding, so the renderer lights exactly that path."""
    from stepswitch.analysis import Diagnostic, Report

    for d in report.diagnostics:
        if d.code == code and d.trace:
            steps = [Diagnostic(code, d.severity, f"{i}. {s.message}", s.location)
                     for i, s in enumerate(d.trace, 1)]
            return Report.of(report.workflow, steps, model_call_bound=None)
    raise TargetError(f"{target}: no {code} finding with a counterexample path to highlight "
                      f"(found: {', '.join(report.codes()) or 'none'})")
