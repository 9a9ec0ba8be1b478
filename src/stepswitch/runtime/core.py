"""The IR with its lookups prepared once: what the loop consults every turn.

Tables are indexed by name when the machine is made, tool definitions and output
schemas are built once per state, so a turn does constant work however many
agents, tools or items there are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from stepswitch.errors import UserError
from stepswitch.ir import HandoffTo, MachineIR, RunAgent, StateIR, ToolEntry
from stepswitch.runtime.model import OutputSchema, ToolDefinition
from stepswitch.runtime.steps import StepFunction, interpret_step

__all__ = ["BoundFunction", "MachineCore"]


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
        unknown_steps = set(steps or {}) - set(self.states)
        if unknown_steps:
            raise UserError(f"step functions for unknown agents: {sorted(unknown_steps)}")
        # ModelSettings is the DSL's pydantic model: loaded with the first machine, not
        # with the runtime (a runner's user module has loaded pydantic by then anyway)
        from stepswitch.settings import ModelSettings

        self.settings: dict[str, ModelSettings] = {
            s.agent: ModelSettings(**s.settings) for s in ir.states
        }
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

    def function(self, ref: str) -> BoundFunction:
        """The function tool bound at ``ref``, prepared for calls (cached)."""
        bound = self._functions.get(ref)
        if bound is None:
            tool: Any = self.resolver[ref]
            model = tool.params_model
            bound = BoundFunction(tool, tool.fn, model.__pydantic_validator__)
            self._functions[ref] = bound
        return bound

    def obj(self, path: str) -> Any:
        """The live object bound at ``path``."""
        return self.resolver[path]

    def state(self, agent: str) -> StateIR:
        return self.states[agent]

    def tool_definitions(self, agent: str, hidden: frozenset[str]) -> tuple[ToolDefinition, ...]:
        """What ``agent`` offers the model, without the ``hidden`` (spent) handoffs."""
        key = (agent, hidden)
        defs = self._defs.get(key)
        if defs is None:
            defs = tuple(
                ToolDefinition(
                    name=t.name,
                    description=t.description,
                    parameters=t.parameters,
                    strict=t.strict,
                    kind=t.action.kind,
                )
                for t in self.states[agent].tools
                if t.name not in hidden
            )
            self._defs[key] = defs
        return defs
