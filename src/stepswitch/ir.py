"""The step-switch machine's IR: plain data, the only thing the runtime reads.

One :class:`StateIR` per agent. Each state has a table from every tool name the
model may call to its :data:`Action` (run a function, hand off, run an agent nested),
an :class:`OutputRule` (text or a typed output), a :class:`StepRule` (the declared
tool-use behaviour), the facts ``lower()`` worked out about it (:class:`StateFacts`:
can it end a run, where can its turn pause, does it only run nested) and its step
switch: the :class:`StepCase` rows that map a turn's outcome to Final / Handoff /
Interruption / RunAgain. The interpreter reads those rows each turn and codegen
prints them as code, so the switch exists once, as data.

Every value is a frozen dataclass of ``str``/``int``/``bool``/``None``/tuples/dicts of
JSON values, so ``repr(ir)`` is a Python literal that rebuilds it (generated modules
embed it that way). User code is never held here: it is named by import path
(``module:qualname``) and resolved through the machine's resolver at run time.

This module imports nothing from stepswitch but its flow part (:mod:`stepswitch.flow_ir`,
another leaf): codegen, the runtime and the diagram
code all read it. It sits at the top of the package, not in ``compiler/``, so a
deployed runner reads it without loading the compiler (``stepswitch.compiler``
re-exports its names).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from stepswitch._dataclass import dataclass

if TYPE_CHECKING:  # a flow's IR (MachineIR.flow) is made by whoever has one to make
    from stepswitch.flow_ir import FlowIR

__all__ = [
    "IR_VERSION",
    "Action",
    "Approval",
    "GuardrailIR",
    "HandoffTo",
    "HostedToolIR",
    "MachineIR",
    "OutputRule",
    "PausePoint",
    "RunAgent",
    "RunFunction",
    "StateFacts",
    "StateIR",
    "StepCase",
    "StepRule",
    "StepThen",
    "StepWhen",
    "ToolEntry",
    "ToolGuardrailIR",
]

IR_VERSION = 2

Approval: TypeAlias = Literal["never", "always", "per_call"]
"""Whether a call waits for a human: never, always, or as a callable decides per call."""


@dataclass(frozen=True, slots=True)
class ToolGuardrailIR:
    """A tool input or output guardrail bound at ``ref`` (which list says which)."""

    name: str
    ref: str


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
    timeout: float | None = None
    """Seconds one call may take; past it the call is a ``ToolTimeoutError``."""
    input_guardrails: tuple[ToolGuardrailIR, ...] = ()
    """Run in order after approval and validation, before the call; the first that
    rejects or raises decides."""
    output_guardrails: tuple[ToolGuardrailIR, ...] = ()
    """Run in order on the tool's value before its output is recorded."""
    max_uses: int | None = None
    """How many times one run (nested runs and flow nodes included) may run it; once
    spent it is no longer offered and a call of it gets an error output."""
    kind: Literal["function"] = "function"


@dataclass(frozen=True, slots=True)
class HandoffTo:
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


Action: TypeAlias = RunFunction | HandoffTo | RunAgent
"""What a tool name means in one state."""


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One row of a state's tool table: a name the model may call and what it does."""

    name: str
    """The name the model's calls carry (``namespace.tool`` for a namespaced tool)."""
    description: str
    parameters: dict[str, Any]
    action: Action
    strict: bool = True
    enabled: bool | str = True
    """Whether the model is offered it: always, never, or as the function bound at this
    path says each turn (``is_enabled``)."""
    namespace: str | None = None
    """The ``tool_namespace`` it is offered in (Responses API tool search)."""
    namespace_description: str | None = None
    defer_loading: bool = False
    """Offered only once a tool search loads it."""


@dataclass(frozen=True, slots=True)
class HostedToolIR:
    """A tool OpenAI runs (web search, file search, code interpreter, image generation,
    hosted MCP, tool search): sent as ``config``; nothing on our side runs it."""

    kind: str
    name: str
    config: dict[str, Any]
    include: str | None = None
    """What the request's ``include`` needs for this tool's results."""


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
    """The agent's declared tool-use behaviour: after function or agent tools ran,
    run the model again, stop on the first tool, stop at the listed tools, or ask
    ``function``. ``lower()`` turns it into the state's step switch (the SDK's order:
    pending approvals → Interruption; a handoff taken → Handoff; tools ran → this
    rule; any other call → RunAgain; otherwise the last message is Final, and a typed
    output with no message runs again)."""

    tool_use: Literal["run_llm_again", "stop_on_first_tool", "stop_at_tools", "function"] = (
        "run_llm_again"
    )
    stop_at: tuple[str, ...] = ()
    function: str | None = None


