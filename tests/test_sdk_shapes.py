"""What user callbacks receive, in the OpenAI Agents SDK's shapes (DESIGN §3).

Instructions functions and guardrails are called with ``(ctx, agent, ...)``; code written
for the SDK reads ``agent.name``, so it must work here too, interpreted and generated.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.testing import ScriptedModel, assistant_message
from tests.differential.twin import generated_twin

SEEN: list[tuple[str, str]] = []


def instructions(ctx: ss.RunContext[Any], agent: Any) -> str:
    SEEN.append(("instructions", agent.name))
    return f"You are {agent.name}."


@ss.input_guardrail
def check_input(ctx: ss.RunContext[Any], agent: Any, input: Any) -> ss.GuardrailFunctionOutput:
    SEEN.append(("input", agent.name))
    return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)


@ss.output_guardrail
def check_output(
    ctx: ss.RunContext[Any], agent: Any, output: Any
) -> ss.GuardrailFunctionOutput:
    SEEN.append(("output", agent.name))
    return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)


helper = ss.Agent(
    name="Helper Desk",
    instructions=instructions,
    input_guardrails=[check_input],
    output_guardrails=[check_output],
)
wf = ss.Workflow(name="shapes", entry=helper)


@pytest.mark.parametrize("runner", ["interpreted", "generated"])
def test_callbacks_see_the_agent_name(runner: str) -> None:
    SEEN.clear()
    machine = wf.compile()
    if runner == "generated":
        machine, by_path = generated_twin(machine)
        assert by_path
    model = ScriptedModel([[assistant_message("hi")]])
    result = machine.run_sync("hello", model=model)
    assert result.final_output == "hi"
    assert model.calls[0].instructions == "You are Helper Desk."
    assert sorted(SEEN) == [
        ("input", "Helper Desk"),
        ("instructions", "Helper Desk"),
        ("output", "Helper Desk"),
    ]


def test_model_settings_mistakes_are_user_errors_at_the_callers_line() -> None:
    with pytest.raises(ss.UserError) as info:
        ss.ModelSettings(temperature="hot")
    message = str(info.value)
    assert re.match(r"ModelSettings at .*test_sdk_shapes\.py:\d+: temperature: ", message)
    assert "\n" not in message
    with pytest.raises(ss.UserError, match=r"tool_choice: .*\(got 3\)$"):
        ss.ModelSettings(tool_choice=3)
    assert ss.ModelSettings(tool_choice="lookup_order").tool_choice == "lookup_order"
