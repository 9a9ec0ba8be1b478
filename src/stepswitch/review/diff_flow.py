"""The flow part of ``diff_specs``: ``@step`` nodes and flow edges. Not API.

A step removed or renamed breaks saved states paused in a flow (they name the node they
stopped at): ``state``. A step under a new name is matched to the old one when it runs
the same function, or failing that when its types and the flow edges into and out of it
are the same (a renamed ``def``), so a rename is one change, and edges are compared
through the renames of steps and agents. Edges are keyed by their source node (a node
has one way out): an edge removed or redirected, a route case gone, is ``structure``
(where a run goes next, not what it has saved); a budget raised or removed
(``max_uses`` of an edge, ``max_items`` of a fan-out) or a fan-out's ``concurrency``
raised is ``safety``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from stepswitch.graph.spec import FlowEdgeSpec, Ref, StepSpec, WorkflowSpec
from stepswitch.review._diff_base import _content, _match

__all__ = ["diff_flow", "local_refs"]

_M = TypeVar("_M", bound=BaseModel)

Add = Callable[..., None]


def _node(name: str | None) -> str:
    return "END" if name is None else repr(name)


def _ref(ref: Any) -> str | None:
    return None if ref is None else str(ref.path)


def local_refs(spec: _M, module: str) -> _M:
    """``spec`` with every reference into ``module`` (or a submodule) written as its
    qualname alone: two copies of one file under different module names compare equal."""
    return _localized(spec, module)  # type: ignore[no-any-return]


def _localized(value: Any, module: str) -> Any:
    if isinstance(value, Ref):
        mod, sep, rest = value.path.partition(":")
        if not sep:
            return value
        # a generic alias names its arguments inside: <object>:list[app.Section]
        inner = re.sub(rf"(?<![\w.]){re.escape(module)}\.(?=\w)", "", rest)
        if mod == module:
            path = inner
        elif mod.startswith(module + "."):
            path = f"{mod[len(module):]}:{inner}"
        else:
            path = f"{mod}:{inner}"
        return value if path == value.path else value.model_copy(update={"path": path})
    if isinstance(value, BaseModel):
        update = {}
        for name in type(value).model_fields:
            item = getattr(value, name)
            new = _localized(item, module)
            if new is not item:
                update[name] = new
        return value.model_copy(update=update) if update else value
    if isinstance(value, tuple):
        items = tuple(_localized(v, module) for v in value)
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _renamed_ref(path: str, old: str, new: str) -> str:
    """A step's function path as it reads when the ``def`` was renamed with the step."""
    mod, sep, qualname = path.rpartition(":")
    return f"{mod}{sep}{new}" if qualname == old else path


def _slots(edge: FlowEdgeSpec) -> list[tuple[str, str | None]]:
    """Each way an edge leads on, named by its place in the edge (None is END)."""
    if edge.kind == "route":
        return [(f"case {c.value}", c.target) for c in edge.cases]
    if edge.kind == "branch":
        return [("yes", edge.target), ("no", edge.otherwise)]
    if edge.kind == "fan_out":
        return [("each", edge.each), ("then", edge.target)]
    return [("then", edge.target)]


def _shape(step: StepSpec, flow: Sequence[FlowEdgeSpec], moved: Mapping[str, str]) -> str:
    """What identifies a step but its name: its types, and where the flow leads into and
    out of it (its own name a placeholder, other nodes through ``moved``). Budgets,
    fields and predicates are left out: a rename may come with a retuned edge."""
    me = step.name

    def spell(node: str | None) -> str | None:
        if node == me:
            return "\0self"
        return None if node is None else moved.get(node, node)

    out = [[e.kind, [(slot, spell(t)) for slot, t in _slots(e)]]
           for e in flow if e.source == me]
    into = sorted([spell(e.source) or "", e.kind, slot]
                  for e in flow for slot, t in _slots(e) if t == me)
    return json.dumps([_content(step, "name", "ref"), out, into])


