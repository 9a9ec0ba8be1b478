"""A policy as written, ``max_calls('send_email', 1)``: the one text a
:class:`stepswitch.policies.Policy` and its spec (``graph.spec.PolicySpec``) both print.
A leaf, so the policies room and the graph room read it without reading each other."""

from __future__ import annotations

from typing import Protocol

__all__ = ["describe"]


class _Written(Protocol):
    @property
    def rule(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def guardrail(self) -> str | None: ...
    @property
    def from_agent(self) -> str | None: ...
    @property
    def n(self) -> int | None: ...
    @property
    def first(self) -> str | None: ...


def describe(policy: _Written) -> str:
    """A policy as written, ``max_calls('send_email', 1)`` (a :class:`Policy` and its
    spec read the same)."""
    args = [repr(policy.target)]
    if policy.guardrail is not None:
        args.append(repr(policy.guardrail))
    if policy.n is not None:
        args.append(str(policy.n))
    if policy.first is not None:
        args.append(repr(policy.first))
    if policy.from_agent is not None:
        args.append(f"from_agent={policy.from_agent!r}")
    return f"{policy.rule}({', '.join(args)})"
