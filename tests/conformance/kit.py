"""Small workflows for the conformance tests: tools that record what ran."""

from __future__ import annotations

from typing import Any

import stepswitch as ss


def compile_agents(*agents: ss.Agent, **workflow: Any) -> ss.StateMachine:
    """A machine whose entry is the first agent."""
    wf = ss.Workflow("w", entry=agents[0], agents=list(agents), **workflow)
    return wf.compile()


class Ledger:
    """Records every tool execution, so a test can assert what ran and how often."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.ran if n == name)


def lookup_tool(ledger: Ledger, **options: Any) -> ss.FunctionTool:
    def lookup_order(order_id: int) -> str:
        """Look up an order."""
        ledger.ran.append(("lookup_order", order_id))
        return f"order {order_id} ok"

    return ss.function_tool(**options)(lookup_order) if options else ss.function_tool(lookup_order)


def refund_tool(ledger: Ledger, **options: Any) -> ss.FunctionTool:
    def process_refund(order_id: int) -> str:
        """Refund an order."""
        ledger.ran.append(("process_refund", order_id))
        return f"refunded {order_id}"

    return ss.function_tool(**options)(process_refund) if options else ss.function_tool(
        process_refund
    )
