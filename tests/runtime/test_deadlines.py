"""Issue 11, "Also": runs have deadlines, and a synchronous tool cannot block other runs.

``RunConfig(timeout=s)`` bounds a whole run (a server that trickles bytes cannot hold
it forever); ``function_tool(timeout=s)`` bounds one tool. Each ends in a clear error
that keeps the run. A synchronous tool runs in a worker thread, so while it blocks,
other runs on the same event loop go on.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.runtime.model import ModelRequest, ModelResponse
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests._items import output_of
from tests.conformance.harness import run_all
from tests.conformance.kit import Ledger, compile_agents, lookup_tool


class Stalling:
    """Answers the first ``answers`` calls from a script, then never answers (a server
    that keeps the connection open); streamed, it trickles events forever."""

    def __init__(self, script: list[Any], answers: int) -> None:
        self.script = ScriptedModel(script)
        self.answers = answers
        self.made = 0

    @property
    def calls(self) -> list[Any]:
        return list(self.script.calls)

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        self.made += 1
        if self.made <= self.answers:
            return await self.script.get_response(request)
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        self.made += 1
        if self.made <= self.answers:
            async for event in self.script.stream_response(request):
                yield event
            return
        while True:  # a byte now and then, never the end
            await asyncio.sleep(0.01)
            yield {"type": "keepalive"}


def test_run_timeout_ends_a_stalled_run_with_its_items() -> None:
    ledger = Ledger()
    machine = compile_agents(ss.Agent("a", tools=[lookup_tool(ledger)]))
    config = ss.RunConfig(timeout=0.3)
    out = run_all(
        machine, "go",
        lambda: Stalling([[function_call("lookup_order", {"order_id": 1})]], answers=1),  # type: ignore[arg-type, return-value]
        run_config=config,
    )
    error = out.error
    assert isinstance(error, ss.RunTimeoutError), error
    assert "timeout of 0.3 s" in str(error)
    data = error.run_data
    assert [i.type for i in data.new_items] == ["tool_call_item", "tool_call_output_item"]
    # the stalled model call is made again on resume; nothing the run did is lost
    ledger.ran.clear()
    resumed = machine.run_sync(data.to_state(), model=ScriptedModel([[assistant_message("ok")]]))
    assert resumed.final_output == "ok"
    assert ledger.ran == []


def test_run_timeout_must_be_positive() -> None:
    with pytest.raises(ss.UserError, match="RunConfig: timeout must be a positive number"):
        ss.RunConfig(timeout=0)
    with pytest.raises(ss.UserError, match="RunConfig: timeout"):
        ss.RunConfig(timeout="5")  # type: ignore[arg-type]


def _slow_tools(release: threading.Event) -> tuple[ss.FunctionTool, ss.FunctionTool]:
    @ss.function_tool(timeout=0.05)
    async def slow_async(n: int) -> str:
        """Takes too long."""
        await asyncio.sleep(5)
        return "late"

    @ss.function_tool(timeout=0.05)
    def slow_sync(n: int) -> str:
        """Blocks too long (a thread cannot be stopped; asyncio.run waits for it at exit,
        so it is kept short)."""
        release.wait(0.3)
        return "late"

    return slow_async, slow_sync


@pytest.mark.parametrize("tool", ["slow_async", "slow_sync"])
def test_a_tool_past_its_timeout_is_an_error_output_and_the_run_goes_on(tool: str) -> None:
    release = threading.Event()
    try:
        machine = compile_agents(ss.Agent("a", tools=list(_slow_tools(release))))
        out = run_all(machine, "go", [[function_call(tool, {"n": 1})], [assistant_message("ok")]])
        assert out.result.final_output == "ok"
        output = out.result.new_items[1]
        assert output.type == "tool_call_output_item" and output.is_error
        assert f"Tool '{tool}' timed out after 0.05 seconds" in output.output
    finally:
        release.set()


def test_a_tool_timeout_with_failure_error_function_none_ends_the_run_keeping_it() -> None:
    @ss.function_tool(timeout=0.05, failure_error_function=None)
    async def slow(n: int) -> str:
        """Takes too long."""
        await asyncio.sleep(5)
        return "late"

    machine = compile_agents(ss.Agent("a", tools=[slow]))
    out = run_all(machine, "go", [[function_call("slow", {"n": 1})]])
    assert isinstance(out.error, ss.ToolTimeoutError), out.error
    assert out.error.tool_name == "slow" and out.error.timeout == 0.05
    assert [i.type for i in out.error.run_data.new_items] == ["tool_call_item"]


@pytest.mark.parametrize("bad", [0, -1, "1", True])
def test_a_tool_timeout_must_be_a_positive_number(bad: Any) -> None:
    with pytest.raises(ss.UserError, match="timeout: expected a positive number of seconds"):
        @ss.function_tool(timeout=bad)
        def tool(n: int) -> str:
            """A tool."""
            return ""


def test_a_blocking_sync_tool_does_not_block_other_runs() -> None:
    # run A's sync tool blocks until run B's tool has run: on the event loop's thread
    # it would wait forever (here: 5 s, then say so), in a worker thread B goes on
    other_ran = threading.Event()

    @ss.function_tool
    def wait_for_other(n: int) -> str:
        """Blocks until the other run's tool ran."""
        return "saw the other run" if other_ran.wait(5) else "blocked the loop"

    @ss.function_tool
    async def signal(n: int) -> str:
        """Lets the other run go on."""
        other_ran.set()
        return "signalled"

    machine = compile_agents(ss.Agent("a", tools=[wait_for_other, signal]))

    async def both() -> list[ss.RunResult]:
        first = machine.run("a", model=ScriptedModel(
            [[function_call("wait_for_other", {"n": 1})], [assistant_message("a done")]]))
        second = machine.run("b", model=ScriptedModel(
            [[function_call("signal", {"n": 1})], [assistant_message("b done")]]))
        return list(await asyncio.gather(first, second))

    a, b = asyncio.run(both())
    assert output_of(a.new_items[1]) == "saw the other run"
    assert b.final_output == "b done"


@ss.function_tool(timeout=2.5)
def timed(n: int) -> str:
    """Takes a while (importable by path, for the generated runner)."""
    return "done"


def test_a_tool_timeout_is_part_of_the_ir_and_the_generated_runner() -> None:
    from graphs.support import lookup_order
    from stepswitch.compiler.codegen import codegen
    from stepswitch.ir import RunFunction

    machine = compile_agents(ss.Agent("a", tools=[timed]))
    (entry,) = machine.ir.states[0].tools
    assert isinstance(entry.action, RunFunction) and entry.action.timeout == 2.5
    # the runner states it (the loop reads the IR, not the tool object)
    assert "timeout=2.5" in codegen(machine)
    plain = compile_agents(ss.Agent("b", tools=[lookup_order]))
    assert "timeout" not in codegen(plain)
