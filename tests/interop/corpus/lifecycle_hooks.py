"""Agent hooks and run hooks: the agent's hooks are carried; run hooks given to the
SDK's ``Runner.run`` are the run's, not the workflow's, and stepswitch names them, located."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, AgentHooks, RunHooks, Runner


class LogAgent(AgentHooks[Any]):
    async def on_start(self, context: Any, agent: Any) -> None:
        print(f"{agent.name} starts")


class LogRun(RunHooks[Any]):
    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        print(f"{agent.name} ended")


async def main() -> object:
    agent = Agent(name="Greeter", instructions="Greet.", hooks=LogAgent())
    result = await Runner.run(agent, "hi", hooks=LogRun())
    print(result.final_output)
    return result


if __name__ == "__main__":
    asyncio.run(main())
