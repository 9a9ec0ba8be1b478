"""Lowering: a frozen ``WorkflowSpec`` → the machine IR (tables).

A pure pass: it reads the spec, does no I/O and binds nothing. It refuses what it
cannot lower (no entry, a target naming no agent, an agent tool with a per-call
approval function it cannot reference) with a ``UserError`` naming the place;
everything else the analyzer judges before lowering runs.

Every fact a later stage needs is computed here, once, and stored per state: what
the state can do (:func:`~stepswitch.graph.facts.machine_facts`: can it end a run,
where can its turn pause, does it only run nested) and its step switch
(:func:`step_switch`), the rows the interpreter reads and codegen prints; and per
flow node (:func:`~stepswitch.graph.facts.flow_facts`): does the entry lead to it, can
a run that reaches it end, can its run pause.
"""

from __future__ import annotations

from dataclasses import replace

from stepswitch._gc import gc_paused
from stepswitch.compiler.lower_flow import lower_flow
from stepswitch.errors import UserError
from stepswitch.graph.facts import flow_facts, machine_facts
from stepswitch.graph.spec import AgentSpec, GuardrailSpec, Ref, WorkflowSpec
from stepswitch.ir import (
    Action,
    GuardrailIR,
    HandoffTo,
    HostedToolIR,
    MachineIR,
    OutputRule,
    RunAgent,
    RunFunction,
    StateIR,
    StepCase,
    StepRule,
    ToolEntry,
    ToolGuardrailIR,
)
from stepswitch.vocabulary import check_words

__all__ = ["lower", "refuse_unrunnable", "step_switch"]


def lower(spec: WorkflowSpec) -> MachineIR:
    """The machine IR of ``spec``: one state per agent, in declaration order."""
    with gc_paused():  # many small frozen objects; the collector finds no garbage here
        return _lower(spec)


def refuse_unrunnable(spec: WorkflowSpec) -> None:
    """Refuse (``UserError``) what a machine can be drawn from but not run: an MCP server
    with no lock entry offers the model none of its tools, so a run of it would fail
    each call as "not found" and end as if it had worked. ``check`` warns (SW901); the
    diagrams (which lower the same spec) draw it; a machine to run is never made of it."""
    for agent in spec.agents:
        for server in agent.mcp_servers:
            if server.lock_file is not None:
                continue
            why = "has no entry in stepswitch.mcp.lock" if server.stale_transport is None \
                else (f"has no lock entry of its own (the lock's entry {server.name!r} was "
                      f"written for transport {server.stale_transport!r})")
            raise UserError(
                f"MCP server {server.name!r} (declared at {server.location}) {why}: a run "
                "would offer the model none of its tools; run `stepswitch mcp lock` on this "
                "workflow, review the lock and commit it"
            )


def _lower(spec: WorkflowSpec) -> MachineIR:
    if spec.entry is None:
        raise UserError(f"workflow {spec.name!r} at {spec.location}: it has no entry agent")
    names: set[str] = {a.name for a in spec.agents}
    facts = machine_facts(spec)
    flow = lower_flow(spec, names, flow_facts(spec, facts)) if spec.flow is not None else None
    if flow is None and spec.entry not in names:
        raise UserError(
            f"workflow {spec.name!r} at {spec.location}: entry {spec.entry!r} names no agent"
        )
    seen: set[str] = set()
    states: list[StateIR] = []
    for agent in spec.agents:
        if agent.name in seen:
            raise UserError(
                f"agent {agent.name!r} at {agent.location}: another agent has the same name"
            )
        seen.add(agent.name)
        states.append(_state(agent, names))
    for i, state in enumerate(states):
        state = replace(state, facts=facts[state.agent])
        states[i] = replace(state, switch=step_switch(state))
    ir = MachineIR(
        name=spec.name,
        entry=spec.entry,
        states=tuple(states),
        max_turns=spec.max_turns,
        max_depth=spec.max_depth,
        flow=flow,
        context_type=_context_class(spec),
        context_ref=_context_ref(spec),
    )
    check_words(ir)  # what lower() writes, every reader of the IR knows
    return ir


def _context_class(spec: WorkflowSpec) -> str | None:
    """The declared context type's name when it is a class a run must be given an
    instance of (``Any`` and ``object`` accept None, and a generic alias is no class)."""
    ref = spec.context_type
    if ref is None or ref.path.startswith("<") or ref.path in _ANY_CONTEXT:
        return None
    return ref.display or ref.path.rsplit(":", 1)[-1]


def _context_ref(spec: WorkflowSpec) -> str | None:
    """The declared context class's import path, when a run's context can be checked
    against it (an importable class, neither ``Any`` nor ``object``)."""
    ref = spec.context_type
    if _context_class(spec) is None or ref is None or not ref.importable:
        return None
    return ref.path


_ANY_CONTEXT = frozenset({"typing:Any", "builtins:object", "typing_extensions:Any"})


