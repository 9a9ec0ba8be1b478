"""The studio page's data: one JSON document built from TARGETs, trails and a base.

``python -m stepswitch.studio.page [--trail FILE]... [--base REF] TARGET...`` writes it
to stdout (exit 2 with one line on stderr when a TARGET does not load). The server runs
this in a child process each time a watched file changes, so an edited workflow file is
imported afresh, never from a stale ``sys.modules``.

A workflow whose check finds errors is still drawn: its findings are the content.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stepswitch.graph.spec import AgentSpec, WorkflowSpec
from stepswitch.render.scene import Scene

__all__ = ["agent_details", "build_page", "diff_marks", "main", "trace_turns", "trail_turns"]

JSON = dict[str, Any]

_ASSISTANT = frozenset({"message", "call", "reasoning"})


def _loc(spec: Any) -> str:
    location = getattr(spec, "location", None)
    return f"{location.file}:{location.line}" if location is not None else ""


def agent_details(agent: AgentSpec, node: str | None) -> JSON:
    """Everything the side panel shows of one agent."""
    output = None
    if agent.output_type is not None:
        ref = agent.output_type.ref
        output = {"type": ref.display or ref.path, "schema": agent.output_type.schema_}
    pauses = [f"tool {t.name} ({t.needs_approval})" for t in agent.tools
              if t.needs_approval != "never"]
    pauses += [f"agent tool {t.tool_name} ({t.needs_approval})" for t in agent.agent_tools
               if t.needs_approval != "never"]
    return {
        "name": agent.name,
        "node": node,
        "location": _loc(agent),
        "instructions": agent.instructions,
        "instructions_fn": (agent.instructions_fn.display or agent.instructions_fn.path
                            if agent.instructions_fn is not None else None),
        "model": agent.model,
        "model_settings": agent.model_settings,
        "output": output,
        "tool_use_behavior": agent.tool_use_behavior.kind,
        "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters,
                   "strict": t.strict, "needs_approval": t.needs_approval,
                   "location": _loc(t)} for t in agent.tools],
        "handoffs": [{"target": h.target, "tool_name": h.tool_name,
                      "description": h.description, "max_uses": h.max_uses,
                      "input_schema": h.input_schema} for h in agent.handoffs],
        "agent_tools": [{"target": t.target, "tool_name": t.tool_name,
                         "description": t.description, "parameters": t.parameters,
                         "max_turns": t.max_turns, "max_depth": t.max_depth,
                         "needs_approval": t.needs_approval} for t in agent.agent_tools],
        "guardrails": [{"name": g.name, "kind": g.kind}
                       for g in (*agent.input_guardrails, *agent.output_guardrails)],
        "pauses": pauses,
        "findings": [],
    }


def _agent_ids(scene: Scene) -> dict[str, str]:
    return {n.title: n.id for n in scene.nodes if n.kind == "agent"}


def _agent_of(path: str, names: Sequence[str]) -> str | None:
    if not path.startswith("agents."):
        return None
    rest = path[len("agents."):]
    best = None
    for name in names:
        if (rest == name or rest.startswith((name + ".", name + "["))) and (
            best is None or len(name) > len(best)
        ):
            best = name
    return best


def _edge_of(spec: WorkflowSpec, agent: str, path: str, ids: dict[str, str]) -> str | None:
    """``a0->a1`` for a path into one agent's handoffs or agent tools."""
    tail = path[len("agents.") + len(agent):]
    found = next((a for a in spec.agents if a.name == agent), None)
    if found is None:
        return None
    for field in ("handoffs", "agent_tools"):
        prefix = f".{field}["
        if tail.startswith(prefix):
            index = tail[len(prefix):].partition("]")[0]
            items = getattr(found, field)
            if index.isdigit() and int(index) < len(items):
                target = ids.get(items[int(index)].target)
                if target is not None:
                    return f"{ids[agent]}->{target}"
    return None


