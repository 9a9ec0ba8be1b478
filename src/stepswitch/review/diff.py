"""Compare two workflow specs and sort every change by whom it breaks.

``diff_specs(base, head)`` is pure: two frozen :class:`WorkflowSpec` values in, a frozen
:class:`SpecDiff` out. Each :class:`Change` falls in exactly one category:

* ``state``: an agent, tool, agent tool or handoff removed or renamed, or the workflow
  renamed; saved ``RunState``s and running durable runs refer to them by name and
  cannot resume.
* ``model``: what the model is sent changes: instructions, tool descriptions and
  parameter schemas, output schemas, handoff descriptions and inputs, model and
  settings, a handoff input filter.
* ``safety``: a safety property weakens: an approval removed or relaxed, a guardrail
  removed, replaced or made parallel, a budget or limit raised or removed
  (``max_turns``, ``max_uses``, ``max_depth``, ``max_model_calls``), or the analyzer's
  worst-case model-call bound grown.
* ``structure``: additions and other changes to what runs that weaken nothing: agents,
  tools and edges added, the entry moved, an approval or guardrail added, a limit
  tightened, a different function behind a tool.
* ``cosmetic``: nothing a run observes: declaration order, ignore lists, display names.

Declarations that only moved (another file:line) are not changes; every change carries
the location on both sides. Agents and tools that were renamed are matched (an agent
with the same content under a new name, a tool with the same function), so a rename is
one ``state`` change, not a removal plus an addition. Fields this module does not know
(a newer spec) are still compared, as ``structure``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from stepswitch.dsl.names import default_handoff_tool_name
from stepswitch.graph.spec import (
    AgentSpec,
    AgentToolSpec,
    ApprovalMode,
    GuardrailSpec,
    HandoffSpec,
    Location,
    OutputTypeSpec,
    Ref,
    ToolSpec,
    WorkflowSpec,
)

__all__ = ["CATEGORIES", "Category", "Change", "ChangeKind", "SpecDiff", "diff_specs"]

Category = Literal["state", "model", "safety", "structure", "cosmetic"]
CATEGORIES: tuple[Category, ...] = ("state", "model", "safety", "structure", "cosmetic")
"""Every category, most breaking first (the order of the text output)."""

ChangeKind = Literal["added", "removed", "renamed", "changed"]

Subject = tuple[str, ...]
"""What a change is about, for diagrams: ``("workflow",)``, ``("agent", name)``,
``("edge", source, tool_name)`` (a handoff or agent tool), ``("tool", agent, name)``
(a function tool) or ``("guardrail", agent, name)``. Agent names are the head's."""


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the two workflows."""

    category: Category
    kind: ChangeKind
    path: str
    """Where in the spec, by name: ``agents.triage.tools.lookup_order.description``."""
    message: str
    base: Location | None
    """The declaration in the base version (None for an addition)."""
    head: Location | None
    """The declaration in the head version (None for a removal)."""
    subject: Subject


@dataclass(frozen=True, slots=True)
class SpecDiff:
    """Every change from ``base`` to ``head``, in category order, then by path."""

    base: WorkflowSpec
    head: WorkflowSpec
    changes: tuple[Change, ...]
    base_bound: int | None
    """The analyzer's worst-case model calls of a run (None: unbounded or unknown)."""
    head_bound: int | None
    renamed_agents: tuple[tuple[str, str], ...] = ()
    """(base name, head name) of every agent matched under a new name."""

    def of(self, category: Category) -> tuple[Change, ...]:
        """The changes of one category."""
        return tuple(c for c in self.changes if c.category == category)

    def categories(self) -> frozenset[Category]:
        """The categories that have at least one change."""
        return frozenset(c.category for c in self.changes)

    def counts(self) -> dict[Category, int]:
        """Changes per category, every category present (zero when none)."""
        out: dict[Category, int] = dict.fromkeys(CATEGORIES, 0)
        for c in self.changes:
            out[c.category] += 1
        return out


BoundFn = Callable[[WorkflowSpec], "int | None"]


def model_call_bound(spec: WorkflowSpec) -> int | None:
    """The analyzer's worst-case model calls of one run of ``spec`` (SW203)."""
    from stepswitch.analysis import analyze
    from stepswitch.graph.workflow_graph import WorkflowGraph

    return analyze(WorkflowGraph(spec), select=["SW2"]).model_call_bound


def diff_specs(
    base: WorkflowSpec, head: WorkflowSpec, *, bound: BoundFn | None = model_call_bound
) -> SpecDiff:
    """Every change from ``base`` to ``head``. ``bound`` computes the worst-case model
    calls of each side (None to skip that comparison)."""
    d = _Differ(base, head)
    d.workflow()
    base_bound = head_bound = None
    if bound is not None:
        base_bound = bound(base)
        # Two workflows of one shape (as far as the bound can see) share their bound.
        head_bound = base_bound if _bound_shape(base) == _bound_shape(head) else bound(head)
        d.bound(base_bound, head_bound)
    order = {c: i for i, c in enumerate(CATEGORIES)}
    changes = sorted(d.changes, key=lambda c: (order[c.category], c.path, c.message))
    return SpecDiff(base, head, tuple(changes), base_bound, head_bound,
                    tuple(sorted(d.renamed.items())))


