"""``stepswitch show TARGET…``: the agents, edges and a summary of each workflow.

Names are shown with hidden characters escaped (a lone surrogate, a control or
bidi character), so the terminal shows what the workflow holds."""

from __future__ import annotations

import argparse
from typing import Any

from stepswitch._visible import visible
from stepswitch.graph.spec import AgentToolSpec, HandoffSpec, Ref, ToolSpec, WorkflowSpec
from stepswitch.graph.workflow_graph import WorkflowGraph
from stepswitch.targets.load import load_targets


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("show", help="print each workflow's agents, edges and a summary")
    p.add_argument("targets", nargs="+", metavar="TARGET")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for i, loaded in enumerate(load_targets(args.targets)):
        if i:
            print()
        graph = loaded.workflow.graph()
        print(visible(loaded.label))
        print(f"  {visible(graph.summary())}")
        print("  agents:")
        for name in graph.agent_names():
            agent = graph.agent(name)
            marks = []
            if name == graph.entry:
                marks.append("entry")
            if agent.output_type is not None:
                marks.append(f"output {visible(agent.output_type.ref.display)}")
            suffix = f"  ({', '.join(marks)})" if marks else ""
            print(f"    {visible(name)}{suffix}")
            for tool in agent.tools:
                print(f"      tool {visible(tool.call_name)}{_tool_marks(tool)}")
            for kind, guards in (("input", agent.input_guardrails),
                                 ("output", agent.output_guardrails)):
                if guards:
                    names = ", ".join(visible(g.name) for g in guards)
                    print(f"      {kind} guardrails: {names}")
            for hosted in agent.hosted_tools:
                print(f"      hosted {visible(hosted.name)} ({hosted.kind}, run by OpenAI)")
        edges = list(graph.edges())
        is_flow = graph.spec.flow is not None
        if edges or graph.dangling or not is_flow:
            # a flow's agents often have no handoffs or agent tools: its edges are the
            # flow's, listed below; a heading with nothing under it would say otherwise
            print("  edges:" if edges or graph.dangling else "  edges: none")
        for edge in edges:
            notes = [f"max_uses={edge.max_uses}"] if edge.max_uses is not None else []
            notes.extend(_edge_notes(edge.spec))
            shown = f" ({', '.join(notes)})" if notes else ""
            arrow = "─handoff→" if edge.kind == "handoff" else "─calls→"
            print(f"    {visible(edge.source)} {arrow} {visible(edge.target)} via "
                  f"{visible(edge.tool_name)}{shown}")
        for edge in graph.dangling:
            print(f"    {visible(edge.source)} → ? {visible(edge.target)} via "
                  f"{visible(edge.tool_name)} (unknown agent)")
        if is_flow:
            _show_flow(graph.spec)
        _show_policies_and_cost(graph)
    return 0


def _gate(enabled: bool | Ref) -> str | None:
    """How ``is_enabled`` gates a tool or an edge: None when it is always offered."""
    if enabled is True:
        return None
    if enabled is False or not isinstance(enabled, Ref):
        return "disabled"
    return f"enabled when {visible(enabled.display or enabled.path)}"


def _tool_marks(tool: ToolSpec) -> str:
    marks = []
    if tool.needs_approval != "never":
        marks.append("needs approval")
    gate = _gate(tool.is_enabled)
    if gate is not None:
        marks.append(gate)
    guards = [*tool.input_guardrails, *tool.output_guardrails]
    if guards:
        marks.append("tool guardrails " + ", ".join(visible(g.name) for g in guards))
    return "".join(f"  [{m}]" for m in marks)


def _edge_notes(spec: HandoffSpec | AgentToolSpec) -> list[str]:
    """What an edge's declaration adds: its gate, and a handoff's hook and filter."""
    notes = []
    gate = _gate(spec.is_enabled)
    if gate is not None:
        notes.append(gate)
    for field in ("on_handoff", "input_filter"):
        ref: Any = getattr(spec, field, None)
        if isinstance(ref, Ref):
            notes.append(f"{field} {visible(ref.display or ref.path)}")
    return notes


def _show_policies_and_cost(graph: WorkflowGraph) -> None:
    """The policies (its own and ``[tool.stepswitch] policies``) and their verdicts, and
    the worst-case cost (SW207), for a workflow with policies or a cost ceiling; nothing
    (and no analysis) otherwise."""
    from stepswitch.policies import as_spec, policies_from_pyproject, prices_from_pyproject

    spec = graph.spec
    # [tool.stepswitch] policies: those that apply to this workflow
    extra = [as_spec(p) for p in policies_from_pyproject(workflow=spec.name)]
    every = [*spec.policies, *extra]
    if not every and spec.max_cost_usd is None and spec.max_total_tokens is None:
        return
    from stepswitch.analysis import analyze

    report = analyze(graph, select=["SW8", "SW206", "SW207", "SW208"], policies=extra,
                     prices=prices_from_pyproject())
    if every:
        print("  policies:")
        for i, policy in enumerate(every):
            found = [d for d in report if d.location.path == f"policies[{i}]"]
            verdict = "holds"
            if found:  # the verdict's why, without its path (check prints that)
                why = found[0].message.removeprefix(f"policy {policy.describe()} ")
                why = why.split("; a run")[0].split("; shortest run")[0]
                verdict = f"{found[0].code} ({found[0].severity}): {why}"
            print(f"    {visible(policy.describe())}: {verdict}")
    for d in report:
        if d.code in ("SW206", "SW207", "SW208"):
            print(f"  cost: {d.code} {visible(d.message)}")


def _node(name: str | None) -> str:
    return "END" if name is None else visible(name)


def _show_flow(spec: WorkflowSpec) -> None:
    """A flow's steps and its edges, one line each, as declared."""
    assert spec.flow is not None
    print(f"  flow: {len(spec.flow)} edge(s), {len(spec.steps)} step(s)")
    for step in spec.steps:
        print(f"    step {visible(step.name)}: {visible(step.input_type.display)} → "
              f"{visible(step.output_type.display)}")
    for e in spec.flow:
        source = visible(e.source)
        uses = f" (max_uses={e.max_uses})" if e.max_uses is not None else ""
        if e.kind == "then":
            print(f"    {source} ─then→ {_node(e.target)}{uses}")
        elif e.kind == "branch":
            when = visible(e.predicate.display) if e.predicate is not None else "?"
            print(f"    {source} ─branch→ {_node(e.target)} when {when}, "
                  f"otherwise {_node(e.otherwise)}{uses}")
        elif e.kind == "route":
            cases = ", ".join(f"{visible(c.value)}: {_node(c.target)}" for c in e.cases)
            print(f"    {source} ─route on {visible(e.field or '?')}→ {{{cases}}}{uses}")
        else:
            limit = f", at most {e.max_items}" if e.max_items is not None else ""
            print(f"    {source} ─fan_out {visible(e.field or '?')}{limit}→ "
                  f"{_node(e.each)} each, then {_node(e.target)}{uses}")
