"""Fault paths of a run (issue 11): hostile tool arguments, tool results that cannot be
shown, run settings and guardrail results of the wrong shape. Runs go through the real
``openai`` client over loopback HTTP against ``OpenAIServer``."""

from __future__ import annotations

import json
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIServer
from stepswitch.models.script import call, message

SEEN: list[Any] = []


@ss.function_tool
def store(order_id: int, note: str = "") -> str:
    """Store a note on an order."""
    SEEN.append((order_id, note))
    return f"stored on {order_id}"


@ss.function_tool(needs_approval=lambda ctx, params, call_id: params.get("order_id") == 1)
def gated_store(order_id: int) -> str:
    """Store, sometimes after approval."""
    SEEN.append(("gated", order_id))
    return "ok"


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("cannot print me")

    __repr__ = __str__


@ss.function_tool
def odd_result() -> Any:
    """Return something with no text form."""
    SEEN.append("odd_result ran")
    return Unprintable()


@ss.function_tool
def unserialisable() -> Any:
    """Return a dict holding a value json cannot write and str cannot print."""
    SEEN.append("unserialisable ran")
    return {"value": Unprintable()}


class Unspeakable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no words")


@ss.function_tool
def mute_failure() -> str:
    """Fail with an exception that cannot say what went wrong."""
    SEEN.append("mute_failure ran")
    raise Unspeakable


helper = ss.Agent(name="helper", instructions="Help.")
agent = ss.Agent(
    name="clerk",
    instructions="File notes.",
    tools=[store, gated_store, odd_result, unserialisable, mute_failure,
           helper.as_tool("ask", "Ask")],
)
workflow = ss.Workflow(name="clerk", entry=agent, agents=[agent, helper])


@pytest.fixture(autouse=True)
def clean() -> None:
    SEEN.clear()


def chat(server: OpenAIServer) -> OpenAIChatCompletionsModel:
    return OpenAIChatCompletionsModel("gpt-test", server.client(max_retries=0))


DEEP = '{"order_id": 1, "note": ' + "[" * 5000 + "]" * 5000 + "}"
HUGE = '{"order_id": ' + "9" * 5000 + "}"
HUGE_NOTE = '{"order_id": 2, "note": ' + "7" * 5000 + "}"


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("store", DEEP, "nested deeper than 200 levels"),
        ("store", HUGE, "more than 4300 digits"),
        ("store", HUGE_NOTE, "more than 4300 digits"),
        ("gated_store", DEEP.replace('"note"', '"x"'), "nested deeper than 200 levels"),
        ("ask", '{"input": ' + "[" * 5000 + "]" * 5000 + "}", "nested deeper than 200 levels"),
        ("ask", '{"input": ' + "1" * 5000 + "}", "more than 4300 digits"),
    ],
)
def test_hostile_tool_arguments_are_an_error_output_the_model_sees(
    tool: str, arguments: str, problem: str, openai_server: OpenAIServer
) -> None:
    openai_server.add([call(tool, arguments, "c1")], [message("Sorry, let me retry.")])
    result = workflow.compile().run_sync("file it", model=chat(openai_server))
    output = next(i for i in result.new_items if i.type == "tool_call_output_item")
    assert output.is_error and problem in output.output
    assert SEEN == []  # the tool never ran
    assert result.final_output == "Sorry, let me retry."
    # the model was told, over the wire
    sent = openai_server.model_requests("chat")[1].body["messages"]
    assert problem in sent[-1]["content"]


@pytest.mark.parametrize("tool", ["odd_result", "unserialisable"])
def test_a_tool_result_with_no_text_form_is_an_error_output_and_the_run_goes_on(
    tool: str, openai_server: OpenAIServer
) -> None:
    openai_server.add([call(tool, {}, "c1")], [message("Noted.")])
    result = workflow.compile().run_sync("go", model=chat(openai_server))
    assert [tool + " ran"] == SEEN  # it ran once, and its output records that it did
    output = next(i for i in result.new_items if i.type == "tool_call_output_item")
    assert output.is_error
    assert f"{tool} ran, but its result could not be turned into text" in output.output
    assert "cannot print me" in output.output
    assert result.final_output == "Noted."
    # the state of such a run saves and loads (the unprintable value is not in it)
    state = result.to_state()
    assert ss.RunState.from_json(state.to_json()).to_json() == state.to_json()