def _match_steps(
    base: WorkflowSpec,
    head: WorkflowSpec,
    b_steps: dict[str, StepSpec],
    h_steps: dict[str, StepSpec],
    agents: Mapping[str, str],
) -> dict[str, str]:
    """base → head names of renamed steps: the same function under a new step name, or
    else one pair alone with the same types and the same flow edges in and out (the
    step's own name aside, agent renames applied)."""
    removed = [n for n in b_steps if n not in h_steps]
    added = [n for n in h_steps if n not in b_steps]
    renamed = _match(removed, added, lambda n: b_steps[n].ref.path,
                     lambda n: h_steps[n].ref.path)
    b_flow = getattr(base, "flow", None) or ()
    h_flow = getattr(head, "flow", None) or ()
    while True:  # a match can make its neighbour's edges agree: go round until none is new
        left = [n for n in removed if n not in renamed]
        taken = set(renamed.values())
        free = [n for n in added if n not in taken]
        if not left or not free:
            return renamed
        moved = {**agents, **renamed}
        b_shapes = {n: _shape(b_steps[n], b_flow, moved) for n in left}
        h_shapes = {n: _shape(h_steps[n], h_flow, {}) for n in free}
        found = _match(left, free, b_shapes.__getitem__, h_shapes.__getitem__)
        if not found:
            return renamed
        renamed.update(found)


def diff_flow(
    base: WorkflowSpec,
    head: WorkflowSpec,
    add: Add,
    limit: Add,
    agents: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Report every change of the flow through ``add(category, kind, path, message,
    base_loc, head_loc, subject)`` and ``limit(path, what, before, after, bl, hl,
    subject)`` (the differ's own); ``agents`` maps renamed agents' base names to their
    head names. Returns the renamed steps likewise."""
    bl, hl = base.location, head.location
    w = ("workflow",)
    b_steps = {s.name: s for s in reversed(getattr(base, "steps", ()))}
    h_steps = {s.name: s for s in reversed(getattr(head, "steps", ()))}
    renamed = _match_steps(base, head, b_steps, h_steps, agents or {})
    moved = {**(agents or {}), **renamed}

    def node(name: str | None) -> str | None:
        return None if name is None else moved.get(name, name)

    for old, step in b_steps.items():
        name = renamed.get(old, old)
        after = h_steps.get(name)
        if after is None:
            add("state", "removed", f"steps.{name}",
                f"step {name!r} removed: saved states paused in the flow after it cannot "
                "resume", step.location, None, ("step", name))
            continue
        p = f"steps.{name}"
        ref = step.ref.path
        if old != name:
            add("state", "renamed", p,
                f"step {old!r} renamed to {name!r}: saved states paused in the flow after "
                "it name the old step", step.location, after.location, ("step", name))
            ref = _renamed_ref(ref, old, name)
        if ref != after.ref.path:
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
    heads = set(renamed.values())
    for name, step in h_steps.items():
        if name not in b_steps and name not in heads:
            add("structure", "added", f"steps.{name}", f"step {name!r} added", None,
                step.location, ("step", name))

    b_flow, h_flow = getattr(base, "flow", None), getattr(head, "flow", None)
    if b_flow is None and h_flow is None:
        return renamed
    if b_flow is None or h_flow is None:
        if h_flow is None:
            add("state", "removed", "flow", "the flow is gone: the workflow is its entry "
                "agent's run again; saved states of the flow cannot resume", bl, hl, w)
        else:
            add("structure", "added", "flow", "a flow chains the agents now", bl, hl, w)
        return renamed
    b_edges = {node(e.source) or "": e for e in reversed(b_flow)}
    h_edges = {e.source: e for e in reversed(h_flow)}
    for source, edge in b_edges.items():
        after = h_edges.get(source)
        p = f"flow.{source}"
        if after is None:
            add("structure", "removed", p, f"flow edge out of {source!r} ({edge.kind}) removed",
                edge.location, None, ("flow", source))
            continue
        el, al = edge.location, after.location
        if edge.kind != after.kind or tuple(map(node, edge.targets())) != after.targets() or (
            node(edge.each) != after.each
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
    return renamed
