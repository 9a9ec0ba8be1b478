"""The customer-support workflow: triage looks orders up, researches with a helper
agent, and hands refunds to a specialist whose refund tool needs a human's approval."""

from __future__ import annotations

from pydantic import BaseModel

import stepswitch as ss


@ss.function_tool
def lookup_order(order_id: int) -> str:
    """Look up an order by id.

    Args:
        order_id: The order's number, as printed on the receipt.
    """
    return f"order {order_id}: shipped, 1 item, paid 30.00"


@ss.function_tool(needs_approval=True, max_uses=1)
def process_refund(order_id: int, reason: str = "customer request") -> str:
    """Refund an order in full.

    Args:
        order_id: The order to refund.
        reason: Why the refund is given, for the ledger.
    """
    return f"refunded order {order_id} ({reason})"


class Findings(BaseModel):
    """What the researcher reports back."""

    summary: str


researcher = ss.Agent(
    name="researcher",
    instructions="Research the customer's question and summarise what you find.",
    output_type=Findings,
)

refund = ss.Agent(
    name="refund",
    instructions="You handle refunds. Confirm the order, then process the refund.",
    tools=[process_refund],
    handoffs=[ss.handoff("triage", max_uses=2)],
    handoff_description="Handles refund requests for existing orders.",
)

triage = ss.Agent(
    name="triage",
    instructions="You triage customer requests: look orders up, research questions, "
    "and hand refunds to the refund specialist.",
    tools=[lookup_order, researcher.as_tool("research", "Research a question")],
    handoffs=[refund],
)

support = ss.Workflow(
    name="support",
    entry=triage,
    agents=[triage, refund, researcher],
    max_turns=10,
    # the rules it lives by, proved by `stepswitch check`: every refund waits for a human's
    # yes, and a run refunds at most once (process_refund's own run budget, max_uses=1)
    policies=[ss.require_approval(process_refund), ss.max_calls(process_refund, 1)],
)
