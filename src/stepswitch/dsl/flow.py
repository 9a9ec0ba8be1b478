"""Flows: agents chained by typed code steps (DESIGN §7).

A flow's nodes are agents and ``@step`` functions; its edges are ``then``,
``branch``, ``route`` and ``fan_out``, each leaving one node. ``END`` ends the run
with the value that reaches it. These are mutable declarations, like ``Agent``:
they check their own arguments at once (a ``UserError`` naming the file:line) and
``Workflow(flow=[...])`` snapshots them into the spec.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, overload

from stepswitch._hints import resolved_hints
from stepswitch._site import Site, caller_site, function_site
from stepswitch.dsl.agent import Agent
from stepswitch.dsl.tools import context_param_type
from stepswitch.errors import UserError

__all__ = [
    "END",
    "FlowEdge",
    "FlowEdgeKind",
    "FlowNodeRef",
    "FlowTarget",
    "Step",
    "branch",
    "fan_out",
    "node_name",
    "route",
    "step",
    "then",
]

FlowEdgeKind = Literal["then", "branch", "route", "fan_out"]


class _End:
    """The end of a flow: the value that reaches it is the run's final output."""

    _instance: _End | None = None

    def __new__(cls) -> _End:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ss.END"


END = _End()
"""Where a flow ends: ``ss.then(story, ss.END)``."""


