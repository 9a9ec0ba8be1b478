"""The Agents SDK's spellings in our DSL: each is a thin alias of our own name."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from openai.types.shared import Reasoning

import stepswitch as ss
from stepswitch.runtime.items import MessageOutputItem, RunItem, ToolCallItem, UserInputItem
from stepswitch.testing import ScriptedModel, assistant_message, function_call


@dataclass
class Ctx:
    user: str


def test_agent_subscripted_with_a_context_type_is_an_agent() -> None:
    agent = ss.Agent[Ctx](name="a", instructions="hi")  # type: ignore[misc]
    assert isinstance(agent, ss.Agent) and agent.name == "a"
    assert ss.Agent[Ctx] is ss.Agent  # type: ignore[misc]


def test_function_tool_name_and_description_overrides() -> None:
    @ss.function_tool(name_override="find_order", description_override="Find an order.")
    def lookup(order_id: int) -> str:
        """Ignored docstring."""
        return f"order {order_id}"

    assert (lookup.name, lookup.description) == ("find_order", "Find an order.")
    spec = ss.Workflow("w", entry=ss.Agent("a", tools=[lookup])).to_spec()
    assert spec.agents[0].tools[0].name == "find_order"


def test_function_tool_strict_mode_is_strict() -> None:
    @ss.function_tool(strict_mode=False)
    def loose(order_id: int) -> str:
        """Loose."""
        return ""

    assert loose.strict is False


def test_function_tool_override_and_our_name_together_is_an_error() -> None:
    with pytest.raises(ss.UserError, match=r"give name or name_override .*not both"):
        ss.function_tool(name="a", name_override="b")


def test_as_tool_sdk_keywords() -> None:
    seen: list[object] = []

    def extract(result: ss.RunResult) -> str:
        seen.append(result.final_output)
        return "extracted"

    inner = ss.Agent("inner")
    tool = inner.as_tool(tool_name="ask_inner", tool_description="Ask inner.",
                         custom_output_extractor=extract)
    assert (tool.name, tool.description, tool.output_extractor) == ("ask_inner", "Ask inner.",
                                                                    extract)
    outer = ss.Agent("outer", tools=[tool])
    machine = ss.Workflow("w", entry=outer, agents=[outer, inner]).compile()
    result = machine.run_sync("hi", model=ScriptedModel([
        [function_call("ask_inner", {"input": "q"})],
        [assistant_message("inner says")],
        [assistant_message("done")],
    ]))
    assert seen == ["inner says"]
    assert [i.output for i in result.new_items if i.type == "tool_call_output_item"] == [
        "extracted"
    ]


def test_as_tool_with_both_spellings_is_an_error_naming_the_line() -> None:
    with pytest.raises(ss.UserError, match=r"as_tool at .*test_sdk_spellings.py:\d+: give name"):
        ss.Agent("x").as_tool("a", tool_name="b")


def test_handoff_sdk_keywords() -> None:
    billing = ss.Agent("billing")
    edge = ss.handoff(agent=billing, tool_name_override="to_billing",
                      tool_description_override="Billing questions.")
    assert (edge.target, edge.tool_name, edge.description) == (billing, "to_billing",
                                                               "Billing questions.")
    spec = ss.Workflow("w", entry=ss.Agent("a", handoffs=[edge]), agents=[billing]).to_spec()
    h = spec.agent("a").handoffs[0]  # type: ignore[union-attr]
    assert (h.target, h.tool_name, h.description) == ("billing", "to_billing",
                                                       "Billing questions.")


def test_handoff_needs_one_target() -> None:
    with pytest.raises(ss.UserError, match="missing the target"):
        ss.handoff()
    with pytest.raises(ss.UserError, match="give target= or agent="):
        ss.handoff("a", agent="b")


def test_clone_replaces_fields_and_copies_lists() -> None:
    @ss.function_tool
    def ping() -> str:
        """Ping."""
        return "pong"

    base = ss.Agent("base", instructions="Be brief.", tools=[ping],
                    tool_use_behavior="stop_on_first_tool")
    copy = base.clone(name="copy", instructions="Be long.")
    assert (copy.name, copy.instructions, copy.tool_use_behavior) == (
        "copy", "Be long.", "stop_on_first_tool")
    assert copy.tools == [ping] and copy.tools is not base.tools
    copy.tools.append(ping)
    assert len(base.tools) == 1
    assert copy.site.line != base.site.line and copy.site.file.endswith("test_sdk_spellings.py")


def test_clone_names_an_unknown_field() -> None:
    with pytest.raises(ss.UserError, match=r"clone at .*: unknown field\(s\) colour"):
        ss.Agent("a").clone(colour="red")


def test_model_settings_reasoning_maps_to_reasoning_effort() -> None:
    assert ss.ModelSettings(reasoning=Reasoning(effort="low")).reasoning_effort == "low"  # type: ignore[call-arg]
    assert ss.ModelSettings(reasoning={"effort": "high"}).reasoning_effort == "high"  # type: ignore[call-arg]


def test_model_settings_reasoning_we_cannot_send_names_the_alternative() -> None:
    with pytest.raises(ss.UserError,
                       match=r"summary cannot be sent.*reasoning_effort=.*extra_body"):
        ss.ModelSettings(reasoning=Reasoning(effort="low", summary="auto"))  # type: ignore[call-arg]
    with pytest.raises(ss.UserError, match="disagree"):
        ss.ModelSettings(reasoning={"effort": "low"}, reasoning_effort="high")  # type: ignore[call-arg]


def test_recommended_prompt_prefix() -> None:
    text = ss.prompt_with_handoff_instructions("Route the user.")
    assert text.startswith(ss.RECOMMENDED_PROMPT_PREFIX) and text.endswith("Route the user.")
    assert "transfer_to_" in ss.RECOMMENDED_PROMPT_PREFIX


def test_item_helpers_read_our_items() -> None:
    items: list[RunItem] = [MessageOutputItem("a", "Hello, "), ToolCallItem("a", "t", "c1", "{}"),
             MessageOutputItem("a", "world"), MessageOutputItem("a", "", refusal="no")]
    h = ss.ItemHelpers
    assert h.text_message_outputs(items) == "Hello, world"
    assert h.text_message_output(items[0]) == "Hello, " and h.text_message_output(items[1]) == ""
    assert h.extract_last_text(items[2]) == "world" and h.extract_last_text(items[3]) is None
    assert h.extract_last_content(items[3]) == "no"
    assert h.input_to_new_input_list("hi") == [UserInputItem("hi")]
    listed = [UserInputItem("x")]
    assert h.input_to_new_input_list(listed) == listed and h.input_to_new_input_list(
        listed) is not listed
