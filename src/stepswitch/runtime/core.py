"""The IR with its lookups prepared once: what the loop consults every turn.

Tables are indexed by name when the machine is made, tool definitions and output
schemas are built once per state, so a turn does constant work however many
agents, tools or items there are. Per state, a :class:`StateTable` holds what a turn
reads (its tool rows, the parts of its model requests, its own model), each fact
read out of the IR once, so a turn indexes tables instead of re-deriving them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from stepswitch.errors import UserError
from stepswitch.ir import Action, HandoffTo, MachineIR, RunAgent, RunFunction, StateIR, ToolEntry
from stepswitch.runtime.model import OutputSchema, ToolDefinition
from stepswitch.runtime.steps import StepFunction, interpret_step
from stepswitch.vocabulary import check_words

__all__ = ["BoundFunction", "MachineCore", "StateTable", "ToolRow"]


class BoundFunction(NamedTuple):
    """A function tool ready to call: the tool object, its function and the validator
    of its parameters model."""

    tool: Any
    fn: Any
    validator: Any

    @staticmethod
    def keywords(params: Any) -> dict[str, Any]:
        """The keyword arguments of a call from its validated parameters model: the
        model's fields by name (the model ignores extra keys, so it holds nothing else).
        The model's own dict: a call spreads it into new keywords, never changes it."""
        fields: dict[str, Any] = params.__dict__
        return fields


class ToolRow:
    """One row of a state's tool table, with the facts a call of it needs read out once.

    ``fn`` and ``validator`` are the bound function tool's, filled on its first call
    (:meth:`MachineCore.bind`); None until then, and for agent tools and handoffs."""

    __slots__ = (
        "action", "approval", "failure", "fn", "function", "handoff", "in_guards", "is_async",
        "max_uses", "name", "out_guards", "takes_context", "timeout", "validator",
    )

    def __init__(self, entry: ToolEntry) -> None:
        action = entry.action
        self.name = entry.name
        self.action: Action = action
        self.handoff = type(action) is HandoffTo
        """A handoff: it takes effect after the turn's tools (``take_handoffs``)."""
        self.function = type(action) is RunFunction
        """A function tool (otherwise, when not a handoff, an agent tool)."""
        self.approval = "never" if isinstance(action, HandoffTo) else action.approval
        fn = action if type(action) is RunFunction else None
        self.is_async = fn is not None and fn.is_async
        self.takes_context = fn is not None and fn.takes_context
        self.timeout = None if fn is None else fn.timeout
        self.failure = "default" if fn is None else fn.failure
        self.max_uses = None if fn is None else fn.max_uses
        """A function tool's run budget (:mod:`.budgets`); None: none."""
        self.fn: Any = None
        self.validator: Any = None
        self.in_guards: tuple[Any, ...] = () if fn is None else fn.input_guardrails
        """The tool's input guardrails (IR rows; their objects are bound by ``ref``)."""
        self.out_guards: tuple[Any, ...] = () if fn is None else fn.output_guardrails


class StateTable:
    """What a turn of one state reads: its tool rows by name, the parts of its model
    requests that hold until a run changes them, and its own model."""

    __slots__ = ("budgeted", "gated", "gates", "hooks", "model", "off", "rows", "schema",
                 "settings", "settings_vary", "state", "tools")

    def __init__(self, core: MachineCore, state: StateIR) -> None:
        self.state = state
        self.rows = {t.name: ToolRow(t) for t in state.tools}
        self.off = frozenset(t.name for t in state.tools if t.enabled is False)
        """The tools, agent tools and handoffs declared ``is_enabled=False``."""
        self.gates: tuple[tuple[str, Any], ...] = tuple(
            (t.name, core.obj(t.enabled)) for t in state.tools if type(t.enabled) is str
        )
        """``(name, is_enabled function)`` for the parts enabled turn by turn."""
        self.gated = bool(self.gates)
        self.tools = core.tool_definitions(state.agent, self.off)
        """Every tool, as offered while no handoff of the state is spent and every gate
        is open."""
        self.hooks: Any = None
        """The agent's hooks (a ``HookSet``); None: it has none."""
        if state.hooks is not None:
            from stepswitch.runtime.hooks import hook_set

            self.hooks = hook_set(core.obj(state.hooks), "agent")
        self.budgeted = any(
            not isinstance(t.action, RunAgent) and t.action.max_uses is not None
            for t in state.tools
        )
        """Some handoff or function tool has ``max_uses``: a run may have spent it (then
        it is hidden)."""
        self.schema = core.schemas[state.agent]
        self.settings = core.settings[state.agent]
        self.settings_vary = self.settings.tool_choice is not None
        """The settings may change within a run (``reset_tool_choice``)."""
        self.model: Any = None if state.model_ref is None else core.obj(state.model_ref)
        """The agent's own model; None: the run's."""


