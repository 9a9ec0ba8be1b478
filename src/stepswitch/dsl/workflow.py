"""``Workflow``: the entry agent, the agents, and the run's budgets.

It is the user's handle on every later stage. Its methods (``to_spec``, ``graph``,
``check``, ``compile``, ``to_mermaid`` ...) are a thin facade: each imports the
stage it delegates to inside the method, the one sanctioned reference from the DSL
to the stages right of it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal

from stepswitch._site import Site, caller_site
from stepswitch.dsl._validate import plain_int, require_name, validate_fields
from stepswitch.dsl.agent import Agent
from stepswitch.dsl.flow import FlowEdge, Step
from stepswitch.dsl.notes import NotCarried
from stepswitch.errors import UserError

if TYPE_CHECKING:
    from stepswitch.analysis.report import Report
    from stepswitch.graph.bindings import BuiltWorkflow
    from stepswitch.graph.spec import PolicySpec, WorkflowSpec
    from stepswitch.graph.workflow_graph import WorkflowGraph
    from stepswitch.policies import Policy
    from stepswitch.render.scene import ReportLike
    from stepswitch.runtime.machine import StateMachine

__all__ = ["Workflow"]


_WORKFLOW_EXPECT = {
    "entry": "the entry Agent, @step or its name",
    "agents": "an Agent",
    "max_turns": "a positive int (model calls per run, across handoffs) or None",
    "max_depth": "a positive int (how deep agent tools may nest)",
    "max_model_calls": "a positive int (the most model calls a run may make, nested runs "
    "included) or None",
    "ignore": "a list of diagnostic codes",
}


def _visible_steps(flow: Sequence[FlowEdge] | None, frame: FrameType | None) -> tuple[str, ...]:
    """The names of the ``@ss.step`` objects where the workflow is declared (its module's
    globals): a flow node name that is none of the workflow's, but close to one of these,
    gets a did-you-mean (SW701). Only read for a flow."""
    if flow is None or frame is None:
        return ()
    return tuple(sorted({v.name for v in list(frame.f_globals.values()) if isinstance(v, Step)}))


class Workflow:
    """A workflow: where runs start, which agents take part, and the run's budgets.

    Agents reachable from ``entry`` or from a listed agent through handoffs and agent
    tools are included even when not listed. ``flow`` chains agents and ``@step``
    functions with edges (``then``, ``branch``, ``route``, ``fan_out``) from ``entry``
    to ``END``; the agents it names are included too. ``max_turns`` counts model calls
    across handoffs (one shared budget; in a flow, per agent node's run); ``max_depth``
    bounds agent-tool nesting;
    ``max_model_calls`` makes the analyzer fail when the worst case exceeds it.
    """

    def __init__(
        self,
        name: str,
        entry: Agent | Step | str | None,
        agents: Sequence[Agent] = (),
        *,
        flow: Sequence[FlowEdge] | None = None,
        max_turns: int | None = 10,
        max_depth: int = 8,
        max_model_calls: int | None = None,
        context_type: Any = None,
        ignore: Sequence[str] = (),
        policies: Sequence[Policy | PolicySpec] = (),
        max_cost_usd: float | None = None,
        max_total_tokens: int | None = None,
    ) -> None:
        site = caller_site()
        _check_policies(name, site, policies)
        if max_cost_usd is not None and (isinstance(max_cost_usd, bool) or not isinstance(
                max_cost_usd, int | float) or not max_cost_usd > 0):
            raise UserError(f"Workflow({name!r}) at {site}: max_cost_usd: expected a positive "
                            f"number of US dollars, got {max_cost_usd!r}")
        if max_total_tokens is not None and (type(max_total_tokens) is not int
                                             or max_total_tokens < 1):
            raise UserError(f"Workflow({name!r}) at {site}: max_total_tokens: expected a "
                            f"positive int, got {max_total_tokens!r}")
        _check_workflow(name, site, entry, agents, max_turns, max_depth, max_model_calls, ignore)
        if flow is not None:
            if isinstance(flow, str | bytes) or not isinstance(flow, Sequence):
                raise UserError(
                    f"Workflow({name!r}) at {site}: flow: expected a list of edges "
                    f"(ss.then, ss.branch, ss.route, ss.fan_out), got {type(flow).__name__}"
                )
            for i, edge in enumerate(flow):
                if not isinstance(edge, FlowEdge):
                    raise UserError(
                        f"Workflow({name!r}) at {site}: flow[{i}]: expected an edge "
                        f"(ss.then, ss.branch, ss.route, ss.fan_out), got "
                        f"{type(edge).__name__} {edge!r}"
                    )
        elif isinstance(entry, Step):
            raise UserError(
                f"Workflow({name!r}) at {site}: entry: a step can only start a flow; "
                "pass flow=[...] with its edges"
            )
        self.name = name
        self.entry = entry
        self.flow: list[FlowEdge] | None = None if flow is None else list(flow)
        self.agents: list[Agent] = list(agents)
        self.max_turns = max_turns
        self.max_depth = max_depth
        self.max_model_calls = max_model_calls
        self.context_type = context_type
        self.ignore: list[str] = list(ignore)
        self.policies: list[Policy | PolicySpec] = list(policies)
        self.max_cost_usd = None if max_cost_usd is None else float(max_cost_usd)
        self.max_total_tokens = max_total_tokens
        self.site = site
        self.not_carried: list[NotCarried] = []
        """Settings of the app this workflow was read from that stepswitch does not
        carry out (``from_sdk`` fills it; each is SW610)."""
        self._nearby_steps = _visible_steps(flow, sys._getframe(1))

    def build(self) -> BuiltWorkflow:
        """The frozen spec and the live objects it refers to."""
        from stepswitch.dsl.build import build

        return build(self)

    def _recheck(self) -> None:
        """Check the fields again as they are now (a workflow is a mutable builder):
        a value set after the declaration is a located ``UserError``, not a crash."""
        turns, depth, calls = self.max_turns, self.max_depth, self.max_model_calls
        if (
            type(self.name) is str
            and self.name.strip()
            and (self.entry is None or type(self.entry) is str
                 or isinstance(self.entry, Agent | Step))
            and type(self.agents) is list
            and all(type(a) is Agent for a in self.agents)
            and (turns is None or (type(turns) is int and turns >= 1))
            and type(depth) is int
            and depth >= 1
            and (calls is None or (type(calls) is int and calls >= 1))
            and type(self.ignore) is list
            and all(type(c) is str for c in self.ignore)
        ):
            return
        _check_workflow(self.name, self.site, self.entry, self.agents, turns, depth, calls,
                        self.ignore, changed=True)

    def to_spec(self) -> WorkflowSpec:
        """The frozen, JSON-serializable spec of the whole workflow."""
        return self.build().spec

    def to_json(self, *, indent: int | None = 2) -> str:
        """The spec as deterministic JSON: the same workflow gives the same bytes."""
        from stepswitch.graph.spec import spec_to_json

        return spec_to_json(self.to_spec(), indent=indent)

    def graph(self) -> WorkflowGraph:
        """The typed graph of agents, handoff edges and agent-tool edges."""
        from stepswitch.graph.workflow_graph import WorkflowGraph

        return WorkflowGraph.from_built(self.build())

    def check(
        self,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        max_model_calls: int | None = None,
        policies: Sequence[Policy | PolicySpec] = (),
        prices: dict[str, tuple[float, float]] | None = None,
        target: Any = None,
    ) -> Report:
        """Every diagnostic of the static analysis, sorted; never raises for a mistake
        in the workflow (``report.ok`` says whether there are errors).

        ``select``/``ignore`` take codes or prefixes (``SW2``); ``max_model_calls``
        overrides the workflow's own limit for this check. ``target`` (``"agents-api"``
        or the ``AgentsAPIModel`` a run will use) adds what the hosted Agents API cannot
        express (SW650-SW654); without it, an agent whose own model is an
        ``AgentsAPIModel`` brings that check along.
        """
        from stepswitch._agents_api import resolve_target
        from stepswitch.analysis import analyze
        from stepswitch.graph.workflow_graph import WorkflowGraph

        return analyze(
            WorkflowGraph.from_built(self.build()), select=select, ignore=ignore,
            max_model_calls=max_model_calls, policies=policies, prices=prices,
            target=resolve_target(target),
        )

    def compile(self) -> StateMachine:
        """Check the workflow, then lower it into a runnable ``StateMachine``.

        Raises ``CompileError`` (carrying the whole report) when the analysis finds
        errors, and ``UserError`` for what lowering cannot compile.
        """
        from stepswitch.analysis import analyze
        from stepswitch.compiler.lower import lower, refuse_unrunnable
        from stepswitch.errors import CompileError
        from stepswitch.graph.workflow_graph import WorkflowGraph
        from stepswitch.runtime.machine import StateMachine

        built = self.build()
        report = analyze(WorkflowGraph.from_built(built))
        if not report.ok:
            raise CompileError(report)
        refuse_unrunnable(built.spec)
        return StateMachine(lower(built.spec), built.bindings.objects)

    def to_mermaid(
        self,
        *,
        tools: bool = False,
        report: ReportLike | None = None,
        view: Literal["graph", "machine"] = "graph",
    ) -> str:
        """The workflow as Mermaid flowchart text (GitHub renders it in Markdown).

        ``tools=True`` draws function tools as nodes; ``report`` (``wf.check()``)
        highlights its diagnostics on the elements they concern; ``view="machine"``
        draws the compiled state machine instead of the agent graph.
        """
        from stepswitch.render import to_mermaid

        return to_mermaid(self, tools=tools, report=report, view=view)

    def to_dot(
        self,
        *,
        tools: bool = False,
        report: ReportLike | None = None,
        view: Literal["graph", "machine"] = "graph",
    ) -> str:
        """The workflow as Graphviz DOT text; ``stepswitch.render`` makes SVG or PNG."""
        from stepswitch.render import to_dot

        return to_dot(self, tools=tools, report=report, view=view)

    def __repr__(self) -> str:
        return f"Workflow(name={self.name!r}, agents={len(self.agents)})"


def _check_policies(name: str, site: Site, policies: Any) -> None:
    if isinstance(policies, str | bytes) or not isinstance(policies, Sequence):
        raise UserError(f"Workflow({name!r}) at {site}: policies: expected a list of policies "
                        f"(ss.require_approval, ss.forbid, ...), got {type(policies).__name__}")
    if not policies:
        return
    # a Policy is a plain value: a runner's workflow that declares some still loads
    # nothing of the graph stage (a PolicySpec given instead is checked by the spec's
    # own class, which loads it)
    from stepswitch.policies import Policy

    for i, policy in enumerate(policies):
        if isinstance(policy, Policy):
            continue
        from stepswitch.graph.spec import PolicySpec

        if not isinstance(policy, PolicySpec):
            raise UserError(f"Workflow({name!r}) at {site}: policies[{i}]: expected a policy "
                            f"(ss.require_approval, ss.require_guardrail, ss.forbid, "
                            f"ss.max_calls, ss.only_after), got {type(policy).__name__} "
                            f"{policy!r}")


def _plain_workflow(
    entry: Any, agents: Any, max_turns: Any, max_depth: Any, max_model_calls: Any, ignore: Any
) -> bool:
    """Plainly what ``WorkflowArgs`` accepts (nearly every declaration): then the
    pydantic model is not needed, nor built."""
    return (
        (entry is None or type(entry) is str or isinstance(entry, Agent))
        and all(isinstance(a, Agent) for a in agents)
        and plain_int(max_turns)
        and plain_int(max_depth, optional=False)
        and plain_int(max_model_calls)
        and all(type(c) is str for c in ignore)
    )


def _check_workflow(
    name: Any,
    site: Site,
    entry: Any,
    agents: Any,
    max_turns: Any,
    max_depth: Any,
    max_model_calls: Any,
    ignore: Any,
    *,
    changed: bool = False,
) -> None:
    suffix = " (changed after its declaration)" if changed else ""
    require_name(name, what="Workflow" + suffix, field="name", site=site)
    what = f"Workflow({name!r}){suffix}"
    if isinstance(agents, str | bytes) or not isinstance(agents, Sequence):
        raise UserError(
            f"{what} at {site}: agents: expected a list of Agent, "
            f"got {type(agents).__name__} {agents!r}"
        )
    for field, value in (("max_turns", max_turns), ("max_depth", max_depth),
                         ("max_model_calls", max_model_calls)):
        if isinstance(value, bool):
            raise UserError(f"{what} at {site}: {field}: expected an int, got bool")
    if isinstance(ignore, str | bytes) or not isinstance(ignore, Sequence):
        raise UserError(f"{what} at {site}: ignore: expected a list of diagnostic codes, "
                        f"got {type(ignore).__name__}")
    entry_value = entry.name if isinstance(entry, Step) else entry
    if not _plain_workflow(entry_value, agents, max_turns, max_depth, max_model_calls, ignore):
        validate_fields(
            "WorkflowArgs",
            {
                "entry": entry_value,
                "agents": list(agents),
                "max_turns": max_turns,
                "max_depth": max_depth,
                "max_model_calls": max_model_calls,
                "ignore": list(ignore),
            },
            what=what,
            site=site,
            expect=_WORKFLOW_EXPECT,
        )
