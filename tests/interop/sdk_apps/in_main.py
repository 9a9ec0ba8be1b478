"""An SDK app in the SDK examples' usual style: the agents are built inside main()."""

import asyncio

from agents import Agent, Runner, function_tool


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def build_agent() -> Agent:
    """A factory: returns the agent without running it."""
    return Agent(name="Weather", instructions="Answer with the weather.", tools=[get_weather])


async def main() -> None:
    spanish = Agent(name="Spanish", instructions="Answer in Spanish.", tools=[get_weather])
    triage = Agent(name="Triage", instructions="Hand Spanish speakers over.",
                   handoffs=[spanish], tools=[get_weather])
    result = await Runner.run(triage, "¿Qué tiempo hace en Madrid?", max_turns=4)
    print(result.final_output)


def main_sync() -> None:
    agent = build_agent()
    print("building, then running")  # printed to stderr, not into check's output
    result = Runner.run_sync(agent, "Weather in Oslo?", context={"user": "ada"})
    print(result.final_output)


async def streamed() -> None:
    result = Runner.run_streamed(build_agent(), "Weather in Rome?")
    async for _ in result.stream_events():
        pass


def two_agents() -> list[Agent]:
    back = Agent(name="Back")
    return [Agent(name="Front", handoffs=[back]), back]


def swallowed() -> None:
    """Catches every Exception around the run: the stop still gets through."""
    try:
        Runner.run_sync(build_agent(), "hi", hooks=None, previous_response_id="resp_1")
    except Exception:
        print("failed")


if __name__ == "__main__":
    asyncio.run(main())
