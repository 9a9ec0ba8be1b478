"""The flow part of ``diff_specs``: ``@step`` nodes and flow edges. Not API.

A step removed or renamed breaks saved states paused in a flow (they name the node they
stopped at): ``state``. Edges are keyed by their source node (a node has one way out):
an edge removed or redirected, a route case gone, is ``structure`` (where a run goes
next, not what it has saved); a budget raised or removed (``max_uses`` of an edge,
``max_items`` of a fan-out) or a fan-out's ``concurrency`` raised is ``safety``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stepswitch.graph.spec import WorkflowSpec

__all__ = ["diff_flow"]

Add = Callable[..., None]


def _node(name: str | None) -> str:
    return "END" if name is None else repr(name)


def _ref(ref: Any) -> str | None:
    return None if ref is None else str(ref.path)


def diff_flow(base: WorkflowSpec, head: WorkflowSpec, add: Add, limit: Add) -> None:
    """Report every change of the flow through ``add(category, kind, path, message,
    base_loc, head_loc, subject)`` and ``limit(path, what, before, after, bl, hl,
    subject)`` (the differ's own)."""
    bl, hl = base.location, head.location
    w = ("workflow",)
    b_steps = {s.name: s for s in reversed(getattr(base, "steps", ()))}
    h_steps = {s.name: s for s in reversed(getattr(head, "steps", ()))}
    for name, step in b_steps.items():
        after = h_steps.get(name)
        if after is None:
            add("state", "removed", f"steps.{name}",
                f"step {name!r} removed: saved states paused in the flow after it cannot "
                "resume", step.location, None, ("step", name))
            continue
        p = f"steps.{name}"
        if step.ref.path != after.ref.path:
            add("structure", "changed", f"{p}.ref",
                f"step {name!r} runs another function: {step.ref.path} → {after.ref.path}",
                step.location, after.location, ("step", name))
        if _ref(step.input_type) != _ref(after.input_type) or _ref(step.output_type) != _ref(
            after.output_type
        ):
            add("structure", "changed", f"{p}.types",
                f"step {name!r} takes {_ref(after.input_type)} and gives "
                f"{_ref(after.output_type)} (was {_ref(step.input_type)} → "
                f"{_ref(step.output_type)})", step.location, after.location, ("step", name))
    for name, step in h_steps.items():
        if name not in b_steps:
            add("structure", "added", f"steps.{name}", f"step {name!r} added", None,
                step.location, ("step", name))

    b_flow, h_flow = getattr(base, "flow", None), getattr(head, "flow", None)
    if b_flow is None and h_flow is None:
        return
    if b_flow is None or h_flow is None:
        if h_flow is None:
            add("state", "removed", "flow", "the flow is gone: the workflow is its entry "
                "agent's run again; saved states of the flow cannot resume", bl, hl, w)
        else:
            add("structure", "added", "flow", "a flow chains the agents now", bl, hl, w)
        return
    b_edges = {e.source: e for e in reversed(b_flow)}
    h_edges = {e.source: e for e in reversed(h_flow)}
    for source, edge in b_edges.items():
        after = h_edges.get(source)
        p = f"flow.{source}"
        if after is None:
            add("structure", "removed", p, f"flow edge out of {source!r} ({edge.kind}) removed",
                edge.location, None, ("flow", source))
            continue
        el, al = edge.location, after.location
        if edge.kind != after.kind or edge.targets() != after.targets() or (
            edge.each != after.each
        ):
            add("structure", "changed", p,
                f"flow edge out of {source!r}: {edge.kind} to "
                f"{', '.join(map(_node, edge.targets()))} → {after.kind} to "
                f"{', '.join(map(_node, after.targets()))}", el, al, ("flow", source))
        elif edge.field != after.field or _ref(edge.predicate) != _ref(after.predicate):
            add("structure", "changed", f"{p}.condition",
                f"flow edge out of {source!r} decides on another field or predicate", el, al,
                ("flow", source))
        limit(f"{p}.max_uses", f"max_uses of the flow edge out of {source!r}",
              edge.max_uses, after.max_uses, el, al, ("flow", source))
        limit(f"{p}.max_items", f"max_items of the fan-out out of {source!r}",
              edge.max_items, after.max_items, el, al, ("flow", source))
        limit(f"{p}.concurrency", f"concurrency of the fan-out out of {source!r}",
              edge.concurrency, after.concurrency, el, al, ("flow", source))
    for source, edge in h_edges.items():
        if source not in b_edges:
            add("structure", "added", f"flow.{source}",
                f"flow edge out of {source!r} ({edge.kind} to "
                f"{', '.join(map(_node, edge.targets()))}) added", None, edge.location,
                ("flow", source))
