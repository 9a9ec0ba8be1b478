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

Run: ``.venv/bin/python bench/bench_mcp.py`` (``--quick`` for fewer calls). Medians of
per-call times over rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import stepswitch as ss
from stepswitch.context import RunContext, Usage
from stepswitch.mcp import _client
from stepswitch.mcp.lock import write_lock
from stepswitch.testing import ScriptedModel, assistant_message, function_call

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "mcp_server.py"
ARGS = {"text": "hello", "times": 2}


async def bare(calls: int, rounds: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    out = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(10):
            await session.call_tool("echo", ARGS)
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(calls):
                await session.call_tool("echo", ARGS)
            out.append((time.perf_counter() - start) / calls)
    return out


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


async def tool_path(server: Any, calls: int, rounds: int) -> list[float]:
    (echo,) = [t for t in server.function_tools() if t.name == "echo"]
    validator = echo.params_model.__pydantic_validator__
    raw = '{"text": "hello", "times": 2}'
    ctx = RunContext(None, Usage(), idempotency_key="benchrun:call_0")
    for _ in range(10):
        await echo.fn(ctx, **validator.validate_json(raw).__dict__)
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            params = validator.validate_json(raw)
            await echo.fn(ctx, **params.__dict__)
        out.append((time.perf_counter() - start) / calls)
    return out


@ss.function_tool
def echo_local(text: str, times: int) -> str:
    """Echo the text back."""
    return " ".join([text] * times)


def whole_runs(wf: ss.Workflow, calls: int, rounds: int) -> tuple[list[float], list[float]]:
    machine = wf.compile()
    local = ss.Workflow(name="bench_local", entry=ss.Agent("a", "Echo.", tools=[echo_local]))
    local_machine = local.compile()

    def script(name: str) -> ScriptedModel:
        return ScriptedModel([
            [function_call(name, ARGS, call_id=f"call_{i}") for i in range(calls)],
            [assistant_message("done")],
        ])

    machine.run_sync("warm", model=script("echo"))
    local_machine.run_sync("warm", model=script("echo_local"))
    mcp_times, local_times = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        machine.run_sync("go", model=script("echo"))
        mcp_times.append((time.perf_counter() - start) / calls)
        start = time.perf_counter()
        local_machine.run_sync("go", model=script("echo_local"))
        local_times.append((time.perf_counter() - start) / calls)
    return mcp_times, local_times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    calls, rounds = (50, 5) if args.quick else (200, 9)
    bare_t = statistics.median(asyncio.run(bare(calls, rounds)))
    with tempfile.TemporaryDirectory() as folder:
        server, wf = declare(Path(folder))
        path_t = statistics.median(asyncio.run(tool_path(server, calls, rounds)))
        mcp_runs, local_runs = whole_runs(wf, calls, rounds)
        _client.wait(_client.close_all(), 10)
    run_t = statistics.median(mcp_runs) - statistics.median(local_runs)
    print(f"MCP tool call over stdio, {calls} calls x {rounds} rounds (median per call):")
    print(f"  bare mcp ClientSession.call_tool      {bare_t * 1e6:8.0f} µs")
    print(f"  stepswitch tool call (validate+call)  {path_t * 1e6:8.0f} µs   "
          f"{path_t / bare_t:.2f}x bare")
    print(f"  in a run, beyond a local tool's call  {run_t * 1e6:8.0f} µs   "
          f"{run_t / bare_t:.2f}x bare")


if __name__ == "__main__":
    main()
