"""Tool search: a CRM namespace and a deferred report tool, loaded only when the model
searches for them (the SDK's tool_namespace, defer_loading and ToolSearchTool)."""

from __future__ import annotations

import asyncio

from agents import Agent, Runner, ToolSearchTool, function_tool, tool_namespace


@function_tool
def get_customer(customer_id: int) -> str:
    """Look a customer up by id."""
    return f"customer {customer_id}: Ada, gold tier"


@function_tool
def list_orders(customer_id: int) -> str:
    """List a customer's orders."""
    return f"orders of {customer_id}: 2"


@function_tool(defer_loading=True)
def export_report(month: str) -> str:
    """Export the monthly sales report."""
    return f"report for {month}: 40 sales"


async def main() -> object:
    crm = tool_namespace(name="crm", description="Customer records and their orders.",
                         tools=[get_customer, list_orders])
    analyst = Agent(
        name="Analyst",
        instructions="Find the tools you need with tool search.",
        tools=[*crm, export_report, ToolSearchTool()],
    )
    result = await Runner.run(analyst, "Export May's report and look up customer 7.")
    print(result.final_output)
    return result


if __name__ == "__main__":
    asyncio.run(main())
