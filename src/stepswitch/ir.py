"""The step-switch machine's IR: plain data, the only thing the runtime reads.

One :class:`StateIR` per agent. Each state has a table from every tool name the
model may call to its :data:`Action` (run a function, hand off, run an agent nested),
an :class:`OutputRule` (text or a typed output) and a :class:`StepRule` (how a
response maps to Final / Handoff / Interruption / RunAgain).

Every value is a frozen dataclass of ``str``/``int``/``bool``/``None``/tuples/dicts of
JSON values, so ``repr(ir)`` is a Python literal that rebuilds it (generated modules
embed it that way). User code is never held here: it is named by import path
(``module:qualname``) and resolved through the machine's resolver at run time.

This module imports nothing from stepswitch but its flow part (:mod:`stepswitch.flow_ir`,
another leaf): codegen, the runtime and the diagram
code all read it. It sits at the top of the package, not in ``compiler/``, so a
deployed runner reads it without loading the compiler (``stepswitch.compiler.ir``
re-exports it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from stepswitch.flow_ir import FlowIR

__all__ = [
    "IR_VERSION",
    "Action",
    "Approval",
    "GuardrailIR",
    "HandOff",
    "MachineIR",
    "OutputRule",
    "RunAgent",
    "RunFunction",
    "StateIR",
    "StepRule",
    "ToolEntry",
]

IR_VERSION = 1

Approval: TypeAlias = Literal["never", "always", "per_call"]
"""Whether a call waits for a human: never, always, or as a callable decides per call."""


@dataclass(frozen=True, slots=True)
class RunFunction:
    """Run the function tool bound at ``ref`` with the validated arguments."""

    ref: str
    is_async: bool = False
    takes_context: bool = False
    failure: Literal["default", "raise", "custom"] = "default"
    """What a raising tool becomes: the default error output, a propagated error, or
    the tool's own ``failure_error_function``."""
    approval: Approval = "never"
    kind: Literal["function"] = "function"


@dataclass(frozen=True, slots=True)
class HandOff:
    """Hand control to ``target``; taken at most ``max_uses`` times per run."""

    target: str
    max_uses: int | None = None
    input_type: str | None = None
    on_handoff: str | None = None
    input_filter: str | None = None
    kind: Literal["handoff"] = "handoff"


@dataclass(frozen=True, slots=True)
class RunAgent:
    """Run ``target`` nested, with only the generated input; its output is the tool's."""

    target: str
    max_turns: int | None = None
    """The nested run's budget; ``None`` means the workflow's ``max_turns``."""
    max_depth: int | None = None
    approval: Approval = "never"
    output_extractor: str | None = None
    parameters_type: str | None = None
    """The declared parameters type; ``None`` means ``{"input": str}``."""
    kind: Literal["agent"] = "agent"


Action: TypeAlias = RunFunction | HandOff | RunAgent
"""What a tool name means in one state."""


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One row of a state's tool table: a name the model may call and what it does."""

    name: str
    description: str
    parameters: dict[str, Any]
    action: Action
    strict: bool = True


@dataclass(frozen=True, slots=True)
class OutputRule:
    """What a final message is: plain text, or JSON of a typed output."""

    kind: Literal["text", "typed"] = "text"
    type_ref: str | None = None
    schema: dict[str, Any] | None = None
    wrapped: bool = False
    """True when the type travels wrapped as ``{"response": T}``."""
    name: str = ""
    """The schema's name as sent to the model (the type's display name)."""


@dataclass(frozen=True, slots=True)
class StepRule:
    """How a response maps to a step, after its tools ran (the SDK's order):

    pending approvals → Interruption; a handoff taken → Handoff; function or agent
    tools ran → ``tool_use`` decides (run again, stop on the first tool, stop at the
    listed tools, or ask ``function``); any other call → RunAgain; otherwise the last
    message is Final (a typed output with no message runs again).
    """

    tool_use: Literal["run_llm_again", "stop_on_first_tool", "stop_at_tools", "function"] = (
        "run_llm_again"
    )
    stop_at: tuple[str, ...] = ()
    function: str | None = None


@dataclass(frozen=True, slots=True)
class GuardrailIR:
    """An input or output guardrail bound at ``ref``."""

    name: str
    kind: Literal["input", "output"]
    ref: str
    run_in_parallel: bool = False


@dataclass(frozen=True, slots=True)
class StateIR:
    """One agent: what it is sent, what it may call, and how its turns end."""

    agent: str
    instructions: str | None = None
    instructions_fn: str | None = None
    model: str | None = None
    model_ref: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    """The agent's ``ModelSettings`` fields that are set."""
    tools: tuple[ToolEntry, ...] = ()
    """Function tools, agent tools and handoffs, in the order offered to the model."""
    output: OutputRule = OutputRule()
    step: StepRule = StepRule()
    input_guardrails: tuple[GuardrailIR, ...] = ()
    output_guardrails: tuple[GuardrailIR, ...] = ()

    @property
    def name(self) -> str:
        """The agent's name, as ``agent.name`` reads in the SDK.

        This state is the ``agent`` handed to instructions functions and guardrails.
        """
        return self.agent

    def tool(self, name: str) -> ToolEntry | None:
        """The table row for ``name``, or None when the agent has no such tool."""
        for entry in self.tools:
            if entry.name == name:
                return entry
        return None


@dataclass(frozen=True, slots=True)
class MachineIR:
    """A whole compiled workflow: its states, the entry state and the run budgets."""

    name: str
    entry: str
    states: tuple[StateIR, ...]
    max_turns: int | None = 10
    max_depth: int = 8
    version: int = IR_VERSION
    flow: FlowIR | None = None
    """The flow of agents and steps, when the workflow has one (``entry`` is then the
    flow's entry node); None: a run is the entry agent's loop."""

    def state(self, agent: str) -> StateIR | None:
        """The state of ``agent``, or None."""
        for state in self.states:
            if state.agent == agent:
                return state
        return None

    def refs(self) -> tuple[str, ...]:
        """Every import path the machine needs bound, sorted, each once."""
        paths: set[str] = set()
        for s in self.states:
            for p in (s.instructions_fn, s.model_ref, s.output.type_ref, s.step.function):
                if p is not None:
                    paths.add(p)
            for g in (*s.input_guardrails, *s.output_guardrails):
                paths.add(g.ref)
            for t in s.tools:
                a = t.action
                if isinstance(a, RunFunction):
                    paths.add(a.ref)
                elif isinstance(a, HandOff):
                    paths.update(p for p in (a.input_type, a.on_handoff, a.input_filter) if p)
                else:
                    paths.update(p for p in (a.output_extractor, a.parameters_type) if p)
        if self.flow is not None:
            paths.update(self.flow.refs())
        return tuple(sorted(paths))
