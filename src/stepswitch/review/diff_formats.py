"""Output formats of ``stepswitch diff``: text, JSON, GitHub annotations, Mermaid.

Each is a pure function from compared pairs to a string. ``failing`` is the set of
categories that ``--fail-on`` names: the text marks them and GitHub annotations of
those categories are errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.graph.spec import Location
from stepswitch.render.mermaid import mermaid_escape
from stepswitch.review.diff import CATEGORIES, Category, Change, SpecDiff

__all__ = ["DIFF_FORMATS", "Compared", "github", "json_doc", "mermaid", "text"]


@dataclass(frozen=True, slots=True)
class Compared:
    """One compared pair: how each side is named, and the diff; or a workflow found on
    one side only (``diff`` None, ``base`` or ``head`` None)."""

    base: str | None
    head: str | None
    diff: SpecDiff | None

    def categories(self) -> frozenset[Category]:
        if self.diff is not None:
            return self.diff.categories()
        return frozenset({"state"} if self.head is None else {"structure"})


def _lone(pair: Compared) -> tuple[Category, str]:
    """The category and message of a workflow found on one side only."""
    if pair.head is None:
        return "state", (f"workflow {pair.base} removed: its saved states and running "
                         "durable runs cannot resume")
    return "structure", f"workflow {pair.head} added"


_TITLES: dict[Category, str] = {
    "state": "state: saved states and running durable runs break",
    "model": "model: what the model is sent changes",
    "safety": "safety: a safety property weakens",
    "structure": "structure: added or reshaped, nothing weakened",
    "cosmetic": "cosmetic: nothing a run observes",
}


def _loc(loc: Location | None) -> str:
    return "-" if loc is None else f"{loc.file}:{loc.line}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary(diff: SpecDiff) -> str:
    counts = diff.counts()
    parts = ", ".join(f"{counts[c]} {c}" for c in CATEGORIES)
    return f"{_plural(len(diff.changes), 'change')} ({parts})"


def text(pairs: Sequence[Compared], failing: Collection[Category] = ()) -> str:
    """Changes grouped by category, each with file:line on both sides."""
    lines: list[str] = []
    for pair in pairs:
        diff = pair.diff
        if diff is None:
            category, message = _lone(pair)
            mark = "  [--fail-on]" if category in failing else ""
            lines.append(f"{category}: {message}{mark}")
            continue
        lines.append(f"{pair.base} → {pair.head}")
        if not diff.changes:
            lines.append("  no changes")
        for category in CATEGORIES:
            changes = diff.of(category)
            if not changes:
                continue
            mark = "  [--fail-on]" if category in failing else ""
            lines.append(f"  {_TITLES[category]} ({len(changes)}){mark}")
            for c in changes:
                lines.append(f"    {c.path}: {c.message}")
                lines.append(f"      base {_loc(c.base)}  head {_loc(c.head)}")
        lines.append(f"  {_summary(diff)}")
    failed = sorted({c for p in pairs for c in p.categories() if c in failing},
                    key=CATEGORIES.index)
    if failed:
        lines.append(f"failed: {', '.join(failed)} changed (--fail-on)")
    return "\n".join(lines) + "\n"


def _location(loc: Location | None) -> dict[str, Any] | None:
    return None if loc is None else {"file": loc.file, "line": loc.line, "column": loc.column}


def _change(c: Change) -> dict[str, Any]:
    return {
        "category": c.category,
        "kind": c.kind,
        "path": c.path,
        "message": c.message,
        "base": _location(c.base),
        "head": _location(c.head),
    }


def json_doc(pairs: Sequence[Compared], failing: Collection[Category] = ()) -> str:
    """One JSON document: every pair with its changes, counts and bounds."""
    out: list[dict[str, Any]] = []
    for p in pairs:
        if p.diff is None:
            category, message = _lone(p)
            out.append({"base": p.base, "head": p.head,
                        "counts": {c: int(c == category) for c in CATEGORIES},
                        "model_call_bound": None, "renamed_agents": [], "renamed_steps": [],
                        "changes": [{"category": category,
                                     "kind": "removed" if p.head is None else "added",
                                     "path": "workflow", "message": message,
                                     "base": None, "head": None}]})
            continue
        out.append({
            "base": p.base,
            "head": p.head,
            "counts": p.diff.counts(),
            "model_call_bound": {"base": p.diff.base_bound, "head": p.diff.head_bound},
            "renamed_agents": [list(r) for r in p.diff.renamed_agents],
            "renamed_steps": [list(r) for r in p.diff.renamed_steps],
            "changes": [_change(c) for c in p.diff.changes],
        })
    doc = {
        "pairs": out,
        "fail_on": sorted(failing, key=CATEGORIES.index),
        "failed": sorted({c for p in pairs for c in p.categories() if c in failing},
                         key=CATEGORIES.index),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(pairs: Sequence[Compared], failing: Collection[Category] = ()) -> str:
    """One annotation per change, at its head-side line (base-side for removals), then
    the text output. ``--fail-on`` categories are errors, cosmetic changes notices, the
    rest warnings."""
    lines = []
    for pair in pairs:
        if pair.diff is None:
            category, message = _lone(pair)
            command = "error" if category in failing else "warning"
            title = _escape_property(f"stepswitch diff: {category}")
            lines.append(f"::{command} title={title}::{_escape_data(message)}")
            continue
        for c in pair.diff.changes:
            loc = c.head or c.base
            if c.category in failing:
                command = "error"
            elif c.category == "cosmetic":
                command = "notice"
            else:
                command = "warning"
            props = []
            if loc is not None:
                props += [f"file={_escape_property(loc.file)}", f"line={loc.line}"]
            props.append(f"title={_escape_property(f'stepswitch diff: {c.category}')}")
            message = c.message
            if c.head is None and c.base is not None:
                message += f" (was at {_loc(c.base)} in {pair.base})"
            lines.append(f"::{command} {','.join(props)}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines) + text(pairs, failing)


# -- Mermaid -------------------------------------------------------------------------------

_STYLES = {
    "added": "fill:#e8f5e9,stroke:#2e7d32,stroke-width:2px",
    "removed": "fill:#ffebee,stroke:#c62828,stroke-width:2px,stroke-dasharray:5 3",
    "changed": "fill:#fff8e1,stroke:#f57f17,stroke-width:2px",
    "renamed": "fill:#e3f2fd,stroke:#1565c0,stroke-width:2px",
}
_LINKS = {
    "added": "stroke:#2e7d32,stroke-width:2px",
    "removed": "stroke:#c62828,stroke-width:2px,stroke-dasharray:5 3",
    "changed": "stroke:#f57f17,stroke-width:2px",
}
_MARK = {"added": "+ ", "removed": "- ", "changed": "~ ", "renamed": "~ "}


def _status(changes: Sequence[Change]) -> str | None:
    kinds = {c.kind for c in changes}
    for kind in ("removed", "added", "renamed", "changed"):
        if kind in kinds:
            return kind
    return None


def mermaid(pairs: Sequence[Compared], failing: Collection[Category] = ()) -> str:
    """The merged graph of one pair: every agent and edge of either side, styled as
    added, removed, renamed or changed; a node lists its changed tools and guardrails."""
    if len(pairs) != 1 or pairs[0].diff is None:
        raise ValueError("the Mermaid format draws one compared pair")
    return _merged(pairs[0].diff)


def _merged(diff: SpecDiff) -> str:
    base, head = diff.base, diff.head
    renamed = dict(diff.renamed_agents)
    back = {new: old for old, new in renamed.items()}
    by_subject: dict[tuple[str, ...], list[Change]] = {}
    for c in diff.changes:
        by_subject.setdefault(c.subject, []).append(c)

    names: list[str] = []
    seen: set[str] = set()
    for a in head.agents:
        if a.name not in seen:
            seen.add(a.name)
            names.append(a.name)
    removed_agents = []
    for a in base.agents:
        if a.name not in seen and a.name not in renamed:
            seen.add(a.name)
            removed_agents.append(a.name)
    names.extend(removed_agents)
    ids = {name: f"a{i}" for i, name in enumerate(names)}

    lines = ["flowchart TD"]
    classes: dict[str, list[str]] = {}
    for name in names:
        own = by_subject.get(("agent", name), [])
        status = "removed" if name in removed_agents else _status(own)
        title = mermaid_escape(name)
        if name in back:
            title = f"{mermaid_escape(back[name])} → {title}"
            status = "renamed"
        details: list[str] = []
        for subject, changes in by_subject.items():
            if len(subject) == 3 and subject[0] in ("tool", "guardrail") and subject[1] == name:
                kind = _status(changes) or "changed"
                label = "tool" if subject[0] == "tool" else "guardrail"
                details.append(f"{_MARK[kind]}{label}: {mermaid_escape(subject[2])}")
        if status is None and details:
            status = "changed"
        for c in own:
            if c.kind == "changed" and c.path.rsplit(".", 1)[-1] in (
                "instructions", "output_type", "model", "model_settings"
            ):
                details.append(f"~ {mermaid_escape(c.path.rsplit('.', 1)[-1])}")
        label = f"<b>{title}</b>" + "".join(f"<br/>{d}" for d in details)
        lines.append(f'    {ids[name]}["{label}"]')
        if status is not None:
            classes.setdefault(status, []).append(ids[name])

    edges: list[tuple[str, str, str, str, str | None]] = []  # src, arrow, dst, label, status
    done: set[tuple[str, str]] = set()
    for spec, side in ((head, "head"), (base, "base")):
        for agent in spec.agents:
            src = agent.name if side == "head" else renamed.get(agent.name, agent.name)
            if src not in ids:
                continue
            for kind, edge_list in (("handoff", agent.handoffs), ("tool", agent.agent_tools)):
                for edge in edge_list:
                    target = edge.target if side == "head" else renamed.get(edge.target,
                                                                            edge.target)
                    key = (src, edge.tool_name)
                    if key in done or target not in ids:
                        continue
                    status = _status(by_subject.get(("edge", src, edge.tool_name), []))
                    if status == "renamed":
                        status = "changed"
                    if side == "base":
                        gone = src in removed_agents or target in removed_agents
                        if status != "removed" and not gone:
                            continue  # unchanged, or there under its new name
                        status = "removed"
                    done.add(key)
                    arrow = "-->" if kind == "handoff" else "<-.->"
                    label = edge.tool_name
                    max_uses = getattr(edge, "max_uses", None)
                    if max_uses is not None:
                        label += f" ≤{max_uses}"
                    edges.append((ids[src], arrow, ids[target], label, status))
    _flow(diff, by_subject, ids, lines, classes, edges)
    for src, arrow, dst, label, _ in edges:
        lines.append(f'    {src} {arrow}|"{mermaid_escape(label)}"| {dst}')
    for status in ("added", "removed", "changed", "renamed"):
        if status in classes:
            lines.append(f"    classDef {status} {_STYLES[status]}")
    for status in ("added", "removed", "changed", "renamed"):
        if status in classes:
            lines.append(f"    class {','.join(classes[status])} {status}")
    if head.entry in ids:
        lines.append("    classDef entry stroke-width:3px")
        lines.append(f"    class {ids[head.entry]} entry")
    for status in ("added", "removed", "changed"):
        index = [str(i) for i, e in enumerate(edges) if e[4] == status]
        if index:
            lines.append(f"    linkStyle {','.join(index)} {_LINKS[status]}")
    return "\n".join(lines) + "\n"


def _flow_targets(edge: Any) -> list[tuple[str | None, str]]:
    """Where a flow edge leads, each with its label (None is END)."""
    if edge.kind == "branch":
        return [(edge.target, "yes"), (edge.otherwise, "no")]
    if edge.kind == "route":
        return [(c.target, f"{edge.field} = {c.value}") for c in edge.cases]
    if edge.kind == "fan_out":
        return [(edge.each, f"each {edge.field}"), (edge.target, "then")]
    return [(edge.target, "then")]


def _flow(
    diff: SpecDiff,
    by_subject: dict[tuple[str, ...], list[Change]],
    ids: dict[str, str],
    lines: list[str],
    classes: dict[str, list[str]],
    edges: list[tuple[str, str, str, str, str | None]],
) -> None:
    """Step nodes and flow edges of both versions (a workflow with a flow)."""
    base_flow = getattr(diff.base, "flow", None) or ()
    head_flow = getattr(diff.head, "flow", None) or ()
    if not base_flow and not head_flow:
        return
    renamed = dict(diff.renamed_steps)
    back = {new: old for old, new in renamed.items()}
    names: list[str] = []
    for spec in (diff.head, diff.base):
        names.extend(s.name for s in getattr(spec, "steps", ())
                     if s.name not in names and s.name not in renamed)
    for i, name in enumerate(names):
        if name in ids:
            continue
        ids[name] = f"t{i}"
        title = mermaid_escape(name)
        if name in back:
            title = f"{mermaid_escape(back[name])} → {title}"
        lines.append(f'    t{i}[/"step: {title}"/]')
        status = _status(by_subject.get(("step", name), []))
        if status is not None:
            classes.setdefault(status, []).append(f"t{i}")
    found: list[tuple[str, str, str, str | None]] = []
    head_sources = {e.source for e in head_flow}
    for side, flow in (("head", head_flow), ("base", base_flow)):
        for edge in flow:
            status = _status(by_subject.get(("flow", edge.source), []))
            if side == "base":
                if renamed.get(edge.source, edge.source) in head_sources and (
                    status != "removed"
                ):
                    continue
                status = "removed"
            for target, label in _flow_targets(edge):
                found.append((edge.source, target or "", label, status))
    if any(not target for _, target, _, _ in found):
        lines.append('    n_end(["end"])')
        ids[""] = "n_end"
    for source, target, label, status in found:
        if source in ids and target in ids:
            edges.append((ids[source], "-->", ids[target], label,
                          "changed" if status == "renamed" else status))


DIFF_FORMATS: dict[str, Callable[[Sequence[Compared], Collection[Category]], str]] = {
    "text": text,
    "json": json_doc,
    "github": github,
    "mermaid": mermaid,
}
