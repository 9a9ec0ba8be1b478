"""Agent hooks: a support desk whose agents log when they start, call tools, hand off
and end. The log is the app's own record of the run."""

from __future__ import annotations

from typing import Any

from agents import Agent, AgentHooks, Runner, function_tool

LOG: list[str] = []


class Audit(AgentHooks[Any]):
    async def on_start(self, context: Any, agent: Any) -> None:
        LOG.append(f"start {agent.name}")

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        LOG.append(f"tool {agent.name} {tool.name}")

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        LOG.append(f"tool done {agent.name} {tool.name}: {result}")

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        LOG.append(f"handoff {source.name} -> {agent.name}")

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        LOG.append(f"end {agent.name}: {output}")


@function_tool
def open_ticket(topic: str) -> str:
    """Open a support ticket."""
    return f"ticket 17 about {topic}"


def main() -> object:
    audit = Audit()
    billing = Agent(name="billing", instructions="Settle billing questions.",
                    tools=[open_ticket], hooks=audit)
    desk = Agent(name="desk", instructions="Route the user.", handoffs=[billing],
                 hooks=audit)
    LOG.clear()
    result = Runner.run_sync(desk, "I was charged twice.")
    print(result.final_output)
    return result


if __name__ == "__main__":
    main()