def _trace_step(step: Any, spec: WorkflowSpec, names: Sequence[str],
                ids: dict[str, str]) -> JSON:
    """One step of a counterexample, placed on the diagram: the node of the agent it is
    in and, for a handoff or an agent tool, the edge it takes."""
    path = str(step.location.path or "")
    agent = _agent_of(path, names)
    return {"message": str(step.message), "path": path,
            "location": f"{step.location.file}:{step.location.line}" if step.location.file
            else "",
            "node": ids.get(agent) if agent else None,
            "edge": _edge_of(spec, agent, path, ids) if agent else None}


def _lights(trace: list[JSON]) -> list[str]:
    """Every node and edge on a counterexample path, once each and in path order; an
    edge brings the node it ends at, so a path that ends in a handoff lights its target."""
    out: list[str] = []
    for step in trace:
        edge = step["edge"]
        for one in (step["node"], edge, edge.partition("->")[2] if edge else None):
            if one and one not in out:
                out.append(one)
    return out


LARGE = 150
"""Scenes with more nodes than this are laid out here, in layers, not by Graphviz, whose
layout of a long chain takes minutes (bench/bench_studio.py, bench/README.md)."""


def _layered_svg(scene: Scene) -> str:
    """The scene as an SVG of the same structure Graphviz writes (``g.node`` and
    ``g.edge``, each titled by its scene id), boxes placed in layers by distance from
    start."""
    from collections import deque

    out_edges: dict[str, list[str]] = {}
    for e in scene.edges:
        out_edges.setdefault(e.source, []).append(e.target)
    depth: dict[str, int] = {}
    queue = deque([n.id for n in scene.nodes if n.kind == "start"][:1])
    for start in queue:
        depth[start] = 0
    while queue:
        here = queue.popleft()
        for there in out_edges.get(here, ()):
            if there not in depth:
                depth[there] = depth[here] + 1
                queue.append(there)
    last = max(depth.values(), default=0)
    width, height, cols = 170.0, 36.0, 8
    layers: dict[int, list[str]] = {}
    for n in scene.nodes:  # unreached nodes go below the rest, the end last of all
        layer = last + 2 if n.kind == "end" else depth.get(n.id, last + 1)
        layers.setdefault(layer, []).append(n.id)
    place: dict[str, tuple[float, float]] = {}
    y = 20.0
    for layer in sorted(layers):  # a wide layer wraps into rows of ``cols`` boxes
        for slot, nid in enumerate(layers[layer]):
            place[nid] = (20 + (slot % cols) * (width + 30), y + (slot // cols) * (height + 20))
        y += ((len(layers[layer]) - 1) // cols) * (height + 20) + height + 40
    parts = []
    for e in scene.edges:
        (x1, y1), (x2, y2) = place[e.source], place[e.target]
        parts.append(f'<g class="edge"><title>{_html(e.source)}->{_html(e.target)}</title>'
                     f'<path fill="none" stroke="#555" d="M{x1 + width / 2:.0f},'
                     f'{y1 + height:.0f}L{x2 + width / 2:.0f},{y2:.0f}"/></g>')
    for n in scene.nodes:
        x, y = place[n.id]
        fill = "#37474f" if n.kind in ("start", "end") else "#ffffff"
        ink = "#ffffff" if n.kind in ("start", "end") else "#000000"
        parts.append(f'<g class="node"><title>{_html(n.id)}</title><polygon fill="{fill}" '
                     f'stroke="#000" points="{x:.0f},{y:.0f} {x + width:.0f},{y:.0f} '
                     f'{x + width:.0f},{y + height:.0f} {x:.0f},{y + height:.0f}"/>'
                     f'<text x="{x + width / 2:.0f}" y="{y + 22:.0f}" text-anchor="middle" '
                     f'font-family="Helvetica" font-size="12" fill="{ink}">{_html(n.title)}'
                     "</text></g>")
    right = 40 + cols * (width + 30)
    bottom = y + 20
    return (f'<svg viewBox="0 0 {right:.0f} {bottom:.0f}" xmlns="http://www.w3.org/2000/svg">'
            f'<g class="graph">{"".join(parts)}</g></svg>')


def _svg(scene: Scene) -> str:
    if len(scene.nodes) > LARGE:
        return _layered_svg(scene)
    from stepswitch.render.dot import scene_to_dot
    from stepswitch.render.graphviz_bin import run_graphviz

    text = run_graphviz(scene_to_dot(scene), "svg").decode("utf-8")
    return text[text.find("<svg"):]  # drop the XML prolog and DOCTYPE


def _workflow(loaded: Any) -> JSON:
    from stepswitch.analysis import analyze
    from stepswitch.render import scene_for

    graph = loaded.workflow.graph()  # built once: the report and both views share it
    spec: WorkflowSpec = graph.spec
    report = analyze(graph)
    scene = scene_for(graph, report=report)
    ids = _agent_ids(scene)
    names = [a.name for a in spec.agents]
    agents: dict[str, JSON] = {a.name: agent_details(a, ids.get(a.name)) for a in spec.agents}
    findings = []
    for i, d in enumerate(report.diagnostics):
        path = str(d.location.path or "")
        agent = _agent_of(path, names)
        trace = [_trace_step(s, spec, names, ids) for s in d.trace]
        findings.append({
            "code": str(d.code), "severity": str(getattr(d.severity, "value", d.severity)),
            "message": str(d.message), "path": path,
            "location": f"{d.location.file}:{d.location.line}" if d.location.file else "",
            "agent": agent, "node": ids.get(agent) if agent else "n_start",
            "edge": _edge_of(spec, agent, path, ids) if agent else None,
            "trace": trace, "lights": _lights(trace),
        })
        if agent is not None:
            agents[agent]["findings"].append(i)
    machine = None
    try:
        machine = _svg(scene_for(graph, report=report, view="machine"))
    except Exception as exc:  # a workflow with errors has no machine; say why on the page
        machine = f"<p class='none'>no machine view: {_html(str(exc).splitlines()[0])}</p>"
    return {"label": loaded.label, "name": spec.name, "entry": spec.entry,
            "svg": _svg(scene), "machine": machine, "agents": agents, "nodes": ids,
            "findings": findings, "spec": spec}


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- a recorded run ------------------------------------------------------------------------


def _raw_items(text: bytes, doc: Any) -> list[dict[str, Any]]:
    """The items as dicts, in trail order (a state's or recording's input first, then its
    items)."""
    from stepswitch.review.file_kinds import case_trail
    from stepswitch.runtime.record import RECORD_FORMAT

    case = case_trail(doc)
    if case is not None:  # a recorded case: the run is the trail inside it
        doc = case[0]
        text = json.dumps(doc).encode("utf-8")
    if isinstance(doc, list):
        return [r if isinstance(r, dict) else {} for r in doc]
    if isinstance(doc, dict) and doc.get("format") == RECORD_FORMAT:
        return [r if isinstance(r, dict) else {}
                for r in (*doc.get("input", []), *doc.get("items", []))]
    from stepswitch.runtime.state_json import _item, load_state

    try:
        state = load_state(text)
    except Exception:
        body = doc.get("body", {}) if isinstance(doc, dict) else {}
        return [*body.get("input", []), *body.get("items", [])]
    return [_item(x) for x in (*state.input, *state.items)]


def _text_of(raw: dict[str, Any]) -> str | None:
    content = raw.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or p.get("refusal") or "") for p in content
                       if isinstance(p, dict))
    return None


def _refusal(trail: Any, spec: WorkflowSpec) -> str | None:
    """Why a trail is not a run of ``spec``, or None."""
    if trail.workflow is not None and trail.workflow != spec.name:
        return (f"this run is of workflow {trail.workflow!r}, not {spec.name!r}: open it "
                "beside the workflow it was recorded with")
    names = {a.name for a in spec.agents}
    for item in trail.items:
        if item.agent is not None and item.agent not in names:
            return (f"item {item.where} was made by agent {item.agent!r}, which "
                    f"{spec.name!r} does not have")
    return None


def trail_turns(path: str, spec: WorkflowSpec, ids: dict[str, str]) -> JSON:
    """A recorded run of ``spec`` cut into model turns, each with its step and items; or
    the reason it is refused."""
    from stepswitch.ir import MachineIR
    from stepswitch.review.trail import TrailError, check_trail, read_trail

    out: JSON = {"label": path, "refused": None, "turns": [], "findings": []}
    try:
        text = Path(path).read_bytes()
        trail = read_trail(text)
        doc = json.loads(text)
    except OSError as exc:
        out["refused"] = f"cannot read {path}: {exc.strerror or exc}"
        return out
    except TrailError as exc:
        out["refused"] = f"{path}: {exc}"
        return out
    refused = _refusal(trail, spec)
    if refused is not None:
        out["refused"] = refused
        return out
    raws = _raw_items(text, doc)
    agents: dict[str, AgentSpec] = {a.name: a for a in spec.agents}
    machine: MachineIR | None = None
    try:
        from stepswitch.compiler.lower import lower

        machine = lower(spec)
    except Exception:  # what does not lower is not replayed; its pins are still checked
        machine = None
    report = check_trail(trail, machine)
    out["findings"] = [{"code": f.code, "message": f.message, "where": f.where}
                       for f in report.findings]
    current: str | None = spec.entry
    turns: list[JSON] = []
    turn: JSON | None = None
    prev = None
    pending = set(trail.pending_calls)
    for item in trail.items:
        raw = raws[item.position] if item.position < len(raws) else {}
        starts = item.kind in _ASSISTANT and (turn is None or prev not in _ASSISTANT)
        if turn is None or starts or (item.kind == "input" and prev != "input"):
            agent = item.agent or current
            turn = {"agent": agent, "node": ids.get(agent or ""), "items": [],
                    "step": "Input" if item.kind == "input" else "RunAgain", "path": []}
            turns.append(turn)
        shown = {"kind": item.kind, "where": item.where, "name": item.name,
                 "call_id": item.call_id, "agent": item.agent, "output": item.output,
                 "arguments": raw.get("arguments"), "text": _text_of(raw),
                 "pending": item.call_id in pending and item.kind == "call"}
        turn["items"].append(shown)
        if item.kind == "output" and item.handoff and item.target:
            current = item.target
        elif item.kind == "output" and turn["agent"] in agents:
            for h in agents[turn["agent"]].handoffs:
                if h.tool_name == _call_name(turn, item.call_id):
                    current = h.target
        prev = item.kind
    visited: list[str] = []
    for t in turns:
        _step(t, agents, visited, ids)
    out["turns"] = turns
    return out


def _call_name(turn: JSON, call_id: str | None) -> str | None:
    for shown in turn["items"]:
        if shown["kind"] == "call" and shown["call_id"] == call_id:
            name: str | None = shown["name"]
            return name
    return None


def _step(turn: JSON, agents: dict[str, AgentSpec], visited: list[str],
          ids: dict[str, str]) -> None:
    items = turn["items"]
    node = turn["node"]
    if node and node not in visited:
        visited.append(node)
    turn["path"] = list(visited)
    if turn["step"] == "Input":
        return
    agent = agents.get(turn["agent"] or "")
    handoff_names = {h.tool_name: h.target for h in agent.handoffs} if agent else {}
    for shown in items:
        if shown["kind"] == "approval" or shown["pending"]:
            turn["step"] = "Interruption"
            return
    for shown in items:
        if shown["kind"] == "call" and shown["name"] in handoff_names:
            turn["step"] = f"Handoff → {handoff_names[shown['name']]}"
            target = ids.get(handoff_names[shown["name"]])
            if target and target not in visited:
                visited.append(target)
            turn["path"] = list(visited)
            return
    calls = any(s["kind"] == "call" for s in items)
    turn["step"] = "RunAgain" if calls else "Final"


def trace_turns(path: str, spec: WorkflowSpec, ids: dict[str, str]) -> JSON:
    """A run recorded as OpenTelemetry spans (``stepswitch run --trace FILE.jsonl``) cut
    into model turns: one per ``chat`` span, with the tool calls and the approval,
    decision and handoff events that follow it; or the reason it is refused."""
    from stepswitch.errors import UserError
    from stepswitch.otel import read_spans

    out: JSON = {"label": path, "refused": None, "turns": [], "findings": []}
    try:
        spans = read_spans(path)
    except UserError as exc:
        out["refused"] = exc.summary
        return out
    names = {a.name for a in spec.agents}
    by_id = {s.span_id: s for s in spans}
    for s in spans:
        other = s.attributes.get("gen_ai.workflow.name")
        if other is not None and other != spec.name:
            out["refused"] = (f"this trace is of workflow {other!r}, not {spec.name!r}: open "
                              "it beside the workflow it was recorded with")
            return out

    def agent_of(span: Any) -> str | None:
        while span is not None:
            if span.attributes.get("gen_ai.operation.name") == "invoke_agent":
                name: str | None = span.attributes.get("gen_ai.agent.name")
                return name
            span = by_id.get(span.parent_id) if span.parent_id else None
        return None

    timeline: list[tuple[int, int, JSON]] = []
    for s in spans:
        op = s.attributes.get("gen_ai.operation.name")
        if op == "chat":
            timeline.append((s.start_ns, 0, {"turn": s.attributes.get("stepswitch.step", "?"),
                                             "agent": agent_of(s)}))
        elif op == "execute_tool":
            timeline.append((s.start_ns, 1, {
                "kind": "call", "name": s.attributes.get("gen_ai.tool.name"),
                "call_id": s.attributes.get("gen_ai.tool.call.id")}))
        for e in s.events:
            attrs = e.get("attributes", {})
            event = str(e.get("name", "")).removeprefix("stepswitch.")
            shown: JSON = {"kind": event, "name": attrs.get("gen_ai.tool.name"),
                           "call_id": attrs.get("gen_ai.tool.call.id")}
            if event == "handoff":
                shown["text"] = f"to {attrs.get('gen_ai.agent.name')}"
            elif event == "approval.decided":
                shown["text"] = "approved" if attrs.get("stepswitch.approved") else "rejected"
            timeline.append((int(e.get("time_ns", 0)), 1, shown))
    timeline.sort(key=lambda t: (t[0], t[1]))
    turns: list[JSON] = []
    visited: list[str] = []
    for _, _, entry in timeline:
        if "turn" in entry:
            agent = entry["agent"]
            if agent is not None and agent not in names:
                out["refused"] = (f"a turn of this trace was made by agent {agent!r}, which "
                                  f"{spec.name!r} does not have")
                return out
            node = ids.get(agent or "")
            if node and node not in visited:
                visited.append(node)
            turns.append({"agent": agent, "node": node, "step": str(entry["turn"]),
                          "items": [], "path": list(visited)})
        elif turns:
            item = {"where": "", "agent": None, "output": None, "arguments": None,
                    "text": None, "pending": False, **entry}
            turns[-1]["items"].append(item)
            if entry["kind"] == "handoff" and turns[-1]["step"] == "Handoff":
                target = entry["text"].removeprefix("to ")
                turns[-1]["step"] = f"Handoff → {target}"
                if (node := ids.get(target)) and node not in visited:
                    visited.append(node)
                turns[-1]["path"] = list(visited)
    out["turns"] = turns
    return out


# -- a change --------------------------------------------------------------------------------


def diff_marks(base: WorkflowSpec, head: WorkflowSpec, ids: dict[str, str], label: str,
               modules: tuple[str, str] | None = None) -> JSON:
    """``stepswitch diff`` from ``base`` to ``head``, each change placed on a node."""
    from stepswitch.review.diff import CATEGORIES, diff_specs

    found = diff_specs(base, head, modules=modules)
    rank: dict[str, int] = {c: i for i, c in enumerate(CATEGORIES)}
    nodes: dict[str, str] = {}
    changes = []
    names = [a.name for a in head.agents] + [a.name for a in base.agents]
    for c in found.changes:
        agent = _agent_of(c.path, names)
        node = ids.get(agent) if agent else None
        changes.append({"category": c.category, "kind": c.kind, "path": c.path,
                        "message": c.message, "node": node})
        if node is not None and (node not in nodes or rank[c.category] < rank[nodes[node]]):
            nodes[node] = c.category
    return {"base": label, "changes": changes, "nodes": nodes,
            "counts": found.counts()}


# -- the document ----------------------------------------------------------------------------


def build_page(targets: Sequence[str], trails: Sequence[str] = (), base: str | None = None,
               traces: Sequence[str] = ()) -> JSON:
    """The whole page's data. ``base`` is a git ref; with two TARGETs and no base, the
    first is the base of the second."""
    from stepswitch.targets.load import load_targets
    from stepswitch.targets.sides import Side, load_side

    before = set(sys.modules)
    loaded = load_targets(list(targets))
    base_spec: tuple[str, WorkflowSpec, str] | None = None
    if base is None and len(targets) == 2 and len(loaded) == 2:
        base_spec = (loaded[0].label, loaded[0].workflow.to_spec(), loaded[0].module)
        loaded = loaded[1:]
    workflows = [_workflow(w) for w in loaded]
    if base is not None and workflows:
        sides = load_side(Side(f"git:{base}:{targets[0]}", targets[0], base))
        match = next((s for s in sides if s.attribute == loaded[0].attribute), None)
        if match is None:
            from stepswitch.errors import TargetError

            raise TargetError(f"--base {base}: {loaded[0].label} has no counterpart at {base}")
        base_spec = (match.label, match.spec, match.module)
    # the workflow's module and every module of the project it imported (agents kept in
    # a module of their own), not the interpreter's or installed packages' files
    own = Path(__file__).resolve().parents[1]  # stepswitch's own package folder
    library = tuple({str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, own)})
    imported = {w.module for w in loaded} | (set(sys.modules) - before)
    watched = sorted({
        str(Path(file).resolve()) for name in imported
        if isinstance(file := getattr(sys.modules.get(name), "__file__", None), str)
        and not str(Path(file).resolve()).startswith(library)})
    watched += [str(Path(t).resolve()) for t in (*trails, *traces)]
    for w in workflows:
        spec = w.pop("spec")
        w["trails"] = [trail_turns(t, spec, w["nodes"]) for t in trails]
        w["trails"] += [trace_turns(t, spec, w["nodes"]) for t in traces]
        for run in w["trails"]:  # the page steps through turns: a run needs one
            if run["refused"] is None and not run["turns"]:
                run["refused"] = "it holds no turns (no items, no spans of a model call)"
        w["diff"] = (diff_marks(base_spec[1], spec, w["nodes"], base_spec[0],
                                (base_spec[2], loaded[0].module))
                     if base_spec is not None and w is workflows[0] else None)
    return {"workflows": workflows, "watched": watched}


def _one_line(message: str) -> str:
    """A user's traceback as one line: its first line and its exception (the last)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) <= 1:
        return message.strip()
    return f"{lines[0].rstrip(':')}: {lines[-1]}"


def main(argv: Sequence[str] | None = None) -> int:
    from stepswitch.errors import TargetError, UserError

    parser = argparse.ArgumentParser(prog="stepswitch.studio.page")
    parser.add_argument("targets", nargs="+")
    parser.add_argument("--trail", action="append", default=[])
    parser.add_argument("--trace", action="append", default=[])
    parser.add_argument("--base", default=None)
    args = parser.parse_args(argv)
    try:
        doc = build_page(args.targets, args.trail, args.base, args.trace)
    except TargetError as exc:
        print(_one_line(str(exc)), file=sys.stderr)
        return 2
    except UserError as exc:
        print(exc.summary, file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps(doc, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
