"""Tool guardrails, ``is_enabled`` gates and run/agent hooks through the Temporal driver:
each a local activity on the worker, the run the same as in-process (items, final
output, last agent, every hook event), a tripwire or a raising hook the same error with
the run kept, and every history replaying cleanly."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from temporalio.client import Client

import stepswitch as ss
from stepswitch.temporal._codec import write_items
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests.temporal.drive import on_temporal

EVENTS: list[tuple[Any, ...]] = []
RAN: list[tuple[str, Any]] = []


@ss.tool_input_guardrail
async def only_small(data: ss.ToolInputGuardrailData) -> ss.ToolGuardrailFunctionOutput:
    n = json.loads(data.context.tool_arguments)["n"]
    if n > 100:
        return ss.ToolGuardrailFunctionOutput.reject_content(f"{n} is too large")
    return ss.ToolGuardrailFunctionOutput.allow(output_info={"n": n})


@ss.tool_output_guardrail
def no_secrets(data: ss.ToolOutputGuardrailData) -> ss.ToolGuardrailFunctionOutput:
    if "secret" in str(data.output):
        return ss.ToolGuardrailFunctionOutput.reject_content("[withheld]")
    if "SSN" in str(data.output):
        return ss.ToolGuardrailFunctionOutput.raise_exception(output_info="ssn")
    return ss.ToolGuardrailFunctionOutput.allow()


@ss.function_tool(tool_input_guardrails=[only_small], tool_output_guardrails=[no_secrets])
def look(n: int) -> str:
    """Look n up."""
    RAN.append(("look", n))
    if n == 3:
        return "the secret is 3"
    if n == 8:
        return "SSN 123"
    return f"item {n}"


def speaks_french(ctx: ss.RunContext[Any], agent: Any) -> bool:
    return "french" in ctx.context["languages"]


async def is_admin(ctx: ss.RunContext[Any], agent: Any) -> bool:
    if ctx.context.get("broken"):
        raise RuntimeError("the directory is down")
    return bool(ctx.context.get("admin"))


@ss.function_tool(is_enabled=speaks_french)
def to_french(text: str) -> str:
    """Translate to French."""
    RAN.append(("to_french", text))
    return f"fr: {text}"


class Recorder(ss.RunHooks[Any]):
    async def on_agent_start(self, context: Any, agent: Any) -> None:
        EVENTS.append(("agent_start", agent.name))

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        EVENTS.append(("agent_end", agent.name, output))

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        EVENTS.append(("handoff", from_agent.name, to_agent.name))

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        EVENTS.append(("tool_start", agent.name, tool.name, context.tool_call_id))

    def on_tool_end(self, context: Any, agent: Any, tool: Any,  # type: ignore[override]
                    result: Any) -> None:
        EVENTS.append(("tool_end", agent.name, tool.name, result))
        if result == "item 99":
            raise ValueError("end hook failed")

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any,
                           input_items: Any) -> None:
        EVENTS.append(("llm_start", agent.name, system_prompt, len(input_items)))

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        EVENTS.append(("llm_end", agent.name, len(response.output)))


class DeskHooks(ss.AgentHooks[Any]):
    async def on_start(self, context: Any, agent: Any) -> None:
        EVENTS.append(("desk.start", agent.name))

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        EVENTS.append(("desk.handoff", source.name, agent.name))


HOOKS = Recorder()
DESK_HOOKS = DeskHooks()

admin = ss.Agent("admin", "Administer.")
desk = ss.Agent("desk", "Help.", tools=[look, to_french],
                handoffs=[ss.handoff(admin, is_enabled=is_admin)], hooks=DESK_HOOKS)
MACHINE = ss.Workflow("guarded_temporal", entry=desk, agents=[desk, admin]).compile()

SCRIPT: list[Any] = [
    [function_call("look", {"n": 500}, call_id="a"), function_call("look", {"n": 3}, call_id="b"),
     function_call("look", {"n": 1}, call_id="c")],
    [function_call("to_french", {"text": "hi"}, call_id="d")],
    [function_call("transfer_to_admin", {}, call_id="e")],
    [assistant_message("done")],
]


def _in_process(script: list[Any], context: dict[str, Any]) -> tuple[Any, Any]:
    try:
        result = MACHINE.run_sync("help", model=ScriptedModel(script), context=context,
                                  hooks=HOOKS)
    except Exception as exc:
        data = getattr(exc, "run_data", None)
        items = write_items(data.new_items) if data is not None else []
        return (type(exc).__name__, str(exc)), items
    return result.final_output, write_items(result.new_items)


def _on_temporal(dev_server: str, script: list[Any], context: dict[str, Any]) -> Any:
    async def go() -> Any:
        client = await Client.connect(dev_server)
        return await on_temporal(client, MACHINE, "help", script, True, context, hooks=HOOKS)

    seen, history = asyncio.run(go())
    assert len(history.events) > 3  # replayed cleanly (on_temporal replays it)
    return seen


def _fresh() -> None:
    EVENTS.clear()
    RAN.clear()


def test_the_run_and_every_hook_event_are_the_same_as_in_process(dev_server: str) -> None:
    context = {"languages": ["french"], "admin": True}
    _fresh()
    final, items = _in_process(SCRIPT, context)
    events, ran = list(EVENTS), list(RAN)
    assert final == "done" and ran == [("look", 3), ("look", 1), ("to_french", "hi")]
    _fresh()
    seen = _on_temporal(dev_server, SCRIPT, context)
    assert seen.error is None
    assert (seen.final_output, seen.items, seen.last_agent) == (final, items, "admin")
    assert ran == RAN
    assert events == EVENTS
    assert ("desk.handoff", "desk", "admin") in events and ("handoff", "desk", "admin") in events
    outputs = [i["output"] for i in items if i["type"] == "tool_call_output_item"]
    assert outputs[:3] == ["500 is too large", "[withheld]", "item 1"]


def test_a_closed_gate_is_an_unknown_tool_on_temporal_too(dev_server: str) -> None:
    script: list[Any] = [[function_call("to_french", {"text": "hi"}, call_id="a")]]
    context: dict[str, Any] = {"languages": []}
    _fresh()
    expected = _in_process(script, context)
    seen = _on_temporal(dev_server, script, context)
    assert seen.error == expected[0] == ("ModelBehaviorError",
                                         "Tool to_french not found in agent desk")
    assert RAN == []


@pytest.mark.parametrize("case", ["output_tripwire", "raising_hook", "raising_gate"])
def test_a_tripwire_or_a_raising_hook_ends_the_run_with_its_items(dev_server: str,
                                                                   case: str) -> None:
    scripts: dict[str, list[Any]] = {
        "output_tripwire": [[function_call("look", {"n": 8}, call_id="a")]],
        "raising_hook": [[function_call("look", {"n": 99}, call_id="a")]],
        "raising_gate": [[assistant_message("never")]],
    }
    script = scripts[case]
    context = {"languages": [], "broken": case == "raising_gate"}
    _fresh()
    (kind, message), items = _in_process(script, context)
    ran = list(RAN)
    _fresh()
    seen = _on_temporal(dev_server, script, context)
    assert seen.error == (kind, message)
    assert seen.items == items
    assert ran == RAN  # the tool ran once, or not at all, as in-process
    assert kind == {"output_tripwire": "ToolOutputGuardrailTripwireTriggered",
                    "raising_hook": "ValueError", "raising_gate": "RuntimeError"}[case]
