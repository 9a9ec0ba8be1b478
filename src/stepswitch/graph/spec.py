"""The workflow spec: a frozen, JSON-serializable description of a whole workflow.

The spec is what the DSL builds and every later stage reads. It refers to agents by
name (so a dangling name is a diagnostic, not a ``NameError``) and to user code by
import path (``module:qualname``), so it can be written to JSON, diffed, and read
back. Live objects (tool functions, types, guardrails) travel beside it in
:class:`~stepswitch.graph.bindings.Bindings`, keyed by the same paths.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NewType

from pydantic import BaseModel, ConfigDict, Field

from stepswitch._policy_text import describe
from stepswitch.ir import Approval

__all__ = [
    "AGENT_TOOL_INPUT_SCHEMA",
    "SPEC_VERSION",
    "AgentName",
    "AgentSpec",
    "AgentToolSpec",
    "FlowCaseSpec",
    "FlowEdgeSpec",
    "GuardrailSpec",
    "HandoffSpec",
    "HostedToolSpec",
    "Location",
    "MCPServerSpec",
    "MCPToolSpec",
    "NotCarriedSpec",
    "OutputTypeSpec",
    "PolicySpec",
    "Ref",
    "SchemaProblemSpec",
    "StepSpec",
    "ToolGuardrailSpec",
    "ToolSpec",
    "ToolUseBehaviorSpec",
    "WorkflowSpec",
    "is_gated",
    "spec_json_schema",
    "spec_to_json",
]

SPEC_VERSION = 1

AGENT_TOOL_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "AgentAsToolInput",
    "properties": {"input": {"type": "string", "title": "Input"}},
    "required": ["input"],
    "additionalProperties": False,
}
"""What an agent tool takes unless it declares ``parameters``: ``{"input": str}``."""

AgentName = NewType("AgentName", str)
"""An agent's name: how every spec object refers to an agent."""

"""Whether a call needs a human's yes: never, always, or as a callable decides per call."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Location(_Frozen):
    """Where the user declared something: file (relative to the working directory when
    under it), 1-based line and column."""

    file: str
    line: int
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class Ref(_Frozen):
    """A reference to a live Python object (function, type, guardrail) by import path.

    ``path`` is ``module:qualname``. ``importable`` is False for lambdas, functions
    defined inside functions, ``__main__`` objects and generic aliases: such an object
    works in-process but cannot be imported by a generated module.
    """

    path: str
    importable: bool
    display: str = ""
    """A short human name (``Findings``, ``list[int]``) for messages and diagrams."""


class SchemaProblemSpec(_Frozen):
    """One strict-mode rule a JSON schema breaks (see :mod:`stepswitch.schema`)."""

    rule: str
    path: str
    message: str


Enabled = bool | Ref
"""``is_enabled`` of a tool, agent tool or handoff: always (True), never (False), or the
function deciding each turn."""


def is_gated(part: ToolSpec | HandoffSpec | AgentToolSpec) -> bool:
    """Whether ``is_enabled`` may hide the tool, agent tool or handoff on some turn."""
    return part.is_enabled is not True


class ToolGuardrailSpec(_Frozen):
    """A tool input or output guardrail on a function tool."""

    name: str
    kind: Literal["input", "output"]
    """The list it is in (``tool_input_guardrails`` or ``tool_output_guardrails``)."""
    declared_kind: Literal["input", "output"] | None = None
    """What it was declared as (``@tool_input_guardrail`` ...); None: not known."""
    ref: Ref
    is_async: bool = False
    arity: int | None = 1
    """How many arguments it takes (one: the data); None: it cannot be told."""
    declared_type: Ref | None = None
    """Its parameter's annotation."""
    returns: Ref | None = None
    """Its return annotation."""
    location: Location


