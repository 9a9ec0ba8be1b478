"""Quickstart: declare a small workflow and look at its graph.

Run: .venv/bin/python examples/quickstart.py
"""

from __future__ import annotations

import stepswitch as ss


@ss.function_tool
def lookup_order(order_id: int) -> str:
    """Look up an order by id.

    Args:
        order_id: The order's number.
    """
    return f"order {order_id}: shipped"


refund = ss.Agent(
    name="refund",
    instructions="Handle refunds.",
    handoffs=[ss.handoff("triage", max_uses=1)],  # by name: the cycle is easy to write
)
triage = ss.Agent(name="triage", instructions="Triage.", tools=[lookup_order], handoffs=[refund])
workflow = ss.Workflow(name="quickstart", entry=triage)

if __name__ == "__main__":
    graph = workflow.graph()
    print(graph.summary())
    for edge in graph.edges():
        print(f"{edge.source} -> {edge.target} via {edge.tool_name} (max_uses={edge.max_uses})")