def _bound_shape(spec: WorkflowSpec) -> tuple[Any, ...]:
    """Everything the worst-case model-call bound (SW203) reads: the budgets, the entry,
    each agent's handoff targets, agent tools and ``parallel_tool_calls``, and a flow."""
    return (
        spec.entry, spec.max_turns, spec.max_depth, getattr(spec, "flow", None),
        tuple(
            (a.name, tuple(h.target for h in a.handoffs),
             tuple((t.target, t.max_turns, t.max_depth) for t in a.agent_tools),
             a.model_settings.get("parallel_tool_calls"))
            for a in spec.agents
        ),
    )


# -- the comparison ------------------------------------------------------------------------

_T = TypeVar("_T")

_WORKFLOW_FIELDS = frozenset({
    "spec_version", "name", "entry", "agents", "max_turns", "max_depth", "max_model_calls",
    "context_type", "ignore", "location",
})
_AGENT_FIELDS = frozenset({
    "name", "instructions", "instructions_fn", "instructions_context_type", "tools",
    "handoffs", "agent_tools", "output_type", "model", "model_ref", "model_settings",
    "handoff_description", "input_guardrails", "output_guardrails", "tool_use_behavior",
    "ignore", "location",
})
_TOOL_FIELDS = frozenset({
    "name", "description", "parameters", "strict", "schema_problems", "needs_approval",
    "ref", "is_async", "context_type", "failure_mode", "location",
})
_HANDOFF_FIELDS = frozenset({
    "target", "tool_name", "description", "max_uses", "input_schema", "input_type",
    "schema_problems", "on_handoff", "on_handoff_context_type", "input_filter", "location",
})
_AGENT_TOOL_FIELDS = frozenset({
    "target", "tool_name", "description", "parameters", "parameters_type",
    "schema_problems", "max_turns", "max_depth", "needs_approval", "output_extractor",
    "extractor_input_type", "location",
})
_GUARDRAIL_FIELDS = frozenset({
    "name", "kind", "ref", "run_in_parallel", "declared_type", "context_type", "location",
})

_APPROVAL_RANK: dict[ApprovalMode, int] = {"never": 0, "per_call": 1, "always": 2}


def _q(name: str) -> str:
    return repr(name)


def _preview(text: str | None, width: int = 60, start: int = 0) -> str:
    if text is None:
        return "none"
    flat = " ".join(text.split())
    head = "…" if start > 0 else ""
    shown = flat[start:]
    return repr(head + (shown if len(shown) <= width else shown[: width - 1] + "…"))


def _texts(before: str | None, after: str | None) -> str:
    """``'old' → 'new'``, both shown from a little before where they first differ."""
    if before is None or after is None:
        return f"{_preview(before)} → {_preview(after)}"
    a, b = " ".join(before.split()), " ".join(after.split())
    same = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        same += 1
    start = max(0, same - 20)
    return f"{_preview(a, start=start)} → {_preview(b, start=start)}"


def _limit(value: int | None) -> str:
    return "none" if value is None else str(value)


def _raised(before: int | None, after: int | None) -> bool:
    """True when a limit got looser: raised, or removed (None is no limit)."""
    if before is None:
        return False
    return after is None or after > before


def _ref(ref: Ref | None) -> str | None:
    return None if ref is None else ref.path


def _strip_locations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_locations(v) for k, v in value.items() if k != "location"}
    if isinstance(value, list | tuple):
        return [_strip_locations(v) for v in value]
    return value


def _content(model: Any, *drop: str) -> str:
    """A model's fields without its name(s) and locations, as canonical JSON."""
    data = model.model_dump(mode="json", by_alias=True, exclude=set(drop))
    return json.dumps(_strip_locations(data), sort_keys=True)


