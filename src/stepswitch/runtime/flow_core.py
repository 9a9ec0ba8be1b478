"""The flow IR made ready to run: live objects resolved, exit tables indexed, and the
flow's step switch (:func:`next_node`: where a node's output goes).

The interpreter (:mod:`.flow`) and generated runners both read it: a generated
runner's exit functions use :func:`route_key`, :func:`no_route` and
:func:`predicate_of` so a route fails with the same words either way.
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, assert_never

from stepswitch.errors import UserError
from stepswitch.flow_ir import FlowIR, FlowNode, edge_key
from stepswitch.runtime.core import MachineCore

if TYPE_CHECKING:  # pydantic loads with the first flow that needs it, not the runtime
    from pydantic import TypeAdapter

__all__ = [
    "FlowCore",
    "FlowStep",
    "misfit",
    "next_node",
    "no_route",
    "predicate_of",
    "route_key",
    "to_text",
    "type_name",
]

FlowStep = Callable[[FlowNode, Any], "str | None"]
"""A node's exit as a function: the next node's name for an output, None for END
(fan-outs are the loop's own business)."""


class _NoOutput:
    """No value is an instance: a step whose outputs all go through its check."""


def _no_check(value: Any) -> None:
    """A step with no output check (never called: every value is an ``object``)."""


Callee = tuple[Callable[..., Any], bool, type, Callable[[Any], None]]
"""A step as the flow loop calls it: ``(fn, takes_context, accepts, check)``
(:attr:`FlowCore.callees`)."""


def to_text(value: Any) -> str:
    """What an agent node receives: text as is, anything else as compact JSON."""
    if type(value) is str:
        return value
    from pydantic_core import to_jsonable_python

    return json.dumps(to_jsonable_python(value), separators=(",", ":"), ensure_ascii=False)


class FlowCore:
    """The flow IR with its live objects resolved and its tables indexed, once."""

    def __init__(self, core: MachineCore, steps: Mapping[str, FlowStep] | None = None) -> None:
        flow = core.ir.flow
        assert flow is not None
        self.core = core
        self.flow: FlowIR = flow
        self.nodes: dict[str, FlowNode] = {n.name: n for n in flow.nodes}
        if flow.entry not in self.nodes:
            raise UserError(f"machine {core.ir.name!r}: flow entry {flow.entry!r} is no node")
        self.fns: dict[str, Callable[..., Any]] = {}
        self.callees: dict[str, Callee] = {}
        """Per step node, how the flow loop calls it: its function, whether it takes the
        run context first, and its output check with the class whose instances pass it
        (an output of that class is checked by ``isinstance`` alone)."""
        self.cases: dict[str, dict[str, str | None]] = {}
        self.preds: dict[str, Callable[[Any], Any]] = {}
        self.awaits: set[str] = set()
        """Steps whose call returns an awaitable: async ones, and those a driver performs
        itself (a resolver entry with ``performed_by_driver``, as on Temporal, where a
        step is an activity)."""
        for n in flow.nodes:
            if n.kind == "step":
                obj = core.obj(n.ref or "")
                self.fns[n.name] = getattr(obj, "fn", obj)
                if n.is_async or getattr(obj, "performed_by_driver", False):
                    self.awaits.add(n.name)
                output_check = getattr(obj, "output_check", None)
                accepts: type = object  # every output passes: no check to call
                check: Callable[[Any], None] = _no_check
                if callable(output_check):
                    # the step's own check of its return annotation, built by the DSL
                    check = output_check()
                    # the class whose outputs pass the check without calling it
                    found = getattr(obj, "output_class", None)
                    accepts = found if isinstance(found, type) else _NoOutput
                self.callees[n.name] = (self.fns[n.name], n.takes_context, accepts, check)
            elif n.name not in core.states:
                raise UserError(
                    f"machine {core.ir.name!r}: flow node {n.name!r} is no agent state"
                )
            ex = n.exit
            if ex is None:
                continue
            for target in (ex.target, ex.otherwise, ex.each, *(t for _, t in ex.cases)):
                if target is not None and target not in self.nodes:
                    raise UserError(
                        f"machine {core.ir.name!r}: flow node {n.name!r} leads to "
                        f"{target!r}, which is no node"
                    )
            if ex.kind == "route":
                self.cases[n.name] = dict(ex.cases)
            elif ex.kind == "branch":
                self.preds[n.name] = core.obj(ex.predicate or "")
        self.steps: dict[str, FlowStep] = dict(steps or {})
        unknown = set(self.steps) - set(self.nodes)
        if unknown:
            raise UserError(f"flow step functions for unknown nodes: {sorted(unknown)}")
        self.exits: dict[str, FlowStep] = {}
        """Per node (not a fan-out), its exit as a function: the one given in ``steps``,
        else the exit read once into a closure (what :func:`next_node` works out per call)."""
        self.edge_keys: dict[str, dict[str | None, str]] = {}
        """Per node whose exit has ``max_uses``, the :func:`~stepswitch.flow_ir.edge_key`
        of each edge it has, made once rather than per use."""
        self.sync_fans: dict[str, Callee] = {}
        """Per fan-out whose ``each`` is a sync step, that step's row of :attr:`callees`:
        the loop calls its branches in place (no job, no task each)."""
        for n in flow.nodes:
            ex = n.exit
            if ex is None:
                continue
            if ex.max_uses is not None:
                self.edge_keys[n.name] = {t: edge_key(n.name, t) for t in (
                    ex.target, ex.otherwise, *(t for _, t in ex.cases))}
            if ex.kind == "fan_out":
                each = ex.each or ""
                if self.nodes[each].kind == "step" and each not in self.awaits:
                    self.sync_fans[n.name] = self.callees[each]
            else:
                self.exits[n.name] = self.steps.get(n.name) or _exit_of(self, n)
        self._adapters: dict[str, TypeAdapter[Any]] = {}

    def adapter(self, ref: str | None, *, text: bool = False) -> TypeAdapter[Any]:
        """Validates a saved value as the type at ``ref``: ``str`` with ``text``, any
        JSON value when the type has no path (a generic alias such as ``list[int]``)."""
        key = ref or ("<text>" if text else "")
        adapter = self._adapters.get(key)
        if adapter is None:
            from pydantic import TypeAdapter

            tp: Any = self.core.obj(ref) if ref else str if text else Any
            adapter = TypeAdapter(tp)
            self._adapters[key] = adapter
        return adapter

    def input_adapter(self, node: FlowNode) -> TypeAdapter[Any]:
        return self.adapter(node.input_type) if node.kind == "step" else self.adapter(
            None, text=True)

    def output_adapter(self, node: FlowNode) -> TypeAdapter[Any]:
        if node.kind == "agent" and node.output_type is None:
            return self.adapter(None, text=True)
        return self.adapter(node.output_type)


def misfit(exc: ValueError) -> str:
    """A value's validation error on one line: where and what, for each error
    (pydantic's own message takes several lines and ends in a link)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return " ".join(str(exc).split())
    parts: list[str] = []
    for e in errors():
        where = ".".join(str(p) for p in e.get("loc", ()))
        shown = repr(e.get("input"))
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        parts.append(f"{where + ': ' if where else ''}{e.get('msg', '?')} (got {shown})")
    return "; ".join(parts)


def route_key(out: Any, field_name: str) -> str:
    """The case a route takes: ``str`` of the output's field (an Enum's value)."""
    value = out.get(field_name) if isinstance(out, dict) else getattr(out, field_name)
    if isinstance(value, enum.Enum):
        value = value.value
    return str(value)


def no_route(node: FlowNode, field_name: str, key: str) -> UserError:
    """The error of a route whose field holds a value no case names."""
    cases = [c for c, _ in node.exit.cases] if node.exit is not None else []
    return UserError(
        f"flow node {node.name!r}: route on {field_name!r} has no case for {key!r} "
        f"(cases: {', '.join(map(repr, cases))})"
    )


def predicate_of(objects: Mapping[str, object], path: str) -> Callable[[Any], object]:
    """The branch predicate bound at ``path`` (for generated exit functions)."""
    fn = objects[path]
    if not callable(fn):
        raise UserError(f"branch predicate {path!r} is not callable")
    return fn


def next_node(fc: FlowCore, node: FlowNode, out: Any) -> str | None:
    """The interpreter of a node's exit (not a fan-out): where ``out`` goes."""
    ex = node.exit
    assert ex is not None
    kind = ex.kind
    match kind:
        case "then":
            return ex.target
        case "branch":
            return ex.target if fc.preds[node.name](out) else ex.otherwise
        case "route":
            field_name = ex.field or ""
            key = route_key(out, field_name)
            cases = fc.cases[node.name]
            if key not in cases:
                raise no_route(node, field_name, key)
            return cases[key]
        case "fan_out":
            raise AssertionError(f"flow node {node.name!r}: a fan-out's join is the loop's")
        case _:
            assert_never(kind)


def _exit_of(fc: FlowCore, node: FlowNode) -> FlowStep:
    """``node``'s exit as a closure over what it reads: :func:`next_node` made once."""
    ex = node.exit
    assert ex is not None
    target = ex.target
    if ex.kind == "then":
        return lambda _node, _out: target
    if ex.kind == "branch":
        pred, otherwise = fc.preds[node.name], ex.otherwise
        return lambda _node, out: target if pred(out) else otherwise
    return functools.partial(next_node, fc)


def type_name(tp: Any) -> str:
    """How a message shows a type: ``Order``, ``int``, ``list[str]``."""
    if isinstance(tp, type) and not getattr(tp, "__args__", None):
        return tp.__name__
    return repr(tp).replace("typing.", "")
