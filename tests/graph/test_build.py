"""The spec: built from the DSL, frozen, JSON round-trips byte-stably, records sites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

import stepswitch as ss
from graphs import support as support_module
from stepswitch.graph import AGENT_TOOL_INPUT_SCHEMA


def test_support_spec_round_trips_through_json() -> None:
    spec = support_module.support.to_spec()
    text = support_module.support.to_json()
    assert ss.WorkflowSpec.model_validate_json(text) == spec


def test_json_is_byte_stable_across_builds() -> None:
    assert support_module.support.to_json() == support_module.support.to_json()


def test_spec_is_frozen() -> None:
    spec = support_module.support.to_spec()
    with pytest.raises(ValidationError):
        spec.name = "other"  # type: ignore[misc]


def test_declaration_sites_point_into_the_users_file() -> None:
    spec = support_module.support.to_spec()
    triage = spec.agent("triage")
    assert triage is not None
    with open(support_module.__file__, encoding="utf-8") as f:
        source = f.read().splitlines()
    assert triage.location.file == "graphs/support.py"
    assert source[triage.location.line - 1].startswith("triage = ss.Agent(")
    lookup = triage.tools[0]
    # a decorated function's site is its def line, not its decorator's
    assert source[lookup.location.line - 2] == "@ss.function_tool"
    assert source[lookup.location.line - 1].startswith("def lookup_order")
    refund = spec.agent("refund")
    assert refund is not None
    assert "ss.handoff(" in source[refund.handoffs[0].location.line - 1]


def test_tools_carry_import_paths_and_approval() -> None:
    spec = support_module.support.to_spec()
    refund = spec.agent("refund")
    assert refund is not None
    tool = refund.tools[0]
    assert tool.ref.path == "graphs.support:process_refund"
    assert tool.ref.importable
    assert tool.needs_approval == "always"
    built = support_module.support.build()
    assert built.bindings.resolve(tool.ref) is support_module.process_refund


def test_handoff_names_and_descriptions_follow_the_sdk() -> None:
    billing = ss.Agent(name="Billing Dept!", handoff_description="Bills.")
    refund = ss.Agent(name="Refund Agent")
    a = ss.Agent(name="a", handoffs=[billing, refund, ss.handoff(refund, tool_name="go")])
    spec = ss.Workflow(name="w", entry=a).to_spec()
    agent = spec.agent("a")
    assert agent is not None
    names = [h.tool_name for h in agent.handoffs]
    assert names == ["transfer_to_billing_dept_", "transfer_to_refund_agent", "go"]
    assert agent.handoffs[0].description == (
        "Handoff to the Billing Dept! agent to handle the request. Bills."
    )
    assert agent.handoffs[1].description.endswith("handle the request. ")


def test_agents_reached_by_object_are_included_even_if_not_listed() -> None:
    c = ss.Agent(name="c")
    b = ss.Agent(name="b", tools=[c.as_tool("ask_c", "")])
    a = ss.Agent(name="a", handoffs=[b])
    spec = ss.Workflow(name="w", entry=a).to_spec()
    assert [x.name for x in spec.agents] == ["a", "b", "c"]


def test_agent_tool_defaults_to_input_string_schema() -> None:
    r = ss.Agent(name="Order Expert")
    a = ss.Agent(name="a", tools=[r.as_tool()])
    spec = ss.Workflow(name="w", entry=a).to_spec()
    agent = spec.agent("a")
    assert agent is not None
    tool = agent.agent_tools[0]
    assert tool.tool_name == "order_expert"
    assert tool.parameters == AGENT_TOOL_INPUT_SCHEMA


class Reason(BaseModel):
    reason: str


def test_typed_parameters_and_output_types() -> None:
    r = ss.Agent(name="r", output_type=list[int])
    a = ss.Agent(
        name="a",
        tools=[r.as_tool("ask", "", parameters=Reason)],
        output_type=Reason,
    )
    spec = ss.Workflow(name="w", entry=a).to_spec()
    a_spec, r_spec = spec.agents
    assert a_spec.agent_tools[0].parameters["required"] == ["reason"]
    assert a_spec.output_type is not None and not a_spec.output_type.wrapped
    assert r_spec.output_type is not None and r_spec.output_type.wrapped
    assert r_spec.output_type.schema_["required"] == ["response"]
    assert r_spec.output_type.ref.display == "list[int]"


def test_open_output_type_is_recorded_not_raised() -> None:
    a = ss.Agent(name="a", output_type=dict[str, int])
    spec = ss.Workflow(name="w", entry=a).to_spec()
    out = spec.agents[0].output_type
    assert out is not None
    assert [p.rule for p in out.schema_problems] == ["open-object"]


def test_json_has_sorted_keys_and_no_python_objects() -> None:
    data = json.loads(support_module.support.to_json())
    assert list(data) == sorted(data)
    assert data["entry"] == "triage"


def test_a_multi_line_decorator_is_located_at_its_def(tmp_path: Path) -> None:
    """co_firstlineno is the first decorator's line on Python 3.11; the site is the def,
    and a function whose name begins another's is not mistaken for it."""
    import importlib.util

    from stepswitch._site import function_site

    path = tmp_path / "multi_line_decorated_site.py"
    path.write_text(
        "def deco(**kw):\n    return lambda f: f\n\n"
        "def look():\n    pass\n\n"
        "@deco(\n    name='x',\n)\ndef look_up_order(order_id: int) -> str:\n"
        "    return str(order_id)\n")
    spec = importlib.util.spec_from_file_location("multi_line_decorated_site", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert function_site(module.look_up_order).line == 10
    assert function_site(module.look).line == 4
