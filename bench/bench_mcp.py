"""Benchmark: the per-call overhead of an MCP tool over stdio, against a bare ``mcp``
client session making the same call (goal, issue #25: ≤ 1.2× the bare client).

Both talk to the same real server (tests/mcp/mcp_server.py, a subprocess over stdio)
and call its ``echo`` tool with the same arguments:

- bare: ``await session.call_tool("echo", {...})`` on an ``mcp.ClientSession`` the
  benchmark holds open, on its own event loop;
- stepswitch: what the run loop does for one call of the locked tool: validate the
  model's JSON arguments against the tool's parameters (the locked input schema), then
  call the tool, which checks its run's listing once (cached), hops to the connection's
  loop, calls the server and turns the result into the model's text;
- run: a whole scripted run whose one model response makes N calls of the tool (run as
  the loop runs one response's calls: concurrently, the server answering in turn), per
  call, less the same run calling a local function tool (what MCP adds to a run).

The rounds are interleaved (bare, stepswitch tool call, MCP run, local run, in an order
that rotates each round) inside one event loop, so a slow spell of a shared machine
touches every side alike; each line shows the median per call over the rounds and the
spread (lowest to highest round), and the ratio is the median of the per-round ratios.

Run: ``.venv/bin/python bench/bench_mcp.py`` (``--quick`` for fewer calls).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import stepswitch as ss
from stepswitch.context import RunContext, Usage
from stepswitch.mcp import _client
from stepswitch.mcp.lock import write_lock
from stepswitch.testing import ScriptedModel, assistant_message, function_call

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "mcp_server.py"
ARGS = {"text": "hello", "times": 2}


async def bare_session(stack: contextlib.AsyncExitStack) -> Any:
    """A bare ``mcp`` client session to its own server process, held open by ``stack``."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def declare(folder: Path) -> tuple[Any, ss.Workflow]:
    """A server declared in ``folder`` (its lock goes there), and a workflow using it."""
    source = folder / "bench_mcp_app.py"
    source.write_text(
        "import sys\nimport stepswitch as ss\n"
        f"server = ss.MCPServerStdio('bench', sys.executable, [{str(SERVER)!r}])\n",
        encoding="utf-8",
    )
    ns: dict[str, Any] = {}
    exec(compile(source.read_text("utf-8"), str(source), "exec"), ns)
    server = ns["server"]
    tools = _client.wait(server.list_tools(), 60)
    write_lock(folder / "stepswitch.mcp.lock", {"bench": {"transport": "stdio",
                                                          "tools": tools}})
    agent = ss.Agent("a", "Echo.", mcp_servers=[server])
    return server, ss.Workflow(name="bench_mcp", entry=agent)


Round = Callable[[], Awaitable[None]]


def bare_round(session: Any, calls: int) -> Round:
    async def one() -> None:
        for _ in range(calls):
            await session.call_tool("echo", ARGS)

    return one


def tool_round(server: Any, calls: int) -> Round:
    """What the loop does per call: validate the JSON arguments, then call the tool."""
    (echo,) = [t for t in server.function_tools() if t.name == "echo"]
    validator = echo.params_model.__pydantic_validator__
    raw = '{"text": "hello", "times": 2}'
    ctx = RunContext(None, Usage(), idempotency_key="benchrun:call_0")

    async def one() -> None:
        for _ in range(calls):
            params = validator.validate_json(raw)
            await echo.fn(ctx, **params.__dict__)

    return one


@ss.function_tool
def echo_local(text: str, times: int) -> str:
    """Echo the text back."""
    return " ".join([text] * times)


def run_round(machine: ss.StateMachine, tool: str, calls: int) -> Round:
    """One scripted run whose first response makes ``calls`` calls of ``tool``."""

    async def one() -> None:
        model = ScriptedModel([
            [function_call(tool, ARGS, call_id=f"call_{i}") for i in range(calls)],
            [assistant_message("done")],
        ])
        await machine.run("go", model=model)

    return one


async def measure(wf: ss.Workflow, server: Any, calls: int, rounds: int
                  ) -> dict[str, list[float]]:
    """Per-call seconds of each side, one list entry per round, rounds interleaved."""
    local = ss.Workflow(name="bench_local", entry=ss.Agent("a", "Echo.", tools=[echo_local]))
    async with contextlib.AsyncExitStack() as stack:
        sides: dict[str, Round] = {
            "bare": bare_round(await bare_session(stack), calls),
            "tool": tool_round(server, calls),
            "run": run_round(wf.compile(), "echo", calls),
            "local": run_round(local.compile(), "echo_local", calls),
        }
        for side in sides.values():  # warm: connections, caches, the first listing
            await side()
        times: dict[str, list[float]] = {name: [] for name in sides}
        names = list(sides)
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                start = time.perf_counter()
                await sides[name]()
                times[name].append((time.perf_counter() - start) / calls)
    return times


def _line(label: str, values: list[float], base: list[float] | None) -> str:
    med = statistics.median(values)
    text = (f"  {label:<38} {med * 1e6:7.0f} µs  "
            f"[{min(values) * 1e6:.0f}–{max(values) * 1e6:.0f}]")
    if base is not None:
        ratios = [v / b for v, b in zip(values, base, strict=True)]
        text += (f"   {statistics.median(ratios):.2f}x bare "
                 f"[{min(ratios):.2f}–{max(ratios):.2f}]")
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    calls, rounds = (50, 5) if args.quick else (200, 11)
    with tempfile.TemporaryDirectory() as folder:
        server, wf = declare(Path(folder))
        times = asyncio.run(measure(wf, server, calls, rounds))
        _client.wait(_client.close_all(), 10)
    extra = [m - loc for m, loc in zip(times["run"], times["local"], strict=True)]
    print(f"MCP tool call over stdio, {calls} calls x {rounds} interleaved rounds "
          "(median per call [lowest–highest round]):")
    print(_line("bare mcp ClientSession.call_tool", times["bare"], None))
    print(_line("stepswitch tool call (validate+call)", times["tool"], times["bare"]))
    print(_line("in a run, beyond a local tool's call", extra, times["bare"]))


if __name__ == "__main__":
    main()
