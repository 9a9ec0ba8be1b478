"""Lowering a flow: the spec's steps and edges → :class:`~.flow_ir.FlowIR`.

A pure pass like :func:`~.lower.lower`. It refuses what it cannot lower (an edge
naming no node, a node with two exits) with a ``UserError`` naming the place; the
analyzer reports these first, with codes, so ``compile()`` never gets here with them.
"""

from __future__ import annotations

from collections.abc import Mapping

from stepswitch.errors import UserError
from stepswitch.flow_ir import FlowExit, FlowFacts, FlowIR, FlowNode
from stepswitch.graph.spec import FlowEdgeSpec, Ref, WorkflowSpec

__all__ = ["lower_flow"]


def lower_flow(spec: WorkflowSpec, agents: set[str], facts: Mapping[str, FlowFacts]) -> FlowIR:
    """The flow IR of ``spec`` (which has a flow); ``agents`` are the agents' names,
    ``facts`` each node's facts (:func:`~stepswitch.graph.facts.flow_facts`), stored on
    its node."""
    assert spec.flow is not None
    steps = {s.name: s for s in reversed(spec.steps)}  # the first of a name wins
    entry = spec.entry
    if entry is None:
        raise UserError(f"workflow {spec.name!r} at {spec.location}: the flow has no entry")

    def known(name: str | None, edge: FlowEdgeSpec) -> None:
        if name is not None and name not in agents and name not in steps:
            raise UserError(
                f"flow edge at {edge.location}: {name!r} names no agent or step of the "
                "workflow"
            )

    if entry not in agents and entry not in steps:
        raise UserError(
            f"workflow {spec.name!r} at {spec.location}: entry {entry!r} names no agent or "
            "step"
        )
    exits: dict[str, FlowExit] = {}
    order: list[str] = [entry]
    for edge in spec.flow:
        for name in (edge.source, *edge.targets(), edge.each):
            known(name, edge)
            if name is not None:
                order.append(name)
        if edge.source in exits:
            raise UserError(
                f"flow edge at {edge.location}: node {edge.source!r} already has an exit"
            )
        exits[edge.source] = FlowExit(
            kind=edge.kind,
            target=edge.target,
            otherwise=edge.otherwise,
            predicate=edge.predicate.path if edge.predicate is not None else None,
            field=edge.field,
            cases=tuple((c.value, c.target) for c in edge.cases),
            each=edge.each,
            max_items=edge.max_items,
            concurrency=edge.concurrency,
            max_uses=edge.max_uses,
        )
    nodes: list[FlowNode] = []
    seen: set[str] = set()
    for name in order:
        if name in seen:
            continue
        seen.add(name)
        if name in steps:
            s = steps[name]
            nodes.append(FlowNode(
                name=name,
                kind="step",
                ref=s.ref.path,
                is_async=s.is_async,
                takes_context=s.takes_context,
                input_type=_type_path(s.input_type),
                output_type=_type_path(s.output_type),
                exit=exits.get(name),
                facts=facts[name],
            ))
        else:
            agent = spec.agent(name)
            assert agent is not None
            out = agent.output_type
            nodes.append(FlowNode(
                name=name,
                kind="agent",
                output_type=_type_path(out.ref) if out is not None else None,
                exit=exits.get(name),
                facts=facts[name],
            ))
    return FlowIR(entry=entry, nodes=tuple(nodes))


def _type_path(ref: Ref) -> str | None:
    """A type's import path; None for one that has none (``list[Outline]``): a value
    saved in a paused flow's state is then handed back as its JSON."""
    return None if ref.path.startswith("<object>") else ref.path
