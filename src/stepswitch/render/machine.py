"""The machine view: the compiled step-switch state machine, drawn from its IR.

One state per agent, from the same :class:`~stepswitch.ir.MachineIR` the
runtime interprets and codegen emits, so the picture cannot show a transition the
machine does not have. Transitions are the four steps a model turn can end in:

- **Handoff** to another state, with the handoff's budget (``≤2``);
- **Interruption** into the ``paused`` node when the state's turn can pause (a tool
  or agent tool that needs approval, or an agent tool whose nested run can pause, at
  any depth), and *resume* back once the state is approved or rejected;
- **RunAgain**, a loop on the state: tools ran and the model is called again;
- **Final** into ``end``: a text or typed answer, or a tool's output when the
  state's tool-use rule stops.

Agent tools are drawn as in the graph view (a nested run that returns). States that
only ever run nested return their Final to the caller instead of ending the run.
Whether a state can pause, end the run, or only runs nested are the facts ``lower()``
stored in the state (``state.facts``): the view draws them, it does not derive them.
"""

from __future__ import annotations

from stepswitch.ir import HandoffTo, MachineIR, RunAgent, RunFunction, StateIR
from stepswitch.render.scene import (
    END_ID,
    GATED,
    PAUSED_ID,
    START_ID,
    Mark,
    ReportLike,
    Scene,
    SceneEdge,
    SceneNode,
    code_lines,
    sort_marks,
)

__all__ = ["build_machine_scene", "runs_again"]


def _state_lines(state: StateIR) -> list[str]:
    lines: list[str] = []
    out = state.output
    lines.append(f"output: {out.name or out.type_ref}" if out.kind == "typed" else "output: text")
    if state.model is not None:
        lines.append(f"model: {state.model}")
    choice = state.settings.get("tool_choice")
    if choice is not None and choice != "auto":
        lines.append(f"tool_choice: {choice}")
    for g in state.input_guardrails:
        lines.append(f"guard in: {g.name}")
    for g in state.output_guardrails:
        lines.append(f"guard out: {g.name}")
    for row in state.tools:
        if isinstance(row.action, RunFunction):
            mark = {"never": "", "always": " [approval]", "per_call": " [approval per call]"}
            gate = GATED if row.enabled is not True else ""
            guards = [f"in: {g.name}" for g in row.action.input_guardrails]
            guards += [f"out: {g.name}" for g in row.action.output_guardrails]
            shown = f" [guard {', '.join(guards)}]" if guards else ""
            lines.append(f"tool: {row.name}{mark[row.action.approval]}{gate}{shown}")
    rule = state.step
    if rule.tool_use == "stop_on_first_tool":
        lines.append("after tools: stop on first tool")
    elif rule.tool_use == "stop_at_tools":
        lines.append(f"after tools: stop at {', '.join(rule.stop_at)}")
    elif rule.tool_use == "function":
        lines.append(f"after tools: ask {rule.function}")
    return lines


def runs_again(state: StateIR) -> bool:
    """Whether a turn of ``state`` can end in RunAgain: any call (a tool that ran, a
    handoff refused for lack of budget) and a typed answer that did not parse both lead
    to another model call in this state. Both machine views draw the loop from this."""
    return bool(state.tools) or state.output.kind == "typed"


def build_machine_scene(ir: MachineIR, *, report: ReportLike | None = None) -> Scene:
    """The machine view of ``ir``; ``report`` highlights diagnostics as in the graph view
    (an agent's marks on its state, a handoff's or agent tool's on its transition)."""
    if ir.flow is not None:
        from stepswitch.render.flow_scene import build_flow_machine_scene

        return build_flow_machine_scene(ir, report=report)
    names = [s.agent for s in ir.states]
    by_name = {s.agent: s for s in ir.states}

    def size_of(agent: str, field: str) -> int:
        kind = {"tools": RunFunction, "agent_tools": RunAgent, "handoffs": HandoffTo}[field]
        return sum(isinstance(row.action, kind) for row in by_name[agent].tools)

    marks = sort_marks(names, report, size_of)
    ids = {name: f"a{i}" for i, name in enumerate(names)}
    budget = [f"max_turns: {ir.max_turns}" if ir.max_turns is not None else "max_turns: none",
              f"max_depth: {ir.max_depth}"]
    nodes = [SceneNode(START_ID, "start", "start", (*budget, *code_lines(marks.workflow)),
                       marks=tuple(marks.workflow))]
    edges: list[SceneEdge] = []
    if ir.entry in ids:
        edges.append(SceneEdge(START_ID, ids[ir.entry], "start"))
    pauses: list[SceneEdge] = []
    finals: list[SceneEdge] = []
    for state in ir.states:
        sid = ids[state.agent]
        facts = state.facts
        nested_only = facts.nested_only
        own = list(marks.agents.get(state.agent, ()))
        lines = _state_lines(state)
        counters = {"tools": 0, "agent_tools": 0, "handoffs": 0}
        for row in state.tools:
            action = row.action
            field = ("tools" if isinstance(action, RunFunction)
                     else "agent_tools" if isinstance(action, RunAgent) else "handoffs")
            found: list[Mark] = marks.edges.get((state.agent, field, counters[field]), [])
            counters[field] += 1
            codes = "".join(f" [{m.code}]" for m in found)
            if isinstance(action, HandoffTo):
                budget_text = f" ≤{action.max_uses}" if action.max_uses is not None else ""
                gated = row.enabled is not True
                edges.append(SceneEdge(sid, ids.get(action.target, END_ID), "handoff",
                                       f"Handoff: {row.name}{budget_text}"
                                       f"{GATED if gated else ''}{codes}",
                                       marks=tuple(found), gated=gated))
            elif isinstance(action, RunAgent):
                limits = "".join(
                    f" {text}≤{value}" for text, value in
                    (("turns ", action.max_turns), ("depth ", action.max_depth))
                    if value is not None
                )
                gated = row.enabled is not True
                edges.append(SceneEdge(sid, ids.get(action.target, END_ID), "agent_tool",
                                       f"{row.name}: nested run{limits}"
                                       f"{GATED if gated else ''}{codes}",
                                       action.approval != "never", tuple(found), gated))
            else:
                own.extend(found)
        if nested_only:
            lines.append("nested run: Final returns to caller")
        lines.extend(code_lines(marks.agents.get(state.agent, ())))
        nodes.append(SceneNode(sid, "agent", state.agent, tuple(lines), state.agent == ir.entry,
                               False, nested_only, tuple(own)))
        if runs_again(state):
            edges.append(SceneEdge(sid, sid, "run_again", "RunAgain"))
        if facts.pauses:
            shown = ", ".join(
                p.tool if p.kind != "nested" else f"{p.tool} (nested)" for p in facts.pauses
            )
            pauses.append(SceneEdge(sid, PAUSED_ID, "interrupt", f"Interruption: {shown}"))
            pauses.append(SceneEdge(PAUSED_ID, sid, "resume", "resume"))
        if not nested_only:
            if facts.answers:
                what = state.output.name if state.output.kind == "typed" else "text"
                finals.append(SceneEdge(sid, END_ID, "final", f"Final: {what}"))
            if facts.stops:
                finals.append(SceneEdge(sid, END_ID, "final", "Final: tool output"))
    if pauses:
        nodes.append(SceneNode(PAUSED_ID, "paused", "paused", ("waiting for approval",),
                               pause=True))
    nodes.append(SceneNode(END_ID, "end", "end"))
    edges.extend(pauses)
    edges.extend(finals)
    return Scene(ir.name, tuple(nodes), tuple(edges), view="machine")