StepWhen: TypeAlias = Literal[
    "interrupted", "handoff", "tools_ran", "called", "no_message", "otherwise"
]
"""What a case of the step switch tests in the turn's outcome: a call waits for
approval; a handoff took effect; function or agent tools ran; the response called
anything; it has no message; always (the last case)."""

StepThen: TypeAlias = Literal[
    "interruption",
    "handoff",
    "run_again",
    "final_first_tool",
    "final_listed_tool",
    "ask_tool_use",
    "final_message",
]
"""What the case decides: Interruption; Handoff to the turn's target; RunAgain; Final
with the first tool's result; Final with the first result of a tool in ``tools`` (else
RunAgain); ask the ``tool_use_behavior`` function; Final with the last message."""


@dataclass(frozen=True, slots=True)
class StepCase:
    """One row of a state's step switch: the first row whose ``when`` holds decides."""

    when: StepWhen
    then: StepThen
    tools: tuple[str, ...] = ()
    """For ``final_listed_tool``: the tools whose result ends the run."""


@dataclass(frozen=True, slots=True)
class PausePoint:
    """Where a turn of a state can pause for a human's approval."""

    tool: str
    kind: Literal["tool", "agent_tool", "nested"]
    """``tool``/``agent_tool``: the call itself needs approval (``approval`` says when);
    ``nested``: the agent tool's nested run can pause (through its own tools, its
    handoffs, or agent tools of those, to any depth)."""
    approval: Approval = "always"
    target: str | None = None
    """For agent tools: the agent the nested run starts at."""


@dataclass(frozen=True, slots=True)
class StateFacts:
    """What ``lower()`` worked out about one state, once. Every later stage reads these
    (the analyzer's pause and termination rules, both diagram views, the interpreter
    and codegen through the step switch) instead of deriving them again."""

    answers: bool = True
    """It can end a run by answering (text or a typed output)."""
    stops: bool = False
    """It can end a run with a tool's output (its tool-use behaviour stops)."""
    own_end: int | None = 1
    """Fewest model calls with which it ends a run itself; None: it cannot (it must
    hand off, or its forced tool does not exist)."""
    end_calls: int | None = 1
    """Fewest model calls from it to the end of a run, handoffs followed; None: no run
    that reaches it can end."""
    pauses: tuple[PausePoint, ...] = ()
    """Where its turn can pause; empty: it never pauses."""
    nested_only: bool = False
    """It runs only nested (reached from the entry only through agent tools): its Final
    returns to the caller instead of ending the run."""

    @property
    def can_pause(self) -> bool:
        return bool(self.pauses)


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
    hosted: tuple[HostedToolIR, ...] = ()
    """Hosted tools, offered after the others (Responses API only)."""
    output: OutputRule = OutputRule()
    step: StepRule = StepRule()
    input_guardrails: tuple[GuardrailIR, ...] = ()
    output_guardrails: tuple[GuardrailIR, ...] = ()
    facts: StateFacts = StateFacts()
    switch: tuple[StepCase, ...] = ()
    """The step switch, in order; ``lower()`` fills it (a machine refuses a state
    without one)."""
    hooks: str | None = None
    """The agent's ``AgentHooks`` object, bound at this path."""

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
    context_type: str | None = None
    """The name of the class ``Workflow(context_type=)`` declares (None: none, or a type
    that is no class): a run without ``context=`` is refused before anything runs."""
    context_ref: str | None = None
    """That class's import path, when it can be imported: a run whose ``context`` is not
    an instance of it is refused before anything runs, as is one without."""

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
            for p in (s.instructions_fn, s.model_ref, s.output.type_ref, s.step.function,
                      s.hooks):
                if p is not None:
                    paths.add(p)
            for g in (*s.input_guardrails, *s.output_guardrails):
                paths.add(g.ref)
            for t in s.tools:
                a = t.action
                if type(t.enabled) is str:
                    paths.add(t.enabled)
                if isinstance(a, RunFunction):
                    paths.add(a.ref)
                    paths.update(g.ref for g in (*a.input_guardrails, *a.output_guardrails))
                elif isinstance(a, HandoffTo):
                    paths.update(p for p in (a.input_type, a.on_handoff, a.input_filter) if p)
                else:
                    paths.update(p for p in (a.output_extractor, a.parameters_type) if p)
        if self.flow is not None:
            paths.update(self.flow.refs())
        if self.context_ref is not None:
            paths.add(self.context_ref)
        return tuple(sorted(paths))


def __getattr__(name: str) -> object:
    # The handoff action was called HandOff until 2026-11-30; the DSL's ss.Handoff and
    # the runtime's HandoffStep kept the other two spellings of one word apart.
    if name == "HandOff":
        import warnings

        warnings.warn("stepswitch.ir.HandOff is now HandoffTo", DeprecationWarning,
                      stacklevel=2)
        return HandoffTo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