def test_a_tool_error_whose_str_raises_gives_the_model_its_type_name(
    openai_server: OpenAIServer,
) -> None:
    openai_server.add([call("mute_failure", {}, "c1")], [message("It failed.")])
    result = workflow.compile().run_sync("go", model=chat(openai_server))
    assert result.final_output == "It failed."
    output = next(i for i in result.new_items if i.type == "tool_call_output_item")
    assert output.is_error
    assert output.output.endswith("Error: Unspeakable")
    sent = openai_server.model_requests("chat")[1].body["messages"]
    assert sent[-1]["content"] == output.output


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"max_tool_concurrency": 0}, "max_tool_concurrency"),
        ({"max_tool_concurrency": -3}, "max_tool_concurrency"),
        ({"max_tool_concurrency": "4"}, "max_tool_concurrency"),
        ({"max_tool_concurrency": True}, "max_tool_concurrency"),
        ({"unknown_tool": "ignore"}, "unknown_tool"),
        ({"reset_tool_choice": "yes"}, "reset_tool_choice"),
        ({"trace_content": 1}, "trace_content"),
        ({"on_max_turns": 3}, "on_max_turns"),
        ({"on_invalid_output": "x"}, "on_invalid_output"),
        ({"handoff_input_filter": 1.5}, "handoff_input_filter"),
        ({"model_settings": {"temperature": 1}}, "model_settings"),
    ],
)
def test_run_config_rejects_bad_values_naming_the_field(
    options: dict[str, Any], field: str
) -> None:
    with pytest.raises(ss.UserError, match=f"RunConfig: {field} must be"):
        ss.RunConfig(**options)


def test_run_config_accepts_good_values() -> None:
    config = ss.RunConfig(max_tool_concurrency=2, unknown_tool="return_error",
                          on_max_turns=lambda data: "stop", model_settings=ss.ModelSettings())
    assert config.max_tool_concurrency == 2


@pytest.mark.parametrize("bad", [0, -1, "3", 2.5, True])
def test_a_bad_max_turns_is_a_user_error_naming_it(bad: Any) -> None:
    machine = workflow.compile()
    with pytest.raises(ss.UserError, match="max_turns must be"):
        machine.run_sync("hi", model=ss.testing.ScriptedModel([]), max_turns=bad)


@ss.input_guardrail
def forgetful_input(ctx: Any, agent: Any, text: Any) -> Any:
    return None  # forgot to return GuardrailFunctionOutput


@ss.output_guardrail
def chatty_output(ctx: Any, agent: Any, output: Any) -> Any:
    return {"tripwire_triggered": True}


def _guarded(**guards: Any) -> ss.StateMachine:
    a = ss.Agent(name="guarded", instructions="Answer.", **guards)
    return ss.Workflow(name="guarded", entry=a).compile()


@pytest.mark.parametrize(
    ("guards", "named", "returned"),
    [
        ({"input_guardrails": [forgetful_input]}, "input guardrail 'forgetful_input'", "None"),
        ({"output_guardrails": [chatty_output]}, "output guardrail 'chatty_output'", "dict"),
    ],
)
def test_a_guardrail_that_returns_the_wrong_thing_is_a_user_error(
    guards: dict[str, Any], named: str, returned: str, openai_server: OpenAIServer
) -> None:
    openai_server.add([message("Hello.")])
    with pytest.raises(ss.UserError) as caught:
        _guarded(**guards).run_sync("hi", model=chat(openai_server))
    text = str(caught.value)
    assert named in text and f"returned {returned}" in text
    assert "GuardrailFunctionOutput" in text
    assert caught.value.run_data is not None  # type: ignore[attr-defined]


def test_the_deep_json_error_text_is_json_safe() -> None:
    # the error output travels back to the model inside JSON: it must serialise
    from stepswitch._json import JSONLimitError, loads

    with pytest.raises(JSONLimitError) as caught:
        loads(DEEP)
    json.dumps(str(caught.value))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than 200 levels"),
        ('{"format": "stepswitch.run_state", "version": ' + "1" * 5000 + "}",
         "more than 4300 digits"),
        (b'{"format": "\xff"}', "not valid JSON"),
    ],
    ids=["deep", "huge-int", "not-utf8"],
)
def test_a_hostile_saved_state_is_a_state_error(text: str | bytes, problem: str) -> None:
    with pytest.raises(ss.StateError, match=problem):
        ss.RunState.from_json(text)