class ToolSpec(_Frozen):
    """A function tool as the model sees it, and how to find its code."""

    name: str
    description: str
    parameters: dict[str, Any]
    """The JSON schema of the arguments, rewritten for strict mode when ``strict``."""
    strict: bool = True
    schema_problems: tuple[SchemaProblemSpec, ...] = ()
    needs_approval: Approval = "never"
    ref: Ref
    is_async: bool = False
    context_type: Ref | None = None
    """The ``T`` of a ``RunContext[T]`` first parameter, if the tool declares one."""
    failure_mode: Literal["default", "raise", "custom"] = "default"
    timeout: float | None = None
    """Seconds one call may take (``function_tool(timeout=)``); None: no limit."""
    max_uses: int | None = None
    """How many times one run (nested runs and flow nodes included) may run the tool
    (``function_tool(max_uses=)``); None: no limit."""
    opaque: str | None = None
    """What a tool stepswitch cannot run stands for (a hosted tool, an MCP server, read
    from an SDK app); None for every tool it runs."""
    unknown_doc_params: tuple[str, ...] = ()
    """Names the docstring's ``Args:`` describes that are no parameter of the function
    (their descriptions are dropped; SW305)."""
    runs_agents: str | None = None
    """The agent run the tool's own code starts (``"Runner.run"``), into which the graph
    does not see (SW617); None when its code names none."""
    namespace: str | None = None
    """Its ``tool_namespace`` (the model calls it ``namespace.name``); None: none."""
    namespace_description: str | None = None
    defer_loading: bool = False
    """Offered only once a tool search loads it (``function_tool(defer_loading=True)``)."""
    is_enabled: Enabled = True
    input_guardrails: tuple[ToolGuardrailSpec, ...] = ()
    output_guardrails: tuple[ToolGuardrailSpec, ...] = ()
    mcp_server: str | None = None
    """The MCP server this tool is one of (its name; the tool was read from its lock);
    None for a function tool."""
    location: Location

    @property
    def call_name(self) -> str:
        """The name the model's calls of it carry: ``namespace.name`` in a namespace,
        ``name.name`` when deferred outside one (the Responses API's shape for a loaded
        deferred tool), else the name."""
        if self.namespace is not None:
            return f"{self.namespace}.{self.name}"
        if self.defer_loading:
            return f"{self.name}.{self.name}"
        return self.name