def _schema_delta(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    """A short account of how a JSON schema changed (top-level properties)."""
    if before is None or after is None:
        return "added" if before is None else "removed"
    props_a = before.get("properties") if isinstance(before.get("properties"), dict) else None
    props_b = after.get("properties") if isinstance(after.get("properties"), dict) else None
    if props_a is None or props_b is None:
        return "changed"
    parts: list[str] = []
    added = [k for k in props_b if k not in props_a]
    removed = [k for k in props_a if k not in props_b]
    changed = [k for k in props_a if k in props_b and props_a[k] != props_b[k]]
    if added:
        parts.append("property " + ", ".join(map(_q, added)) + " added")
    if removed:
        parts.append("property " + ", ".join(map(_q, removed)) + " removed")
    if changed:
        parts.append("property " + ", ".join(map(_q, changed)) + " changed")
    req_a, req_b = set(before.get("required") or ()), set(after.get("required") or ())
    if req_a != req_b:
        now = sorted(req_b - req_a)
        no_longer = sorted(req_a - req_b)
        if now:
            parts.append(", ".join(map(_q, now)) + " now required")
        if no_longer:
            parts.append(", ".join(map(_q, no_longer)) + " no longer required")
    rest_a = {k: v for k, v in before.items() if k not in ("properties", "required")}
    rest_b = {k: v for k, v in after.items() if k not in ("properties", "required")}
    if rest_a != rest_b:
        parts.append("other schema keywords changed")
    return "; ".join(parts) if parts else "changed"


class _Differ:
    def __init__(self, base: WorkflowSpec, head: WorkflowSpec) -> None:
        self.base = base
        self.head = head
        self.changes: list[Change] = []
        self.renamed: dict[str, str] = {}
        """base agent name → head agent name, for renamed agents."""

    def add(
        self,
        category: Category,
        kind: ChangeKind,
        path: str,
        message: str,
        base: Location | None,
        head: Location | None,
        subject: Subject,
    ) -> None:
        self.changes.append(Change(category, kind, path, message, base, head, subject))

    # -- workflow ------------------------------------------------------------------------

    def workflow(self) -> None:
        b, h = self.base, self.head
        bl, hl = b.location, h.location
        w: Subject = ("workflow",)
        if b.name != h.name:
            self.add("state", "renamed", "workflow.name",
                     f"workflow renamed {b.name!r} → {h.name!r}: saved states name the "
                     "workflow they belong to", bl, hl, w)
        self.agents()
        entry_b = self.renamed.get(b.entry, b.entry) if b.entry is not None else None
        if entry_b != h.entry:
            self.add("structure", "changed", "workflow.entry",
                     f"new runs start at {h.entry!r} instead of {b.entry!r}",
                     bl, hl, w)
        self.limit("workflow.max_turns", "max_turns of the workflow", b.max_turns,
                   h.max_turns, bl, hl, w)
        self.limit("workflow.max_depth", "max_depth of nested runs", b.max_depth,
                   h.max_depth, bl, hl, w)
        self.limit("workflow.max_model_calls", "max_model_calls of the workflow",
                   b.max_model_calls, h.max_model_calls, bl, hl, w)
        if _ref(b.context_type) != _ref(h.context_type):
            self.add("structure", "changed", "workflow.context_type",
                     f"context type {_ref(b.context_type)} → {_ref(h.context_type)}",
                     bl, hl, w)
        if b.ignore != h.ignore:
            self.add("cosmetic", "changed", "workflow.ignore",
                     f"ignored codes {list(b.ignore)} → {list(h.ignore)}", bl, hl, w)
        self.unknown_fields(b, h, _WORKFLOW_FIELDS, "workflow", bl, hl, w)

    def bound(self, before: int | None, after: int | None) -> None:
        if before == after:
            return
        shown = f"{_bound_text(before)} → {_bound_text(after)}"
        loc_b, loc_h = self.base.location, self.head.location
        if after is None or (before is not None and after > before):
            self.add("safety", "changed", "workflow.model_call_bound",
                     f"worst-case model calls of a run grew: {shown}", loc_b, loc_h,
                     ("workflow",))
        else:
            self.add("structure", "changed", "workflow.model_call_bound",
                     f"worst-case model calls of a run shrank: {shown}", loc_b, loc_h,
                     ("workflow",))

    def limit(
        self,
        path: str,
        what: str,
        before: int | None,
        after: int | None,
        bl: Location,
        hl: Location,
        subject: Subject,
    ) -> None:
        if before == after:
            return
        if _raised(before, after):
            verb = "removed" if after is None else "raised"
            self.add("safety", "changed", path,
                     f"{what} {verb}: {_limit(before)} → {_limit(after)}", bl, hl, subject)
        else:
            verb = "added" if before is None else "lowered"
            self.add("structure", "changed", path,
                     f"{what} {verb}: {_limit(before)} → {_limit(after)}", bl, hl, subject)

    def unknown_fields(
        self,
        before: Any,
        after: Any,
        known: frozenset[str],
        path: str,
        bl: Location | None,
        hl: Location | None,
        subject: Subject,
    ) -> None:
        """Fields a newer spec has and this module does not know: still compared."""
        for name in _unknown(type(before), type(after), known):
            a, b = getattr(before, name, None), getattr(after, name, None)
            if a != b:
                self.add("structure", "changed", f"{path}.{name}", f"{name} changed",
                         bl, hl, subject)

    # -- agents --------------------------------------------------------------------------

    def agents(self) -> None:
        base_agents = _first_of_each(self.base.agents, lambda a: a.name)
        head_agents = _first_of_each(self.head.agents, lambda a: a.name)
        removed = [n for n in base_agents if n not in head_agents]
        added = [n for n in head_agents if n not in base_agents]
        if removed and added:
            self.match_renamed_agents(removed, added, base_agents, head_agents)
        for name in removed:
            if name in self.renamed:
                continue
            agent = base_agents[name]
            self.add("state", "removed", f"agents.{name}",
                     f"agent {name!r} removed: saved states and running durable runs at "
                     "it cannot resume", agent.location, None, ("agent", name))
        matched_heads = set(self.renamed.values())
        for name in added:
            if name in matched_heads:
                continue
            agent = head_agents[name]
            self.add("structure", "added", f"agents.{name}", f"agent {name!r} added",
                     None, agent.location, ("agent", name))
        for old, new in self.renamed.items():
            self.add("state", "renamed", f"agents.{new}",
                     f"agent {old!r} renamed to {new!r}: saved states and running durable "
                     "runs name the old agent", base_agents[old].location,
                     head_agents[new].location, ("agent", new))
            self.agent(base_agents[old], head_agents[new])
        for name, agent in head_agents.items():
            before = base_agents.get(name)
            # equal agents (generated ones share their declaration line) cost one compare
            if before is not None and before is not agent and before != agent:
                self.agent(before, agent)
        common_b = [n for n in base_agents if n in head_agents or n in self.renamed]
        common_h = [n for n in head_agents if n in base_agents or n in matched_heads]
        if [self.renamed.get(n, n) for n in common_b] != common_h:
            self.add("cosmetic", "changed", "workflow.agents",
                     "agents declared in another order", self.base.location,
                     self.head.location, ("workflow",))

    def match_renamed_agents(
        self,
        removed: list[str],
        added: list[str],
        base_agents: dict[str, AgentSpec],
        head_agents: dict[str, AgentSpec],
    ) -> None:
        """An added agent whose content (all but its name and locations) equals a removed
        one's is that agent renamed; failing that, one with the same instructions."""
        by_content: dict[str, list[str]] = {}
        for name in added:
            by_content.setdefault(_content(head_agents[name], "name"), []).append(name)
        left: list[str] = []
        for name in removed:
            candidates = by_content.get(_content(base_agents[name], "name"))
            if candidates:
                self.renamed[name] = candidates.pop(0)
            else:
                left.append(name)
        taken = set(self.renamed.values())
        by_text: dict[str, list[str]] = {}
        for name in added:
            text = head_agents[name].instructions
            if name not in taken and text:
                by_text.setdefault(text, []).append(name)
        for name in left:
            text = base_agents[name].instructions
            candidates = by_text.get(text or "")
            if text and candidates and len(candidates) == 1:
                self.renamed[name] = candidates.pop()

    def agent(self, b: AgentSpec, h: AgentSpec) -> None:
        name = h.name
        p = f"agents.{name}"
        bl, hl = b.location, h.location
        me: Subject = ("agent", name)
        if b.instructions != h.instructions:
            self.add("model", "changed", f"{p}.instructions",
                     f"instructions of agent {name!r} changed: "
                     f"{_texts(b.instructions, h.instructions)}", bl, hl, me)
        if _ref(b.instructions_fn) != _ref(h.instructions_fn):
            self.add("model", "changed", f"{p}.instructions_fn",
                     f"instructions function of agent {name!r}: {_ref(b.instructions_fn)} → "
                     f"{_ref(h.instructions_fn)}", bl, hl, me)
        if _ref(b.instructions_context_type) != _ref(h.instructions_context_type):
            self.add("structure", "changed", f"{p}.instructions_context_type",
                     f"context type of agent {name!r}'s instructions function changed",
                     bl, hl, me)
        self.output_type(p, name, b.output_type, h.output_type, bl, hl)
        if b.model != h.model or _ref(b.model_ref) != _ref(h.model_ref):
            before = b.model or _ref(b.model_ref) or "the run's model"
            after = h.model or _ref(h.model_ref) or "the run's model"
            self.add("model", "changed", f"{p}.model",
                     f"model of agent {name!r}: {before} → {after}", bl, hl, me)
        if b.model_settings != h.model_settings:
            keys = sorted(
                k for k in set(b.model_settings) | set(h.model_settings)
                if b.model_settings.get(k) != h.model_settings.get(k)
            )
            self.add("model", "changed", f"{p}.model_settings",
                     f"model settings of agent {name!r} changed: {', '.join(keys)}",
                     bl, hl, me)
        if b.handoff_description != h.handoff_description:
            self.add("model", "changed", f"{p}.handoff_description",
                     f"handoff description of agent {name!r} (what other agents' models "
                     "read) changed: "
                     f"{_texts(b.handoff_description, h.handoff_description)}", bl, hl, me)
        if b.tool_use_behavior != h.tool_use_behavior:
            self.add("structure", "changed", f"{p}.tool_use_behavior",
                     f"tool use behaviour of agent {name!r}: {_behaviour(b)} → "
                     f"{_behaviour(h)}", bl, hl, me)
        if b.ignore != h.ignore:
            self.add("cosmetic", "changed", f"{p}.ignore",
                     f"ignored codes of agent {name!r}: {list(b.ignore)} → {list(h.ignore)}",
                     bl, hl, me)
        self.tools(name, b, h)
        self.handoffs(name, b, h)
        self.agent_tools(name, b, h)
        for kind in ("input", "output"):
            self.guardrails(name, kind, b, h)
        self.unknown_fields(b, h, _AGENT_FIELDS, p, bl, hl, me)

    def output_type(
        self,
        p: str,
        name: str,
        b: OutputTypeSpec | None,
        h: OutputTypeSpec | None,
        bl: Location,
        hl: Location,
    ) -> None:
        me: Subject = ("agent", name)
        if b is None and h is None:
            return
        if b is None or h is None:
            what = (f"now {h.ref.display or h.ref.path}" if h is not None
                    else "now plain text")
            self.add("model", "changed", f"{p}.output_type",
                     f"output type of agent {name!r}: {what}", bl, hl, me)
            return
        if b.schema_ != h.schema_ or b.wrapped != h.wrapped:
            self.add("model", "changed", f"{p}.output_type",
                     f"output schema of agent {name!r} changed: "
                     f"{_schema_delta(b.schema_, h.schema_)}", bl, hl, me)
        elif b.ref.path != h.ref.path:
            self.add("structure", "changed", f"{p}.output_type",
                     f"output type of agent {name!r}: {b.ref.path} → {h.ref.path} (same "
                     "schema)", bl, hl, me)
        elif b.ref != h.ref:
            self.add("cosmetic", "changed", f"{p}.output_type",
                     f"output type of agent {name!r}: display name or importability changed",
                     bl, hl, me)

    # -- function tools ------------------------------------------------------------------

    def tools(self, agent: str, ba: AgentSpec, ha: AgentSpec) -> None:
        base = _first_of_each(ba.tools, lambda t: t.name)
        head = _first_of_each(ha.tools, lambda t: t.name)
        p = f"agents.{agent}.tools"
        renamed = _match(
            [n for n in base if n not in head], [n for n in head if n not in base],
            lambda n: base[n].ref.path, lambda n: head[n].ref.path,
        )
        for name, tool in base.items():
            if name in head:
                continue
            if name in renamed:
                new = renamed[name]
                self.add("state", "renamed", f"{p}.{new}",
                         f"tool {name!r} of agent {agent!r} renamed to {new!r}: saved states "
                         "with calls to it cannot resume", tool.location, head[new].location,
                         ("tool", agent, new))
                self.tool(agent, tool, head[new])
            else:
                self.add("state", "removed", f"{p}.{name}",
                         f"tool {name!r} of agent {agent!r} removed: saved states with calls "
                         "to it cannot resume", tool.location, None, ("tool", agent, name))
        new_names = set(renamed.values())
        for name, tool in head.items():
            if name in base:
                self.tool(agent, base[name], tool)
            elif name not in new_names:
                extra = " (needs approval)" if tool.needs_approval != "never" else ""
                self.add("structure", "added", f"{p}.{name}",
                         f"tool {name!r} added to agent {agent!r}{extra}", None, tool.location,
                         ("tool", agent, name))
        self.order(p, f"tools of agent {agent!r}", list(base), list(head), renamed,
                   ba.location, ha.location, agent)

    def tool(self, agent: str, b: ToolSpec, h: ToolSpec) -> None:
        if b == h:
            return
        p = f"agents.{agent}.tools.{h.name}"
        bl, hl = b.location, h.location
        me: Subject = ("tool", agent, h.name)
        what = f"tool {h.name!r} of agent {agent!r}"
        if b.description != h.description:
            self.add("model", "changed", f"{p}.description",
                     f"description of {what} changed: "
                     f"{_texts(b.description, h.description)}", bl, hl, me)
        if _untitled(b.parameters, b.name != h.name) != _untitled(h.parameters, b.name != h.name):
            self.add("model", "changed", f"{p}.parameters",
                     f"parameters of {what}: {_schema_delta(b.parameters, h.parameters)}",
                     bl, hl, me)
        if b.strict != h.strict:
            self.add("model", "changed", f"{p}.strict",
                     f"{what} sends its schema {'strict' if h.strict else 'non-strict'} now",
                     bl, hl, me)
        self.approval(p, what, b.needs_approval, h.needs_approval, bl, hl, me)
        if b.ref.path != h.ref.path:
            self.add("structure", "changed", f"{p}.ref",
                     f"{what} runs another function: {b.ref.path} → {h.ref.path}", bl, hl, me)
        elif b.ref != h.ref:
            self.add("cosmetic", "changed", f"{p}.ref",
                     f"{what}: display name or importability of its function changed",
                     bl, hl, me)
        if b.is_async != h.is_async:
            self.add("structure", "changed", f"{p}.is_async",
                     f"{what} is {'async' if h.is_async else 'sync'} now", bl, hl, me)
        if _ref(b.context_type) != _ref(h.context_type):
            self.add("structure", "changed", f"{p}.context_type",
                     f"context type of {what}: {_ref(b.context_type)} → "
                     f"{_ref(h.context_type)}", bl, hl, me)
        if b.failure_mode != h.failure_mode:
            self.add("structure", "changed", f"{p}.failure_mode",
                     f"failure mode of {what}: {b.failure_mode} → {h.failure_mode}", bl, hl, me)
        self.unknown_fields(b, h, _TOOL_FIELDS, p, bl, hl, me)

    def approval(
        self,
        p: str,
        what: str,
        before: ApprovalMode,
        after: ApprovalMode,
        bl: Location,
        hl: Location,
        me: Subject,
    ) -> None:
        if before == after:
            return
        message = f"approval of {what}: {before} → {after}"
        if _APPROVAL_RANK[after] < _APPROVAL_RANK[before]:
            self.add("safety", "changed", f"{p}.needs_approval",
                     message + (" (no human approves its calls any more)"
                                if after == "never" else " (weakened)"), bl, hl, me)
        else:
            self.add("structure", "changed", f"{p}.needs_approval", message, bl, hl, me)

    # -- handoffs ------------------------------------------------------------------------

    def handoffs(self, agent: str, ba: AgentSpec, ha: AgentSpec) -> None:
        # A renamed agent renames the handoffs to it; match them through the rename.
        base = _first_of_each(ba.handoffs, lambda e: self.handoff_key(e))
        head = _first_of_each(ha.handoffs, lambda e: e.tool_name)
        p = f"agents.{agent}.handoffs"
        renamed = _match(
            [n for n in base if n not in head], [n for n in head if n not in base],
            lambda n: self.renamed.get(base[n].target, base[n].target),
            lambda n: head[n].target,
        )
        for key, edge in base.items():
            if key in head:
                continue
            if key in renamed:
                new = renamed[key]
                self.add("state", "renamed", f"{p}.{new}",
                         f"handoff tool {edge.tool_name!r} of agent {agent!r} renamed to "
                         f"{new!r}: saved states with calls to it cannot resume",
                         edge.location, head[new].location, ("edge", agent, new))
                self.handoff(agent, edge, head[new])
            else:
                self.add("state", "removed", f"{p}.{edge.tool_name}",
                         f"handoff {agent!r} → {edge.target!r} ({edge.tool_name}) removed: "
                         "saved states with calls to it cannot resume", edge.location, None,
                         ("edge", agent, edge.tool_name))
        new_names = set(renamed.values())
        for key, edge in head.items():
            if key in base:
                self.handoff(agent, base[key], edge)
            elif key not in new_names:
                budget = "" if edge.max_uses is None else f", max_uses={edge.max_uses}"
                self.add("structure", "added", f"{p}.{key}",
                         f"handoff {agent!r} → {edge.target!r} ({key}{budget}) added", None,
                         edge.location, ("edge", agent, key))
        self.order(p, f"handoffs of agent {agent!r}", list(base), list(head), renamed,
                   ba.location, ha.location, agent)

    def handoff_key(self, edge: HandoffSpec) -> str:
        """The head-side tool name this base handoff would have under the agent renames."""
        new = self.renamed.get(edge.target)
        if new is not None and edge.tool_name == default_handoff_tool_name(edge.target):
            return default_handoff_tool_name(new)
        return edge.tool_name

    def handoff(self, agent: str, b: HandoffSpec, h: HandoffSpec) -> None:
        p = f"agents.{agent}.handoffs.{h.tool_name}"
        bl, hl = b.location, h.location
        me: Subject = ("edge", agent, h.tool_name)
        what = f"handoff {agent!r} → {h.target!r}"
        if self.renamed.get(b.target, b.target) != h.target:
            self.add("state", "changed", f"{p}.target",
                     f"handoff tool {h.tool_name!r} of agent {agent!r} now leads to "
                     f"{h.target!r} instead of {b.target!r}: running durable runs and saved "
                     "states take the other path", bl, hl, me)
        if b.description != h.description:
            self.add("model", "changed", f"{p}.description",
                     f"description of {what} changed: "
                     f"{_texts(b.description, h.description)}", bl, hl, me)
        if b.input_schema != h.input_schema:
            self.add("model", "changed", f"{p}.input_schema",
                     f"input of {what}: {_schema_delta(b.input_schema, h.input_schema)}",
                     bl, hl, me)
        elif _ref(b.input_type) != _ref(h.input_type):
            self.add("structure", "changed", f"{p}.input_type",
                     f"input type of {what}: {_ref(b.input_type)} → {_ref(h.input_type)}",
                     bl, hl, me)
        self.limit(f"{p}.max_uses", f"max_uses of {what}", b.max_uses, h.max_uses, bl, hl, me)
        if _ref(b.input_filter) != _ref(h.input_filter):
            self.add("model", "changed", f"{p}.input_filter",
                     f"input filter of {what} (the history the next agent's model sees): "
                     f"{_ref(b.input_filter)} → {_ref(h.input_filter)}", bl, hl, me)
        if _ref(b.on_handoff) != _ref(h.on_handoff) or _ref(b.on_handoff_context_type) != _ref(
            h.on_handoff_context_type
        ):
            self.add("structure", "changed", f"{p}.on_handoff",
                     f"on_handoff hook of {what}: {_ref(b.on_handoff)} → {_ref(h.on_handoff)}",
                     bl, hl, me)
        self.unknown_fields(b, h, _HANDOFF_FIELDS, p, bl, hl, me)

    # -- agent tools ---------------------------------------------------------------------

    def agent_tools(self, agent: str, ba: AgentSpec, ha: AgentSpec) -> None:
        base = _first_of_each(ba.agent_tools, lambda e: e.tool_name)
        head = _first_of_each(ha.agent_tools, lambda e: e.tool_name)
        p = f"agents.{agent}.agent_tools"
        renamed = _match(
            [n for n in base if n not in head], [n for n in head if n not in base],
            lambda n: self.renamed.get(base[n].target, base[n].target),
            lambda n: head[n].target,
        )
        for name, edge in base.items():
            if name in head:
                continue
            if name in renamed:
                new = renamed[name]
                self.add("state", "renamed", f"{p}.{new}",
                         f"agent tool {name!r} of agent {agent!r} renamed to {new!r}: saved "
                         "states with calls to it cannot resume", edge.location,
                         head[new].location, ("edge", agent, new))
                self.agent_tool(agent, edge, head[new])
            else:
                self.add("state", "removed", f"{p}.{name}",
                         f"agent tool {name!r} ({agent!r} calls {edge.target!r}) removed: "
                         "saved states with calls to it cannot resume", edge.location, None,
                         ("edge", agent, name))
        new_names = set(renamed.values())
        for name, edge in head.items():
            if name in base:
                self.agent_tool(agent, base[name], edge)
            elif name not in new_names:
                self.add("structure", "added", f"{p}.{name}",
                         f"agent tool {name!r} ({agent!r} calls {edge.target!r}) added", None,
                         edge.location, ("edge", agent, name))
        self.order(p, f"agent tools of agent {agent!r}", list(base), list(head), renamed,
                   ba.location, ha.location, agent)

    def agent_tool(self, agent: str, b: AgentToolSpec, h: AgentToolSpec) -> None:
        p = f"agents.{agent}.agent_tools.{h.tool_name}"
        bl, hl = b.location, h.location
        me: Subject = ("edge", agent, h.tool_name)
        what = f"agent tool {h.tool_name!r} of agent {agent!r}"
        if self.renamed.get(b.target, b.target) != h.target:
            self.add("state", "changed", f"{p}.target",
                     f"{what} runs {h.target!r} instead of {b.target!r}: paused nested runs "
                     "in saved states cannot resume", bl, hl, me)
        if b.description != h.description:
            self.add("model", "changed", f"{p}.description",
                     f"description of {what} changed: "
                     f"{_texts(b.description, h.description)}", bl, hl, me)
        if b.parameters != h.parameters:
            self.add("model", "changed", f"{p}.parameters",
                     f"parameters of {what}: {_schema_delta(b.parameters, h.parameters)}",
                     bl, hl, me)
        elif _ref(b.parameters_type) != _ref(h.parameters_type):
            self.add("structure", "changed", f"{p}.parameters_type",
                     f"parameters type of {what}: {_ref(b.parameters_type)} → "
                     f"{_ref(h.parameters_type)}", bl, hl, me)
        self.limit(f"{p}.max_turns", f"max_turns of {what}", b.max_turns, h.max_turns,
                   bl, hl, me)
        self.limit(f"{p}.max_depth", f"max_depth of {what}", b.max_depth, h.max_depth,
                   bl, hl, me)
        self.approval(p, what, b.needs_approval, h.needs_approval, bl, hl, me)
        if _ref(b.output_extractor) != _ref(h.output_extractor):
            self.add("structure", "changed", f"{p}.output_extractor",
                     f"output extractor of {what}: {_ref(b.output_extractor)} → "
                     f"{_ref(h.output_extractor)}", bl, hl, me)
        self.unknown_fields(b, h, _AGENT_TOOL_FIELDS, p, bl, hl, me)

    # -- guardrails ----------------------------------------------------------------------

    def guardrails(self, agent: str, kind: str, ba: AgentSpec, ha: AgentSpec) -> None:
        field = f"{kind}_guardrails"
        base = _first_of_each(getattr(ba, field), lambda g: g.name)
        head = _first_of_each(getattr(ha, field), lambda g: g.name)
        p = f"agents.{agent}.{field}"
        for name, g in base.items():
            if name not in head:
                self.add("safety", "removed", f"{p}.{name}",
                         f"{kind} guardrail {name!r} of agent {agent!r} removed", g.location,
                         None, ("guardrail", agent, name))
        for name, g in head.items():
            before = base.get(name)
            if before is None:
                self.add("structure", "added", f"{p}.{name}",
                         f"{kind} guardrail {name!r} added to agent {agent!r}", None,
                         g.location, ("guardrail", agent, name))
            else:
                self.guardrail(agent, kind, before, g)
        self.order(p, f"{kind} guardrails of agent {agent!r}", list(base), list(head), {},
                   ba.location, ha.location, agent)

    def guardrail(self, agent: str, kind: str, b: GuardrailSpec, h: GuardrailSpec) -> None:
        p = f"agents.{agent}.{kind}_guardrails.{h.name}"
        bl, hl = b.location, h.location
        me: Subject = ("guardrail", agent, h.name)
        what = f"{kind} guardrail {h.name!r} of agent {agent!r}"
        if b.ref.path != h.ref.path:
            self.add("safety", "changed", f"{p}.ref",
                     f"{what} runs another function: {b.ref.path} → {h.ref.path}", bl, hl, me)
        if b.run_in_parallel != h.run_in_parallel:
            if h.run_in_parallel:
                self.add("safety", "changed", f"{p}.run_in_parallel",
                         f"{what} runs in parallel with the model now: the model is called "
                         "before it decides", bl, hl, me)
            else:
                self.add("structure", "changed", f"{p}.run_in_parallel",
                         f"{what} runs before the model now", bl, hl, me)
        if _ref(b.declared_type) != _ref(h.declared_type) or _ref(b.context_type) != _ref(
            h.context_type
        ):
            self.add("structure", "changed", f"{p}.declared_type",
                     f"declared types of {what} changed", bl, hl, me)
        self.unknown_fields(b, h, _GUARDRAIL_FIELDS, p, bl, hl, me)

    def order(
        self,
        p: str,
        what: str,
        base: Sequence[str],
        head: Sequence[str],
        renamed: Mapping[str, str],
        bl: Location,
        hl: Location,
        agent: str,
    ) -> None:
        common_b = [renamed.get(n, n) for n in base if n in head or n in renamed]
        kept = set(common_b)
        common_h = [n for n in head if n in kept]
        if common_b != common_h:
            self.add("cosmetic", "changed", p, f"{what} declared in another order", bl, hl,
                     ("agent", agent))


def _untitled(schema: dict[str, Any], renamed: bool) -> dict[str, Any]:
    """A tool's schema without the title its name gave it, when the tool was renamed."""
    if not renamed or "title" not in schema:
        return schema
    return {k: v for k, v in schema.items() if k != "title"}


_UNKNOWN: dict[tuple[type[Any], type[Any], frozenset[str]], tuple[str, ...]] = {}


def _unknown(before: type[Any], after: type[Any], known: frozenset[str]) -> tuple[str, ...]:
    """The fields of these spec classes that ``known`` lacks (computed once per pair)."""
    key = (before, after, known)
    names = _UNKNOWN.get(key)
    if names is None:
        fields = set(before.model_fields) | set(after.model_fields)
        names = _UNKNOWN[key] = tuple(sorted(fields - known))
    return names


def _first_of_each(items: Sequence[_T], key: Callable[[_T], str]) -> dict[str, _T]:
    if not items:
        return {}
    out: dict[str, _T] = {}
    for item in items:
        out.setdefault(key(item), item)
    return out


def _match(
    removed: list[str],
    added: list[str],
    key_b: Callable[[str], str],
    key_h: Callable[[str], str],
) -> dict[str, str]:
    """Pair removed and added names whose key (a function path, a target) is the same and
    unique on both sides."""
    if not removed or not added:
        return {}
    heads: dict[str, list[str]] = {}
    for name in added:
        heads.setdefault(key_h(name), []).append(name)
    bases: dict[str, list[str]] = {}
    for name in removed:
        bases.setdefault(key_b(name), []).append(name)
    out = {}
    for key, names in bases.items():
        candidates = heads.get(key, [])
        if len(names) == 1 and len(candidates) == 1:
            out[names[0]] = candidates[0]
    return out


def _behaviour(agent: AgentSpec) -> str:
    b = agent.tool_use_behavior
    if b.kind == "stop_at_tools":
        return f"stop_at_tools({', '.join(b.tool_names)})"
    if b.kind == "function":
        return f"function {_ref(b.ref)}"
    return b.kind


def _bound_text(value: int | None) -> str:
    return "unbounded" if value is None else str(value)
