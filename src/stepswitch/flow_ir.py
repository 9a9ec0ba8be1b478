"""The flow part of the machine IR: nodes and their exits, plain data.

A flow node is an agent (its state in ``MachineIR.states`` runs the agent loop) or a
step (a function bound at ``ref``). Every node but a fan-out's ``each`` has exactly
one :class:`FlowExit`: the rule that maps the node's output to the next node, the
flow's version of the step switch (a move to the next node is a Handoff, ``END`` is
Final). Like :mod:`stepswitch.ir`, this leaf module imports nothing from stepswitch, and ``repr``
of every value is a Python literal that rebuilds it.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

from stepswitch._dataclass import dataclass

__all__ = ["EXIT_KINDS", "ExitKind", "FlowExit", "FlowFacts", "FlowIR", "FlowNode", "edge_key"]

ExitKind: TypeAlias = Literal["then", "branch", "route", "fan_out"]
"""What a node's exit does with its output (see :class:`FlowExit`)."""
EXIT_KINDS: tuple[ExitKind, ...] = get_args(ExitKind)
"""Every word of :data:`ExitKind`, in order (:mod:`stepswitch.vocabulary` reads them)."""


def edge_key(source: str, target: str | None) -> str:
    """How a run counts the uses of an edge (``max_uses``): ``source->target``."""
    return f"{source}->{target if target is not None else '<END>'}"


@dataclass(frozen=True, slots=True)
class FlowExit:
    """Where a node's output goes. Targets are node names; None is END.

    ``then``: ``target``. ``branch``: ``target`` when ``predicate(output)`` is true,
    else ``otherwise``. ``route``: the case whose value is ``str(output.<field>)``
    (an Enum's ``.value``). ``fan_out``: ``each`` on every element of
    ``output.<field>`` (at most ``max_items``, ``concurrency`` at once), then
    ``target`` gets the list of results in element order.
    """

    kind: ExitKind
    target: str | None = None
    otherwise: str | None = None
    predicate: str | None = None
    field: str | None = None
    cases: tuple[tuple[str, str | None], ...] = ()
    each: str | None = None
    max_items: int | None = None
    concurrency: int | None = None
    max_uses: int | None = None
    """How often a run may take each edge of this exit."""


@dataclass(frozen=True, slots=True)
class FlowFacts:
    """What ``lower()`` worked out about one flow node, once
    (:func:`stepswitch.graph.facts.flow_facts`). The analyzer's SW707/SW708 and the flow
    diagrams read these instead of searching the flow again."""

    reachable: bool = True
    """The entry leads to it by flow edges (a fan-out's ``each`` included)."""
    can_end: bool = True
    """Some path from it reaches END (from a fan-out's ``each``: through its join)."""
    can_pause: bool = False
    """The node's run can pause for a human's approval: its agent, or an agent its
    handoffs reach, can pause (each by its own facts, nested runs included). A step
    never pauses."""


@dataclass(frozen=True, slots=True)
class FlowNode:
    """One node: an agent (by state name) or a step (the function at ``ref``)."""

    name: str
    kind: Literal["agent", "step"]
    ref: str | None = None
    is_async: bool = False
    takes_context: bool = False
    input_type: str | None = None
    """The step's input type (import path); None: text (agents take text)."""
    output_type: str | None = None
    """The node's output type (import path); None: text."""
    exit: FlowExit | None = None
    """None only for a fan-out's ``each`` node: its outputs go to the join."""
    facts: FlowFacts = FlowFacts()


@dataclass(frozen=True, slots=True)
class FlowIR:
    """A whole flow: its entry node and every node in order."""

    entry: str
    nodes: tuple[FlowNode, ...]

    def node(self, name: str) -> FlowNode | None:
        """The node of that name, or None."""
        for node in self.nodes:
            if node.name == name:
                return node
        return None

    def refs(self) -> tuple[str, ...]:
        """Every import path the flow needs bound."""
        paths: set[str] = set()
        for n in self.nodes:
            paths.update(p for p in (n.ref, n.input_type, n.output_type) if p)
            if n.exit is not None and n.exit.predicate is not None:
                paths.add(n.exit.predicate)
        return tuple(sorted(paths))
