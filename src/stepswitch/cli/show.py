"""``stepswitch show TARGET…``: the agents, edges and a summary of each workflow."""

from __future__ import annotations

import argparse

from stepswitch.cli.targets import load_targets


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("show", help="print each workflow's agents, edges and a summary")
    p.add_argument("targets", nargs="+", metavar="TARGET")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for i, loaded in enumerate(load_targets(args.targets)):
        if i:
            print()
        graph = loaded.workflow.graph()
        print(f"{loaded.label}")
        print(f"  {graph.summary()}")
        print("  agents:")
        for name in graph.agent_names():
            agent = graph.agent(name)
            marks = []
            if name == graph.entry:
                marks.append("entry")
            if agent.output_type is not None:
                marks.append(f"output {agent.output_type.ref.display}")
            suffix = f"  ({', '.join(marks)})" if marks else ""
            print(f"    {name}{suffix}")
            for tool in agent.tools:
                pause = "  [needs approval]" if tool.needs_approval != "never" else ""
                print(f"      tool {tool.name}{pause}")
        print("  edges:")
        for edge in graph.edges():
            budget = f" (max_uses={edge.max_uses})" if edge.max_uses is not None else ""
            arrow = "─handoff→" if edge.kind == "handoff" else "─calls→"
            print(f"    {edge.source} {arrow} {edge.target} via {edge.tool_name}{budget}")
        for edge in graph.dangling:
            print(f"    {edge.source} → ? {edge.target} via {edge.tool_name} (unknown agent)")
    return 0
