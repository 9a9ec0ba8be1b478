"""A file whose agents are all built inside functions: nothing at module level."""

from agents import Agent, Runner


def make_helper() -> Agent:
    return Agent(name="Helper", instructions="Help.")


def run_conversation(agent: Agent) -> None:  # takes an argument: not a TARGET
    Runner.run_sync(agent, "hi")


def main() -> None:
    Runner.run_sync(make_helper(), "hi")
