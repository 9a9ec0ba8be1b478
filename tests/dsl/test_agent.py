"""Declaration errors: misuse Python itself would reject raises UserError at once,
naming the field and the declaration's file:line. Graph properties do not raise."""

from __future__ import annotations

import re

import pytest

import stepswitch as ss


@ss.function_tool
def ping() -> str:
    """Ping."""
    return "pong"


def line_of(marker: str) -> int:
    with open(__file__, encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            if marker in text and "line_of(" not in text:
                return number
    raise AssertionError(marker)


def test_empty_agent_name() -> None:
    with pytest.raises(ss.UserError) as err:
        ss.Agent(name="")  # MARK-empty-name
    assert f"test_agent.py:{line_of('MARK-empty-name')}" in str(err.value)
    assert "name: expected a non-empty string" in str(err.value)


def test_tools_with_a_non_tool_names_the_index_and_value() -> None:
    with pytest.raises(ss.UserError) as err:
        ss.Agent(name="a", tools=[ping, 42])  # type: ignore[list-item]  # MARK-tools
    text = str(err.value)
    assert f"test_agent.py:{line_of('MARK-tools')}" in text
    assert "Agent('a')" in text
    assert re.search(r"tools\[1\]: expected a @function_tool.*got int 42", text)


def test_tools_must_be_a_list() -> None:
    with pytest.raises(ss.UserError, match="tools: expected a list, got FunctionTool"):
        ss.Agent(name="a", tools=ping)  # type: ignore[arg-type]


def test_every_bad_field_is_reported_at_once() -> None:
    with pytest.raises(ss.UserError) as err:
        ss.Agent(name="a", handoffs=[3.5], tool_use_behavior="sometimes")  # type: ignore[list-item,arg-type]
    assert "handoffs[0]" in str(err.value)
    assert "tool_use_behavior" in str(err.value)


def test_max_uses_zero_is_rejected_with_the_line() -> None:
    with pytest.raises(ss.UserError) as err:
        ss.handoff("triage", max_uses=0)  # MARK-max-uses
    assert f"test_agent.py:{line_of('MARK-max-uses')}" in str(err.value)
    assert "max_uses: expected a positive int" in str(err.value)


def test_input_type_without_on_handoff() -> None:
    with pytest.raises(ss.UserError, match="input_type needs an on_handoff"):
        ss.handoff("x", input_type=int)


def test_on_handoff_arity_is_checked() -> None:
    with pytest.raises(ss.UserError, match=r"on_handoff must take \(ctx\)"):
        ss.handoff("x", on_handoff=lambda a, b: None)


def test_an_instructions_function_must_take_ctx_and_agent() -> None:
    """It is called as fn(ctx, agent): a function of one parameter failed as a TypeError
    only when the agent's turn came."""
    def one(ctx: object) -> str:
        return "x"

    with pytest.raises(ss.UserError, match=r"Agent\('a'\) at .*test_agent.py:\d+: instructions: "
                       r"the function must take \(ctx, agent\), it takes 1 parameter"):
        ss.Agent(name="a", instructions=one)
    ss.Agent(name="a", instructions=lambda ctx, agent: "x")
    ss.Agent(name="a", instructions=lambda *args: "x")
    ss.Agent(name="a", instructions=lambda ctx, agent, extra=1: "x")


def test_model_must_be_a_name_or_model() -> None:
    with pytest.raises(ss.UserError, match="model: expected a model name or a model object"):
        ss.Agent(name="a", model=12)


def test_output_type_given_as_a_string_is_refused_at_the_declaration() -> None:
    with pytest.raises(ss.UserError) as caught:
        ss.Agent(name="a", output_type="Findings")
    message = str(caught.value)
    assert message.startswith("Agent('a') at tests/dsl/test_agent.py:")
    assert message.endswith("output_type: expected a type (a pydantic model, a dataclass, "
                            "list[str], ...), got the string 'Findings'; pass the class itself")


def test_workflow_field_errors() -> None:
    a = ss.Agent(name="a")
    with pytest.raises(ss.UserError, match="max_turns: expected a positive int"):
        ss.Workflow(name="w", entry=a, max_turns=0)
    with pytest.raises(ss.UserError, match=r"agents\[0\]: expected an Agent, got str 'a'"):
        ss.Workflow(name="w", entry=a, agents=["a"])  # type: ignore[list-item]
    with pytest.raises(ss.UserError, match="name: expected a non-empty string"):
        ss.Workflow(name="", entry=a)


def test_graph_problems_do_not_raise() -> None:
    a = ss.Agent(name="a", handoffs=["nobody", "a"], tools=[ss.agent_tool("ghost", "g", "")])
    wf = ss.Workflow(name="w", entry="missing", agents=[a, ss.Agent(name="a")])
    spec = wf.to_spec()
    assert spec.entry == "missing"
    assert [x.name for x in spec.agents] == ["a", "a"]


def test_agent_tool_errors() -> None:
    with pytest.raises(ss.UserError, match="max_turns: expected a positive int"):
        ss.Agent(name="r").as_tool("r", "d", max_turns=0)
    with pytest.raises(ss.UserError, match="target: expected a non-empty string"):
        ss.agent_tool("  ", "n", "d")


def test_guardrail_arity() -> None:
    with pytest.raises(ss.UserError, match=r"takes \(ctx, agent, input\)"):

        @ss.input_guardrail
        def g(ctx: object) -> ss.GuardrailFunctionOutput:
            return ss.GuardrailFunctionOutput(None, False)


def test_stop_at_tools_refuses_a_bare_string_that_would_split_into_letters() -> None:
    with pytest.raises(ss.UserError, match=r"StopAtTools at .*test_agent\.py:\d+: expected a list"):
        ss.StopAtTools("lookup_order")  # a str is a Sequence[str]: no type checker objects
    with pytest.raises(ss.UserError, match="expected a list of tool names"):
        ss.StopAtTools([1])  # type: ignore[list-item]
    assert ss.StopAtTools(name for name in ["a", "b"]).stop_at_tool_names == ("a", "b")  # type: ignore[arg-type]


def test_model_settings_must_be_a_model_settings_not_a_dict() -> None:
    with pytest.raises(ss.UserError, match=r"model_settings: expected ss\.ModelSettings\(\.\.\.\)"):
        ss.Agent(name="a", model_settings={"temperature": 0})  # type: ignore[arg-type]
