"""Function TARGETs that cannot give an app: each must be one located line."""

import time

from agents import Agent, Runner

import stepswitch as ss


def never_runs() -> None:
    Agent(name="Idle")


def raises() -> None:
    raise RuntimeError("no OPENAI_API_KEY in the environment")


def asks() -> None:
    name = input("Your name? ")
    Runner.run_sync(Agent(name="Greeter"), f"Hi, I am {name}")


def hangs() -> None:
    time.sleep(30)
    Runner.run_sync(Agent(name="Late"), "hi")


def needs_args(city: str) -> None:
    Runner.run_sync(Agent(name="Weather"), city)


def returns_a_number() -> int:
    return 42


def exits() -> None:
    raise SystemExit(3)


def runs_ours() -> None:
    wf = ss.Workflow("ours", entry=ss.Agent("helper", "Help."))
    machine = wf.compile()
    machine.run_sync("hi")


def returns_our_agent() -> ss.Agent:
    return ss.Agent("loose")
