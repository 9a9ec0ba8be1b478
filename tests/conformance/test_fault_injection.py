"""Issue 11, "Also": random transcripts with random faults, and the two invariants.

Hypothesis draws a small workflow (gated and ungated tools, sync and async, tools that
raise, a tool whose failure ends the run, handoffs, an agent tool whose nested run can
pause) and a script in which the model sometimes fails, and picks points at which the
run is cancelled: while the model is called, before a tool starts, or right after a
tool had its effect and before its output is recorded. Every way a run ends is then
taken as a user would: paused runs are decided at random, failed and cancelled runs are
retried from ``exc.run_data.to_state()``, each time through JSON, under a random
surface. Whatever happens:

1. an approved call never runs twice (no call runs twice: each call's arguments carry a
   unique number, and the tools record every execution), across every save, load and
   resume of the lineage;
2. a gated call runs only after a human approved it (a rejected or undecided one never).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import stepswitch as ss
from stepswitch.context import Usage
from stepswitch.runtime.model import (
    ModelRequest,
    ModelResponse,
    OutputFunctionCall,
    OutputMessage,
)
from stepswitch.testing import assistant_message


class Clock:
    """Counts the run's await points and cancels the run at the chosen ones."""

    def __init__(self, faults: set[int]) -> None:
        self.faults = faults
        self.ticks = 0
        self.ran: list[tuple[str, int]] = []
        """Every tool execution: (tool name, the call's unique number)."""

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks in self.faults:
            raise asyncio.CancelledError()


class FaultyModel:
    """Plays the script across resumes; a step is a response, or "error" (the server
    fails). Past the script's end every agent answers with a message."""

    def __init__(self, steps: list[Any], clock: Clock) -> None:
        self.steps = steps
        self.used = 0
        self.clock = clock

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        self.clock.tick()
        await asyncio.sleep(0)
        step = self.steps[self.used] if self.used < len(self.steps) else None
        self.used += 1
        if step == "error":
            raise ss.ModelProviderError("the server failed (HTTP 500)", status=500)
        output = step if step is not None else [assistant_message("end")]
        return ModelResponse(tuple(output), Usage(requests=1), response_id=f"r{self.used}")


def _tool(name: str, clock: Clock, *, gated: bool, is_async: bool, fatal: bool) -> Any:
    def effect(n: int) -> str:
        if n < 0:
            raise ValueError("negative")
        clock.tick()  # cancelled before the effect
        clock.ran.append((name, n))
        clock.tick()  # cancelled right after it, before the output is recorded
        return f"{name}:{n}"

    if is_async:
        async def tool(n: int) -> str:
            await asyncio.sleep(0)
            return effect(n)
    else:
        def tool(n: int) -> str:  # type: ignore[misc]
            return effect(n)

    tool.__name__ = tool.__qualname__ = name
    options: dict[str, Any] = {"needs_approval": gated}
    if fatal:
        options["failure_error_function"] = None
    return ss.function_tool(**options)(tool)


@st.composite
def workflows(draw: st.DrawFn, clock: Clock) -> tuple[ss.StateMachine, list[str], set[str]]:
    count = draw(st.integers(1, 3))
    names = [f"a{i}" for i in range(count)]
    gated: set[str] = set()
    tools_of: dict[str, list[str]] = {}
    agents = []
    for i, name in enumerate(names):
        tools: list[Any] = []
        for kind in ("g", "t"):
            tool_name = f"{kind}{i}"
            is_gated = kind == "g" or draw(st.booleans())
            if is_gated:
                gated.add(tool_name)
            tools.append(_tool(tool_name, clock, gated=is_gated, is_async=draw(st.booleans()),
                               fatal=draw(st.booleans())))
        others = [n for n in names if n != name]
        handoffs = [ss.handoff(o, max_uses=1) for o in others if draw(st.booleans())]
        if len(others) > 0 and draw(st.booleans()):
            tools.append(ss.agent_tool(draw(st.sampled_from(others)), f"ask{i}", "Ask.",
                                       max_turns=3))
        agents.append(ss.Agent(name, tools=tools, handoffs=handoffs))
        tools_of[name] = [t.name if hasattr(t, "name") else f"ask{i}" for t in tools]
        tools_of[name] += [f"transfer_to_{h.target}" for h in handoffs]
    machine = ss.Workflow("faults", entry=agents[0], agents=agents, max_turns=6, max_depth=2,
                          ignore=["SW201", "SW202", "SW205"]).compile()
    every = sorted({t for ts in tools_of.values() for t in ts})
    return machine, every, gated


def _script(draw: st.DrawFn, tools: list[str]) -> list[Any]:
    number = iter(range(1_000_000))
    steps: list[Any] = []
    for s in range(12):
        if draw(st.integers(0, 9)) == 0:
            steps.append("error")
            continue
        out: list[Any] = []
        for j in range(draw(st.integers(0, 3))):
            name = draw(st.sampled_from(tools))
            n = next(number) if draw(st.integers(0, 5)) else -1 - next(number)
            args = {"input": f"q{n}"} if name.startswith("ask") else {"n": n}
            out.append(OutputFunctionCall(name=name, arguments=json.dumps(args),
                                          call_id=f"c{s}_{j}"))
        if not out or draw(st.booleans()):
            out.append(OutputMessage(content="done"))
        steps.append(out)
    return steps


def _run(machine: ss.StateMachine, start: Any, model: FaultyModel, surface: str) -> Any:
    if surface == "run_sync":
        return machine.run_sync(start, model=model)
    if surface == "run":
        return asyncio.run(machine.run(start, model=model))
    streamed = machine.run_streamed(start, model=model)

    async def consume() -> None:
        async for _ in streamed.stream_events():
            pass

    asyncio.run(consume())
    return streamed.result()


@settings(max_examples=60, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_no_approved_call_twice_and_no_unapproved_gated_call_under_faults(
    data: st.DataObject,
) -> None:
    clock = Clock(set(data.draw(st.lists(st.integers(1, 40), max_size=3))))
    machine, tools, gated = data.draw(workflows(clock))
    model = FaultyModel(data.draw(st.composite(lambda d: _script(d, tools))()), clock)
    approved: set[tuple[str, int]] = set()

    start: Any = "go"
    for _ in range(8):
        surface = data.draw(st.sampled_from(["run_sync", "run", "run_streamed"]))
        try:
            result = _run(machine, start, model, surface)
        except ss.StateError:
            break  # a run stopped mid-turn: refused, never re-run
        except BaseException as exc:  # failures, Ctrl-C-like cancellations: retry
            run_data = getattr(exc, "run_data", None)
            assert run_data is not None, f"{type(exc).__name__} ended the run without run_data"
            start = ss.RunState.from_json(run_data.to_state().to_json())
            continue
        if not result.interruptions:
            break
        state = ss.RunState.from_json(result.to_state().to_json())
        for item in state.interruptions:
            if data.draw(st.booleans()):
                state.approve(item)
                approved.add((item.name, json.loads(item.arguments)["n"]))
            else:
                state.reject(item)
        start = state

    twice = [call for call, k in Counter(clock.ran).items() if k > 1]
    assert not twice, f"calls ran more than once: {twice}"
    unapproved = [call for call in clock.ran if call[0] in gated and call not in approved]
    assert not unapproved, f"gated calls ran without approval: {unapproved}"