class HandoffSpec(_Frozen):
    """A handoff edge: control moves to ``target`` and does not come back."""

    target: AgentName
    tool_name: str
    description: str
    max_uses: int | None = None
    input_schema: dict[str, Any] | None = None
    input_type: Ref | None = None
    schema_problems: tuple[SchemaProblemSpec, ...] = ()
    on_handoff: Ref | None = None
    on_handoff_context_type: Ref | None = None
    input_filter: Ref | None = None
    is_enabled: Enabled = True
    location: Location

    @property
    def parameters(self) -> dict[str, Any]:
        """The arguments' JSON schema the model is sent: the input type's, or an object
        with no properties (lowering and the cost bound read this one fact)."""
        if self.input_schema is not None:
            return self.input_schema
        return {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


class AgentToolSpec(_Frozen):
    """An agent-as-tool edge: a nested run of ``target`` whose output is a tool output."""

    target: AgentName
    tool_name: str
    description: str
    parameters: dict[str, Any]
    parameters_type: Ref | None = None
    schema_problems: tuple[SchemaProblemSpec, ...] = ()
    max_turns: int | None = None
    max_depth: int | None = None
    needs_approval: Approval = "never"
    output_extractor: Ref | None = None
    extractor_input_type: Ref | None = None
    """What the extractor declares it takes (its first parameter's annotation)."""
    is_enabled: Enabled = True
    location: Location


class GuardrailSpec(_Frozen):
    """An input or output guardrail attached to an agent."""

    name: str
    kind: Literal["input", "output"]
    ref: Ref
    run_in_parallel: bool = False
    declared_type: Ref | None = None
    """The annotation of the guardrail's third parameter (the input or the output)."""
    context_type: Ref | None = None
    location: Location


class OutputTypeSpec(_Frozen):
    """An agent's structured output type and the strict schema sent for it."""

    ref: Ref
    schema_: dict[str, Any] = Field(alias="schema")
    wrapped: bool = False
    """True when the type is sent wrapped as ``{"response": T}`` (non-object types)."""
    schema_problems: tuple[SchemaProblemSpec, ...] = ()

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ToolUseBehaviorSpec(_Frozen):
    """What happens after function tools ran: call the model again, or stop."""

    kind: Literal["run_llm_again", "stop_on_first_tool", "stop_at_tools", "function"] = (
        "run_llm_again"
    )
    tool_names: tuple[str, ...] = ()
    ref: Ref | None = None


HostedKind = Literal[
    "web_search", "file_search", "code_interpreter", "image_generation", "mcp", "tool_search"
]


class HostedToolSpec(_Frozen):
    """A tool OpenAI runs on its side (``ss.WebSearchTool`` ...), sent as declared."""

    kind: HostedKind
    name: str
    """``web_search`` ...; a hosted MCP tool's server label."""
    config: dict[str, Any]
    """The Responses API tool parameter, exactly as it is sent."""
    include: str | None = None
    """What the request's ``include`` needs for this tool's results."""
    location: Location


class MCPToolSpec(_Frozen):
    """A tool of an MCP server as its lock records it."""

    name: str
    offered: bool = True
    """The server's ``tool_filter`` lets the model see it (then it is in the agent's tools)."""
    needs_approval: bool = False
    destructive: bool | None = None
    """The ``destructiveHint`` annotation (None: not given; MCP then means True)."""
    read_only: bool | None = None
    """The ``readOnlyHint`` annotation (None: not given; MCP then means False)."""


class MCPServerSpec(_Frozen):
    """An MCP server an agent declares, read from its lock (never started by ``check``)."""

    name: str
    transport: Literal["stdio", "streamable_http", "sse"]
    lock_file: str | None = None
    """The lock holding the server's entry; None: no entry (its tools are unchecked)."""
    stale_transport: Literal["stdio", "streamable_http", "sse"] | None = None
    """The transport the lock's entry under this name was written for, when it is not
    this server's: the entry is another server's, so it is not used (no entry)."""
    tools: tuple[MCPToolSpec, ...] = ()
    filter_names: tuple[str, ...] = ()
    """The tool names ``tool_filter`` names (allowed or blocked)."""
    approval_names: tuple[str, ...] = ()
    """The tool names a ``require_approval`` map names."""
    location: Location


class AgentSpec(_Frozen):
    """One agent: its instructions, tools, edges, output and settings."""

    name: AgentName
    instructions: str | None = None
    instructions_fn: Ref | None = None
    instructions_context_type: Ref | None = None
    tools: tuple[ToolSpec, ...] = ()
    handoffs: tuple[HandoffSpec, ...] = ()
    agent_tools: tuple[AgentToolSpec, ...] = ()
    output_type: OutputTypeSpec | None = None
    model: str | None = None
    model_ref: Ref | None = None
    model_settings: dict[str, Any] = Field(default_factory=dict)
    """The agent's ``ModelSettings``, only the fields it sets."""
    handoff_description: str | None = None
    input_guardrails: tuple[GuardrailSpec, ...] = ()
    output_guardrails: tuple[GuardrailSpec, ...] = ()
    tool_use_behavior: ToolUseBehaviorSpec = ToolUseBehaviorSpec()
    ignore: tuple[str, ...] = ()
    mcp_servers: tuple[MCPServerSpec, ...] = ()
    hosted_tools: tuple[HostedToolSpec, ...] = ()
    """Tools OpenAI runs (web search, file search, code interpreter, image generation,
    hosted MCP, tool search), in declaration order."""
    hooks: Ref | None = None
    """The agent's ``AgentHooks`` object."""
    location: Location


class StepSpec(_Frozen):
    """A ``@step`` function as a flow node: its one input type and its output type."""

    name: str
    ref: Ref
    is_async: bool = False
    takes_context: bool = False
    context_type: Ref | None = None
    input_type: Ref
    output_type: Ref
    location: Location


class FlowCaseSpec(_Frozen):
    """One case of a route: the field's value (as text) and where it leads."""

    value: str
    target: str | None
    """A node's name; None is END."""


class FlowEdgeSpec(_Frozen):
    """One flow edge leaving ``source``. Targets name nodes (agents or steps); None is
    END.

    ``then``: ``target``. ``branch``: ``target`` when ``predicate`` holds, else
    ``otherwise``. ``route``: ``cases`` on the value of ``field``. ``fan_out``: ``each``
    once per element of the list ``field``, then ``target`` gets the list of outputs.
    """

    kind: Literal["then", "branch", "route", "fan_out"]
    source: str
    target: str | None = None
    otherwise: str | None = None
    predicate: Ref | None = None
    field: str | None = None
    cases: tuple[FlowCaseSpec, ...] = ()
    each: str | None = None
    max_items: int | None = None
    concurrency: int | None = None
    max_uses: int | None = None
    """How often a run may take this edge (each case's edge, for a route)."""
    location: Location

    def targets(self) -> tuple[str | None, ...]:
        """Where control can go next (None is END); a fan-out's ``each`` is not one."""
        if self.kind == "route":
            return tuple(c.target for c in self.cases)
        if self.kind == "branch":
            return (self.target, self.otherwise)
        return (self.target,)


PolicyRule = Literal["require_approval", "require_guardrail", "forbid", "max_calls", "only_after"]
"""The rules a policy can state (``ss.require_approval`` ...)."""


class PolicySpec(_Frozen):
    """One of the team's own rules about every run (``ss.require_approval(tool)`` ...),
    as the analyzer reads it (the spec form of a :class:`stepswitch.policies.Policy`).

    ``target`` is the tool (or, for ``forbid``, the tool or agent) the rule is about;
    ``guardrail`` the input guardrail ``require_guardrail`` asks for; ``from_agent``
    where ``forbid`` starts to apply; ``n`` the most calls ``max_calls`` allows;
    ``first`` what ``only_after`` wants run before (a tool, agent or step)."""

    rule: PolicyRule
    target: str
    guardrail: str | None = None
    from_agent: str | None = None
    n: int | None = None
    first: str | None = None
    location: Location

    def describe(self) -> str:
        """The rule as written: ``max_calls('send_email', 1)``."""
        return describe(self)


class NotCarriedSpec(_Frozen):
    """A setting of the app the workflow was read from (an Agents SDK app) that
    stepswitch does not carry out (SW610)."""

    attribute: str
    """The framework's name for it: ``FunctionTool.tool_input_guardrails``."""
    owner: str
    """What it is set on: ``tool 'lookup' of agent 'Clerk'``."""
    detail: str
    path: str
    """Where in the spec: ``agents.Clerk.tools.lookup``."""
    location: Location


class WorkflowSpec(_Frozen):
    """A whole workflow. ``agents`` keeps declaration order; names may repeat (a
    diagnostic, not an exception)."""

    spec_version: int = SPEC_VERSION
    name: str
    entry: AgentName | None
    agents: tuple[AgentSpec, ...]
    max_turns: int | None = 10
    max_depth: int = 8
    max_model_calls: int | None = None
    context_type: Ref | None = None
    ignore: tuple[str, ...] = ()
    steps: tuple[StepSpec, ...] = ()
    """The ``@step`` nodes of the flow, in the order the flow names them."""
    flow: tuple[FlowEdgeSpec, ...] | None = None
    """The flow's edges; None for a workflow without a flow (the entry agent's run)."""
    policies: tuple[PolicySpec, ...] = ()
    max_cost_usd: float | None = None
    """The most one run may cost in the worst case (SW206), in US dollars."""
    max_total_tokens: int | None = None
    """The most tokens (input plus output) one run may use in the worst case (SW206)."""
    """The team's rules (``Workflow(policies=[...])``), proved by the analyzer (SW8xx)."""
    not_carried: tuple[NotCarriedSpec, ...] = ()
    """What the app it was read from sets that stepswitch does not carry out (SW610)."""
    location: Location

    def step(self, name: str) -> StepSpec | None:
        """The first step of that name, or None."""
        for s in self.steps:
            if s.name == name:
                return s
        return None

    def agent(self, name: str) -> AgentSpec | None:
        """The first agent of that name, or None."""
        for agent in self.agents:
            if agent.name == name:
                return agent
        return None


def spec_json_schema() -> dict[str, Any]:
    """The JSON schema of a serialized ``WorkflowSpec`` (published as
    ``docs/spec.schema.json``)."""
    schema = WorkflowSpec.model_json_schema(by_alias=True, mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def spec_to_json(spec: WorkflowSpec, *, indent: int | None = 2) -> str:
    """Deterministic JSON: keys sorted, the same spec gives the same bytes."""
    # a workflow without a flow serializes as it did before flows existed
    exclude = {"steps", "flow"} if spec.flow is None and not spec.steps else set()
    if not spec.policies:  # nor does one without policies change its bytes
        exclude.add("policies")
    if not spec.not_carried:
        exclude.add("not_carried")
    for name in ("max_cost_usd", "max_total_tokens"):
        if getattr(spec, name) is None:
            exclude.add(name)
    data = spec.model_dump(mode="json", by_alias=True, exclude=exclude or None)
    _drop_unset(data)
    return json.dumps(data, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"


_LATER_FIELDS: dict[str, tuple[tuple[str, object], ...]] = {
    "tools": (("is_enabled", True), ("input_guardrails", []), ("output_guardrails", [])),
    "handoffs": (("is_enabled", True),),
    "agent_tools": (("is_enabled", True),),
}
"""Fields added after the spec's JSON was first published, left out at their defaults
so a workflow that does not use them keeps its bytes (its check cache and diffs too)."""


def _drop_unset(data: dict[str, Any]) -> None:
    for agent in data.get("agents", ()):
        if agent.get("hooks", 0) is None:
            del agent["hooks"]
        for part, fields in _LATER_FIELDS.items():
            for entry in agent.get(part, ()):
                for name, default in fields:
                    if name in entry and entry[name] == default:
                        del entry[name]