class MachineCore:
    """The IR, its resolver and the per-agent step functions, indexed for the loop."""

    def __init__(
        self,
        ir: MachineIR,
        resolver: Mapping[str, object],
        steps: Mapping[str, StepFunction] | None = None,
    ) -> None:
        self.ir = ir
        self.resolver = resolver
        self.states: dict[str, StateIR] = {s.agent: s for s in ir.states}
        if ir.flow is None and ir.entry not in self.states:
            raise UserError(f"machine {ir.name!r}: entry {ir.entry!r} has no state")
        self.tables: dict[str, dict[str, ToolEntry]] = {
            s.agent: {t.name: t for t in s.tools} for s in ir.states
        }
        self.steps: dict[str, StepFunction] = {
            s.agent: (steps or {}).get(s.agent, interpret_step) for s in ir.states
        }
        unswitched = [s.agent for s in ir.states if not s.switch]
        if unswitched:
            raise UserError(
                f"machine {ir.name!r}: state(s) {', '.join(map(repr, unswitched))} have no "
                "step switch; build machine IR with stepswitch.compiler.lower()"
            )
        check_words(ir)  # a word no reader knows fails here, as it does in codegen
        unknown_steps = set(steps or {}) - set(self.states)
        if unknown_steps:
            raise UserError(f"step functions for unknown agents: {sorted(unknown_steps)}")
        self.schemas: dict[str, OutputSchema | None] = {
            s.agent: (
                OutputSchema(s.output.name or "final_output", dict(s.output.schema or {}))
                if s.output.kind == "typed"
                else None
            )
            for s in ir.states
        }
        self._defs: dict[tuple[str, frozenset[str]], tuple[ToolDefinition, ...]] = {}
        self._functions: dict[str, BoundFunction] = {}
        missing = [p for p in ir.refs() if p not in resolver]
        if missing:
            raise UserError(
                f"machine {ir.name!r}: no object bound for {', '.join(repr(p) for p in missing)}"
            )
        for s in ir.states:
            for t in s.tools:
                a = t.action
                target = a.target if isinstance(a, HandoffTo | RunAgent) else None
                if target is not None and target not in self.states:
                    raise UserError(
                        f"agent {s.agent!r}: tool {t.name!r} targets {target!r}, which has no "
                        "state in the machine"
                    )
        self._turns: dict[str, StateTable] | None = None

    @property
    def turns(self) -> dict[str, StateTable]:
        """Per agent, what its turns read (the loop's one lookup per turn; the loop reads
        this dict once per run). Made on the first run, with each state's settings: a
        ``ModelSettings`` is a pydantic model class, which a runner's import does not load
        (tests/test_layering.py; bench/README.md)."""
        turns = self._turns
        if turns is None:
            from stepswitch.settings import ModelSettings

            self.settings: dict[str, ModelSettings] = {
                s.agent: ModelSettings(**s.settings) for s in self.ir.states
            }
            turns = self._turns = {s.agent: StateTable(self, s) for s in self.ir.states}
        return turns

    def function(self, ref: str) -> BoundFunction:
        """The function tool bound at ``ref``, prepared for calls (cached)."""
        bound = self._functions.get(ref)
        if bound is None:
            tool: Any = self.resolver[ref]
            model = tool.params_model
            bound = BoundFunction(tool, tool.fn, model.__pydantic_validator__)
            self._functions[ref] = bound
        return bound

    def bind(self, row: ToolRow) -> ToolRow:
        """``row`` with its function tool's ``fn`` and ``validator`` filled in."""
        action = row.action
        assert type(action) is RunFunction
        bound = self.function(action.ref)
        row.fn, row.validator = bound.fn, bound.validator
        return row

    def obj(self, path: str) -> Any:
        """The live object bound at ``path``."""
        return self.resolver[path]

    def state(self, agent: str) -> StateIR:
        return self.states[agent]

    def tool_definitions(self, agent: str, hidden: frozenset[str]) -> tuple[ToolDefinition, ...]:
        """What ``agent`` offers the model, without the ``hidden`` (spent) handoffs and
        function tools."""
        key = (agent, hidden)
        defs = self._defs.get(key)
        if defs is None:
            state = self.states[agent]
            defs = tuple(
                ToolDefinition(
                    name=t.name,
                    description=t.description,
                    parameters=t.parameters,
                    strict=t.strict,
                    kind=t.action.kind,
                    namespace=t.namespace,
                    namespace_description=t.namespace_description,
                    defer_loading=t.defer_loading,
                )
                for t in state.tools
                if t.name not in hidden
            )
            if state.hosted:  # after the agent's own tools, before its handoffs (as the SDK)
                at = next((i for i, d in enumerate(defs) if d.kind == "handoff"), len(defs))
                hosted = tuple(
                    ToolDefinition(name=h.name, description="", parameters={}, kind="hosted",
                                   config=h.config, include=h.include)
                    for h in state.hosted
                )
                defs = defs[:at] + hosted + defs[at:]
            self._defs[key] = defs
        return defs