class Step:
    """A typed function as a flow node: one input, one output, no model call.

    ``input_type`` and ``output_type`` are the annotations of its one parameter and of
    its return; a leading ``RunContext[T]`` parameter receives the run context.
    Calling the step calls the function.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        is_async: bool,
        takes_context: bool,
        context_type: Any,
        input_type: Any,
        output_type: Any,
        site: Site,
    ) -> None:
        self.fn = fn
        self.name = name
        self.is_async = is_async
        self.takes_context = takes_context
        self.context_type = context_type
        self.input_type = input_type
        self.output_type = output_type
        self.site = site
        self._check: Callable[[Any], None] | None = None
        self.__name__ = getattr(fn, "__name__", name)
        self.__qualname__ = getattr(fn, "__qualname__", name)
        self.__module__ = getattr(fn, "__module__", __name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Step(name={self.name!r})"

    def output_check(self) -> Callable[[Any], None]:
        """A function that raises ``UserError`` for a value the step returned that does
        not fit its return annotation (strictly: no coercion, the value flows on as
        it is). Built once; the runtime fetches it when a machine is made, so the
        validator lives here, with pydantic, not in the runtime."""
        if self._check is None:
            self._check = _output_check(self)
        return self._check


@overload
def step(fn: Callable[..., Any], /) -> Step: ...


@overload
def step(*, name: str | None = None) -> Callable[[Callable[..., Any]], Step]: ...


def step(
    fn: Callable[..., Any] | None = None, /, *, name: str | None = None
) -> Step | Callable[[Callable[..., Any]], Step]:
    """Make a typed function a flow node: ``@step`` or ``@step(name="...")``.

    The function (sync or async) takes exactly one input parameter, optionally after a
    leading ``RunContext[T]``, and both that parameter and the return carry type
    annotations: the analyzer checks every edge with them.
    """

    def wrap(f: Callable[..., Any]) -> Step:
        return _make_step(f, name)

    if fn is not None:
        return wrap(fn)
    return wrap


def _make_step(fn: Any, name: str | None) -> Step:
    if isinstance(fn, Step):
        raise UserError(f"step at {caller_site()}: {fn.name!r} is already a step")
    if not callable(fn) or isinstance(fn, type):
        raise UserError(
            f"step at {caller_site()}: expected a function, got {type(fn).__name__} {fn!r}"
        )
    site = function_site(fn)
    step_name = name if name is not None else getattr(fn, "__name__", None)
    if not isinstance(step_name, str) or not step_name or step_name == "<lambda>":
        raise UserError(
            f"step at {site}: a step needs a name: use a def, or @step(name='...')"
        )
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as exc:
        raise UserError(f"step {step_name!r} at {site}: no signature to read ({exc})") from None
    hints = resolved_hints(fn)
    takes_context = False
    context_type: Any = None
    if params and params[0].name in hints and context_param_type(hints[params[0].name]) is not None:
        takes_context = True
        context_type = context_param_type(hints[params[0].name])
        params = params[1:]
    positional = [
        p for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    required_other = [
        p for p in params
        if p not in positional and p.default is p.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if len(positional) != 1 or required_other:
        shown = ", ".join(p.name for p in params) or "none"
        raise UserError(
            f"step {step_name!r} at {site}: a step takes exactly one input parameter "
            f"(after an optional leading RunContext), got {len(params)} ({shown})"
        )
    param = positional[0]
    if param.name not in hints:
        raise UserError(
            f"step {step_name!r} at {site}: parameter {param.name!r} has no type annotation; "
            "annotate it so the analyzer can check the edges into this step"
        )
    if "return" not in hints:
        raise UserError(
            f"step {step_name!r} at {site}: no return annotation; annotate what the step "
            "returns (e.g. `-> Story`) so the analyzer can check the edges out of it"
        )
    output = hints["return"]
    return Step(
        fn,
        name=step_name,
        is_async=inspect.iscoroutinefunction(fn),
        takes_context=takes_context,
        context_type=context_type,
        input_type=hints[param.name],
        output_type=type(None) if output is None else output,
        site=site,
    )


def _output_check(s: Step) -> Callable[[Any], None]:
    tp = s.output_type
    plain = isinstance(tp, type) and typing.get_origin(tp) is None
    validate: Callable[[Any], Any] | None = None
    if tp is not Any and tp is not object:
        # a type pydantic cannot validate (a Protocol, a callable) is checked by isinstance
        # when it is a class, and not at all otherwise
        with contextlib.suppress(Exception):
            try:
                validate = _strict_validator(tp)  # steps of one type share it
            except TypeError:  # unhashable (Annotated with a list in it): its own
                validate = _strict_validator.__wrapped__(tp)

    def check(value: Any) -> None:
        if plain and isinstance(value, tp):  # the common case, at the cost of a call
            return
        if validate is None:
            if not plain or tp is Any or tp is object:
                return
        else:
            try:
                validate(value)
                return
            except ValueError:
                pass
        raise UserError(
            f"step {s.name!r} at {s.site} returned {_shown(type(value))}, but is annotated "
            f"-> {_shown(tp)}"
        )

    return check


@functools.lru_cache(maxsize=1024)
def _strict_validator(tp: Any) -> Callable[[Any], Any]:
    """``validate_python(value, strict=True)`` of one ``TypeAdapter`` for ``tp``."""
    from pydantic import TypeAdapter

    return functools.partial(TypeAdapter(tp).validate_python, strict=True)


def _shown(tp: Any) -> str:
    if tp is type(None):
        return "None"
    if isinstance(tp, type) and typing.get_origin(tp) is None:
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


FlowNodeRef = Agent | Step | str
"""A node: an agent, a step, or the name of either."""

FlowTarget = Agent | Step | str | _End
"""Where an edge goes: a node, or ``END``."""


class FlowEdge:
    """One edge declaration leaving ``source`` (made by ``then``, ``branch``,
    ``route`` or ``fan_out``)."""

    def __init__(
        self,
        kind: FlowEdgeKind,
        source: FlowNodeRef,
        *,
        site: Site,
        target: FlowTarget | None = None,
        when: Callable[..., Any] | None = None,
        otherwise: FlowTarget | None = None,
        field: str | None = None,
        cases: Mapping[str, FlowTarget] | None = None,
        each: FlowNodeRef | None = None,
        max_items: int | None = None,
        concurrency: int | None = None,
        max_uses: int | None = None,
    ) -> None:
        self.kind: FlowEdgeKind = kind
        self.source = source
        self.target = target
        self.when = when
        self.otherwise = otherwise
        self.field = field
        self.cases: dict[str, FlowTarget] = dict(cases or {})
        self.each = each
        self.max_items = max_items
        self.concurrency = concurrency
        self.max_uses = max_uses
        self.site = site

    def nodes(self) -> list[FlowTarget]:
        """Every node or END this edge names, source first."""
        out: list[FlowTarget] = [self.source]
        for t in (self.target, self.otherwise, self.each):
            if t is not None:
                out.append(t)
        out.extend(self.cases.values())
        return out

    def __repr__(self) -> str:
        return f"FlowEdge({self.kind}, from {node_name(self.source)!r})"


def node_name(node: FlowTarget) -> str | None:
    """The name a node goes by in the spec (None for END)."""
    if isinstance(node, _End):
        return None
    if isinstance(node, Agent | Step):
        return node.name
    return node


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:57] + '...' if len(text) > 60 else text}"


def _node(value: Any, what: str, field: str, site: Site) -> FlowNodeRef:
    if isinstance(value, Agent | Step) or (isinstance(value, str) and value.strip()):
        return value
    raise UserError(
        f"{what} at {site}: {field}: expected an Agent, a @step or a node's name, "
        f"got {_describe(value)}"
    )


def _target(value: Any, what: str, field: str, site: Site) -> FlowTarget:
    if isinstance(value, _End):
        return value
    if isinstance(value, Agent | Step) or (isinstance(value, str) and value.strip()):
        return value
    raise UserError(
        f"{what} at {site}: {field}: expected an Agent, a @step, a node's name or ss.END, "
        f"got {_describe(value)}"
    )


def _count(value: Any, what: str, field: str, site: Site) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(
            f"{what} at {site}: {field}: expected a positive int or None, got {_describe(value)}"
        )
    return value


def _field(value: Any, what: str, name: str, site: Site) -> str:
    if not isinstance(value, str) or not value.isidentifier():
        raise UserError(
            f"{what} at {site}: {name}: expected the name of a field of the source's "
            f"output type, got {_describe(value)}"
        )
    return value


def then(source: FlowNodeRef, target: FlowTarget, *, max_uses: int | None = None) -> FlowEdge:
    """``source``'s output is ``target``'s input (``target`` may be ``END``).

    ``max_uses`` bounds how often a run takes this edge: an edge that closes a loop
    needs one.
    """
    site = caller_site()
    what = "then"
    return FlowEdge(
        "then",
        _node(source, what, "source", site),
        target=_target(target, what, "target", site),
        max_uses=_count(max_uses, what, "max_uses", site),
        site=site,
    )


def branch(
    source: FlowNodeRef,
    *,
    when: Callable[..., Any],
    then: FlowTarget,
    otherwise: FlowTarget,
    max_uses: int | None = None,
) -> FlowEdge:
    """Go to ``then`` when ``when(output)`` is true, else to ``otherwise``.

    ``when`` is a module-level function of ``source``'s output type (generated code
    imports it by name).
    """
    site = caller_site()
    what = "branch"
    if not callable(when) or isinstance(when, type):
        raise UserError(
            f"{what} at {site}: when: expected a function of the source's output, "
            f"got {_describe(when)}"
        )
    return FlowEdge(
        "branch",
        _node(source, what, "source", site),
        when=when,
        target=_target(then, what, "then", site),
        otherwise=_target(otherwise, what, "otherwise", site),
        max_uses=_count(max_uses, what, "max_uses", site),
        site=site,
    )


def route(
    source: FlowNodeRef,
    *,
    on: str,
    cases: Mapping[Any, FlowTarget],
    max_uses: int | None = None,
) -> FlowEdge:
    """Go where ``cases`` maps the value of ``source``'s output field ``on`` (a
    ``Literal`` or ``Enum`` field): one case per value. ``max_uses`` bounds how often a
    run takes each of these edges (a case that loops back needs it)."""
    site = caller_site()
    what = "route"
    if not isinstance(cases, Mapping) or not cases:
        raise UserError(
            f"{what} at {site}: cases: expected a non-empty dict from each value of the "
            f"field to a node or ss.END, got {_describe(cases)}"
        )
    out: dict[str, FlowTarget] = {}
    for key, value in cases.items():
        label = key.value if isinstance(key, enum.Enum) else key
        if not isinstance(label, str | int | bool):
            raise UserError(
                f"{what} at {site}: cases: keys are the field's values (str, int, bool or "
                f"Enum members), got {_describe(key)}"
            )
        out[str(label)] = _target(value, what, f"cases[{key!r}]", site)
    return FlowEdge(
        "route",
        _node(source, what, "source", site),
        field=_field(on, what, "on", site),
        cases=out,
        max_uses=_count(max_uses, what, "max_uses", site),
        site=site,
    )


def fan_out(
    source: FlowNodeRef,
    *,
    over: str,
    each: FlowNodeRef,
    then: FlowTarget,
    max_items: int | None = None,
    concurrency: int | None = None,
) -> FlowEdge:
    """Run ``each`` once per element of ``source``'s list field ``over``, in parallel
    (at most ``concurrency`` at once), then give ``then`` the list of their outputs in
    element order. ``max_items`` bounds the list (the analyzer requires it)."""
    site = caller_site()
    what = "fan_out"
    return FlowEdge(
        "fan_out",
        _node(source, what, "source", site),
        field=_field(over, what, "over", site),
        each=_node(each, what, "each", site),
        target=_target(then, what, "then", site),
        max_items=_count(max_items, what, "max_items", site),
        concurrency=_count(concurrency, what, "concurrency", site),
        site=site,
    )
