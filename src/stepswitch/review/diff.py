"""Compare two workflow specs and sort every change by whom it breaks.

``diff_specs(base, head)`` is pure: two frozen :class:`WorkflowSpec` values in, a frozen
:class:`SpecDiff` out. Each :class:`Change` falls in exactly one category:

* ``state``: an agent, tool, agent tool, handoff or flow step removed or renamed, or the
  workflow renamed; saved ``RunState``s and running durable runs refer to them by name and
  cannot resume.
* ``model``: what the model is sent changes: instructions, tool descriptions and
  parameter schemas, output schemas, handoff descriptions and inputs, model and
  settings, a handoff input filter.
* ``safety``: a safety property weakens: an approval removed or relaxed (a gated tool
  removed, alone or with its agent, counts too unless the same action stays gated), a guardrail
  removed, replaced or made parallel, a budget or limit raised or removed
  (``max_turns``, ``max_uses``, ``max_depth``, ``max_model_calls``), or the analyzer's
  worst-case model-call bound grown.
* ``structure``: additions and other changes to what runs that weaken nothing: agents,
  tools and edges added, the entry moved, an approval or guardrail added, a limit
  tightened, a different function behind a tool.
* ``cosmetic``: nothing a run observes: declaration order, ignore lists, display names.

Declarations that only moved (another file:line) are not changes; every change carries
the location on both sides. Agents, tools and flow steps that were renamed are matched
(an agent with the same content under a new name, a tool with the same function, a step
with the same types and flow edges in and out), so a rename is one ``state`` change, not
a removal plus an addition. Fields this module does not know (a newer spec) are still
compared, as ``structure``. Given the ``modules`` the two workflows are declared in, a
reference into either one (a step's function, a predicate, an output type) is compared
by its name inside that module, so a copy of a file under another name
(``app_old.py`` beside ``app.py``) is not a change of every such reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.graph.spec import AgentSpec, Location, OutputTypeSpec, PolicySpec, WorkflowSpec
from stepswitch.review._diff_base import (
    _AGENT_FIELDS,
    _WORKFLOW_FIELDS,
    CATEGORIES,
    Category,
    Change,
    ChangeKind,
    Subject,
    _content,
    _first_of_each,
    _ref,
    _schema_delta,
    _texts,
)
from stepswitch.review.diff_flow import diff_flow, local_refs
from stepswitch.review.diff_parts import _Parts

__all__ = ["CATEGORIES", "Category", "Change", "ChangeKind", "SpecDiff", "diff_specs"]

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
    renamed_steps: tuple[tuple[str, str], ...] = ()
    """(base name, head name) of every flow step matched under a new name."""

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
    base: WorkflowSpec,
    head: WorkflowSpec,
    *,
    bound: BoundFn | None = model_call_bound,
    modules: tuple[str, str] | None = None,
    policies: Sequence[PolicySpec] = (),
    errors: bool = True,
) -> SpecDiff:
    """Every change from ``base`` to ``head``. ``bound`` computes the worst-case model
    calls of each side (None to skip that comparison). ``modules`` names the module each
    side is declared in; when they differ, references into them are compared by
    qualname (``app_old:Verdict`` is ``app:Verdict``). ``policies`` are proved on both
    sides besides their own (``[tool.stepswitch] policies``, the rules of an SDK app):
    one that newly fails is a ``safety`` change too. ``errors``: an error of the
    analysis that ``head`` has and ``base`` had not (a new unbudgeted cycle, say) is a
    ``safety`` change: ``check`` fails on it."""
    compared_base, compared_head = base, head
    if modules is not None and modules[0] != modules[1]:
        compared_base, compared_head = local_refs(base, modules[0]), local_refs(head, modules[1])
    d = _Differ(compared_base, compared_head)
    d.extra_policies = tuple(policies)
    d.workflow()
    head_report = None
    if errors:
        # one whole analysis of the head; the base's only when the head has errors (the
        # base may have had them too), since a diff of a passing head has none to report
        head_report = _analysis(head)
        failing = _errors_of(head_report)
        if failing:
            d.new_errors(_errors_of(_analysis(compared_base)), failing)
    base_bound = head_bound = None
    if bound is not None:
        # the head's bound from its whole analysis, when the default bound was asked for
        head_bound = (head_report.model_call_bound
                      if head_report is not None and bound is model_call_bound else bound(head))
        # Two workflows of one shape (as far as the bound can see) share their bound.
        base_bound = head_bound if _bound_shape(base) == _bound_shape(head) else bound(base)
        d.bound(base_bound, head_bound)
    order = {c: i for i, c in enumerate(CATEGORIES)}
    changes = sorted(d.changes, key=lambda c: (order[c.category], c.path, c.message))
    return SpecDiff(base, head, tuple(changes), base_bound, head_bound,
                    tuple(sorted(d.renamed.items())), tuple(sorted(d.renamed_steps.items())))


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


class _Differ(_Parts):
    """The whole comparison: the workflow, then each agent."""

    renamed_steps: dict[str, str]
    """base step name → head step name, for renamed flow steps."""
    extra_policies: tuple[PolicySpec, ...] = ()
    """Policies proved on both sides besides their own (``[tool.stepswitch] policies``)."""

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
        # after the agents: a flow edge to a renamed agent leads where it did
        self.renamed_steps = diff_flow(b, h, self.add, self.limit, self.renamed)
        moved = {**self.renamed, **self.renamed_steps}
        entry_b = moved.get(b.entry, b.entry) if b.entry is not None else None
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
        self.limit("workflow.max_total_tokens", "max_total_tokens of the workflow",
                   b.max_total_tokens, h.max_total_tokens, bl, hl, w)
        if b.max_cost_usd != h.max_cost_usd:
            raised = h.max_cost_usd is None or (b.max_cost_usd is not None
                                               and h.max_cost_usd > b.max_cost_usd)
            self.add("safety" if raised else "structure", "changed", "workflow.max_cost_usd",
                     f"max_cost_usd {b.max_cost_usd} → {h.max_cost_usd}", bl, hl, w)
        self.policies()
        self.unknown_fields(b, h, _WORKFLOW_FIELDS, "workflow", bl, hl, w)

    def new_errors(self, before: dict[tuple[str, str], Any],
                   after: dict[tuple[str, str], Any]) -> None:
        """Each error ``check`` reports on the head (``after``) and did not on the base."""
        for key, d in sorted(after.items()):
            if key in before:
                continue
            loc = d.location
            self.add("safety", "changed", loc.path or "workflow",
                     f"check now fails: {d.code} {d.message}", None,
                     Location(file=loc.file, line=loc.line, column=loc.column),
                     ("workflow",))

    def policies(self) -> None:
        """A policy removed, or one that newly fails, weakens what is proved (safety); a
        policy added that holds is structure."""
        b, h = self.base, self.head
        extra = self.extra_policies
        if not b.policies and not h.policies and not extra:
            return
        w: Subject = ("workflow",)
        before = {p.describe(): p for p in (*b.policies, *extra)}
        after = {p.describe(): p for p in (*h.policies, *extra)}
        for text, p in before.items():
            if text not in after:
                self.add("safety", "removed", "workflow.policies",
                         f"policy {text} removed: it is no longer proved", p.location,
                         h.location, w)
        failing_b, failing_h = _failing(b, extra), _failing(h, extra)
        for text, p in after.items():
            if text in failing_h and text not in failing_b:
                self.add("safety", "changed", "workflow.policies",
                         f"policy {text} newly fails ({failing_h[text]})",
                         before[text].location if text in before else b.location,
                         p.location, w)
            elif text not in before:
                self.add("structure", "added", "workflow.policies",
                         f"policy {text} added", b.location, p.location, w)

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
            for tool in agent.tools:  # its approval gates go with it
                self.gate_removed(f"agents.{name}.tools.{tool.name}",
                                  f"tool {tool.name!r} of agent {name!r}", tool.needs_approval,
                                  tool.location, ("tool", name, tool.name), ref=tool.ref.path)
            for edge in agent.agent_tools:
                self.gate_removed(f"agents.{name}.agent_tools.{edge.tool_name}",
                                  f"agent tool {edge.tool_name!r} of agent {name!r}",
                                  edge.needs_approval, edge.location,
                                  ("edge", name, edge.tool_name), target=edge.target)
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
        if _ref(b.hooks) != _ref(h.hooks):
            self.add("structure", "changed", f"{p}.hooks",
                     f"hooks of agent {name!r}: {_ref(b.hooks)} → {_ref(h.hooks)}", bl, hl, me)
        if b.ignore != h.ignore:
            self.add("cosmetic", "changed", f"{p}.ignore",
                     f"ignored codes of agent {name!r}: {list(b.ignore)} → {list(h.ignore)}",
                     bl, hl, me)
        self.tools(name, b, h)
        self.handoffs(name, b, h)
        self.agent_tools(name, b, h)
        for kind in ("input", "output"):
            self.guardrails(name, kind, b, h)
        if b.mcp_servers or h.mcp_servers:
            from stepswitch.review.diff_mcp import mcp_servers

            mcp_servers(self, name, b, h)
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


def _analysis(spec: WorkflowSpec) -> Any:
    from stepswitch.analysis import analyze
    from stepswitch.graph.workflow_graph import WorkflowGraph

    return analyze(WorkflowGraph(spec))


def _errors_of(report: Any) -> dict[tuple[str, str], Any]:
    """A report's errors by (code, spec path), policies' left out (their own change says
    a policy newly fails)."""
    return {(d.code, d.location.path): d for d in report.errors if not d.code.startswith("SW80")}


def _failing(spec: WorkflowSpec, extra: tuple[PolicySpec, ...] = ()) -> dict[str, str]:
    """The policies that fail on ``spec`` (an SW801-SW805 error), with the code: its own,
    then ``extra``."""
    every = (*spec.policies, *extra)
    if not every:
        return {}
    from stepswitch.analysis import analyze
    from stepswitch.graph.workflow_graph import WorkflowGraph

    report = analyze(WorkflowGraph(spec), select=["SW80"], policies=extra)
    out: dict[str, str] = {}
    for d in report.errors:
        path = d.location.path
        if path.startswith("policies["):
            i = int(path[len("policies["):-1])
            if i < len(every):
                out.setdefault(every[i].describe(), d.code)
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