def _state(agent: AgentSpec, names: set[str]) -> StateIR:
    rows: list[ToolEntry] = []
    taken: dict[str, str] = {}

    def add(name: str, description: str, params: dict[str, object], action: Action,
            strict: bool, where: str, enabled: bool | Ref = True,
            namespace: str | None = None, namespace_description: str | None = None,
            defer_loading: bool = False) -> None:
        if name in taken:
            raise UserError(
                f"agent {agent.name!r}: tool name {name!r} at {where} is already used by "
                f"{taken[name]}; the model could not tell them apart"
            )
        taken[name] = where
        gate: bool | str = enabled if isinstance(enabled, bool) else enabled.path
        rows.append(ToolEntry(name, description, dict(params), action, strict, gate,
                              namespace, namespace_description, defer_loading))

    for t in agent.tools:
        add(
            t.call_name,
            t.description,
            t.parameters,
            RunFunction(
                ref=t.ref.path,
                is_async=t.is_async,
                takes_context=t.context_type is not None,
                failure=t.failure_mode,
                approval=t.needs_approval,
                timeout=t.timeout,
                input_guardrails=tuple(ToolGuardrailIR(g.name, g.ref.path)
                                       for g in t.input_guardrails),
                output_guardrails=tuple(ToolGuardrailIR(g.name, g.ref.path)
                                        for g in t.output_guardrails),
                max_uses=t.max_uses,
            ),
            t.strict,
            str(t.location),
            t.is_enabled,
            t.namespace,
            t.namespace_description,
            t.defer_loading,
        )
    for at in agent.agent_tools:
        if at.target not in names:
            raise UserError(
                f"agent tool {at.tool_name!r} at {at.location}: target {at.target!r} names "
                "no agent of the workflow"
            )
        if at.needs_approval == "per_call":
            raise UserError(
                f"agent tool {at.tool_name!r} at {at.location}: a per-call approval function "
                "on an agent tool cannot be compiled; use needs_approval=True"
            )
        add(
            at.tool_name,
            at.description,
            at.parameters,
            RunAgent(
                target=at.target,
                max_turns=at.max_turns,
                max_depth=at.max_depth,
                approval=at.needs_approval,
                output_extractor=at.output_extractor.path if at.output_extractor else None,
                parameters_type=at.parameters_type.path if at.parameters_type else None,
            ),
            True,
            str(at.location),
            at.is_enabled,
        )
    for h in agent.handoffs:
        if h.target not in names:
            raise UserError(
                f"handoff {h.tool_name!r} at {h.location}: target {h.target!r} names no agent "
                "of the workflow"
            )
        add(
            h.tool_name,
            h.description,
            h.parameters,
            HandoffTo(
                target=h.target,
                max_uses=h.max_uses,
                input_type=h.input_type.path if h.input_type else None,
                on_handoff=h.on_handoff.path if h.on_handoff else None,
                input_filter=h.input_filter.path if h.input_filter else None,
            ),
            True,
            str(h.location),
            h.is_enabled,
        )
    out = agent.output_type
    output = (
        OutputRule()
        if out is None
        else OutputRule(
            kind="typed",
            type_ref=out.ref.path,
            schema=dict(out.schema_),
            wrapped=out.wrapped,
            name=out.ref.display or "final_output",
        )
    )
    tub = agent.tool_use_behavior
    step = StepRule(
        tool_use=tub.kind,
        stop_at=tuple(tub.tool_names),
        function=tub.ref.path if tub.ref is not None else None,
    )
    return StateIR(
        agent=agent.name,
        instructions=agent.instructions,
        instructions_fn=agent.instructions_fn.path if agent.instructions_fn else None,
        model=agent.model,
        model_ref=agent.model_ref.path if agent.model_ref else None,
        settings=dict(agent.model_settings),
        tools=tuple(rows),
        hosted=tuple(HostedToolIR(h.kind, h.name, dict(h.config), h.include)
                     for h in agent.hosted_tools),
        output=output,
        step=step,
        input_guardrails=tuple(_guardrail(g) for g in agent.input_guardrails),
        output_guardrails=tuple(_guardrail(g) for g in agent.output_guardrails),
        hooks=agent.hooks.path if agent.hooks is not None else None,
    )


def step_switch(state: StateIR) -> tuple[StepCase, ...]:
    """The step switch of ``state``, from its tables and facts: only the rows that can
    apply (no Interruption row for a state that cannot pause, no Handoff row without
    handoffs), in the SDK's order."""
    cases: list[StepCase] = []
    if state.facts.can_pause:
        cases.append(StepCase("interrupted", "interruption"))
    if any(isinstance(t.action, HandoffTo) for t in state.tools):
        cases.append(StepCase("handoff", "handoff"))
    runs = {t.name for t in state.tools if not isinstance(t.action, HandoffTo)}
    if runs:
        rule = state.step
        if rule.tool_use == "stop_on_first_tool":
            cases.append(StepCase("tools_ran", "final_first_tool"))
        elif rule.tool_use == "function":
            cases.append(StepCase("tools_ran", "ask_tool_use"))
        elif rule.tool_use == "stop_at_tools" and (
            stops := tuple(n for n in dict.fromkeys(rule.stop_at) if n in runs)
        ):
            cases.append(StepCase("tools_ran", "final_listed_tool", stops))
        else:  # run_llm_again, or no listed tool exists
            cases.append(StepCase("tools_ran", "run_again"))
    cases.append(StepCase("called", "run_again"))
    if state.output.kind == "typed":
        cases.append(StepCase("no_message", "run_again"))
    cases.append(StepCase("otherwise", "final_message"))
    return tuple(cases)


def _guardrail(g: GuardrailSpec) -> GuardrailIR:
    return GuardrailIR(name=g.name, kind=g.kind, ref=g.ref.path, run_in_parallel=g.run_in_parallel)
