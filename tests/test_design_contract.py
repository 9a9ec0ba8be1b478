"""DESIGN.md §3, the public contract, exercised exactly as the design card writes it.

If a name or signature here has to change, the design document changes first.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import openai
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.runtime.model import OutputItem
from stepswitch.testing import OpenAIServer, ScriptedModel, assistant_message, function_call


@ss.function_tool
def lookup_order(order_id: int) -> str:
    """Look up an order by id."""
    return f"order {order_id} ok"


REFUNDS: list[int] = []


@ss.function_tool(needs_approval=True)
def process_refund(order_id: int) -> str:
    """Refund an order."""
    REFUNDS.append(order_id)
    return f"refunded {order_id}"


class Findings(BaseModel):
    summary: str


researcher = ss.Agent(name="researcher", instructions="Research.", output_type=Findings)
refund = ss.Agent(
    name="refund",
    instructions="Refunds.",
    tools=[process_refund],
    handoffs=[ss.handoff("triage", max_uses=2)],
)
triage = ss.Agent(
    name="triage",
    instructions="Triage.",
    tools=[lookup_order, researcher.as_tool("research", "Research a question")],
    handoffs=[refund],
)
wf = ss.Workflow(
    name="support", entry=triage, agents=[triage, refund, researcher], max_turns=10
)


def script() -> list[list[OutputItem]]:
    return [
        [function_call("lookup_order", {"order_id": 42})],
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42})],
        [assistant_message("Refunded.")],
    ]


def test_check_draw_compile() -> None:
    report = wf.check()
    assert isinstance(report, ss.Report) and report.ok
    assert wf.to_mermaid().startswith("flowchart")
    assert wf.to_dot().startswith("digraph")
    assert isinstance(wf.compile(), ss.StateMachine)


def test_render_writes_an_svg(tmp_path: Path) -> None:
    path = tmp_path / "support.svg"
    ss.render(wf, "svg", path)
    assert path.read_text(encoding="utf-8").lstrip().startswith(("<?xml", "<svg", "<!--"))


def test_run_pause_save_load_resume_exactly_once() -> None:
    REFUNDS.clear()
    machine = wf.compile()
    model = ScriptedModel(script())
    result = machine.run_sync("I want a refund for order 42", model=model)
    assert result.final_output is None
    assert result.last_agent == "refund"
    assert [i.type for i in result.interruptions] == ["tool_approval_item"]
    assert REFUNDS == []

    state = result.to_state()
    state.approve(result.interruptions[0])
    reloaded = ss.RunState.from_json(state.to_json())
    resumed = machine.run_sync(reloaded, model=model)
    assert resumed.final_output == "Refunded."
    assert resumed.last_agent == "refund"
    assert REFUNDS == [42]
    # a resumed run's new_items holds the whole run
    assert [i.type for i in resumed.new_items][:4] == [
        "tool_call_item",
        "tool_call_output_item",
        "handoff_call_item",
        "handoff_output_item",
    ]
    model.assert_complete()
    assert len(model.calls) == 4
    assert model.calls[0].agent == "triage"
    assert set(model.calls[0].tools) == {"lookup_order", "research", "transfer_to_refund"}

    # resuming the same approved snapshot again in this process never re-runs the call
    again = machine.run_sync(ss.RunState.from_json(state.to_json()), model=ScriptedModel(
        [[assistant_message("Refunded.")]]
    ))
    assert again.final_output == "Refunded."


def test_approve_by_call_id_on_a_reloaded_state() -> None:
    machine = wf.compile()
    result = machine.run_sync("refund 7", model=ScriptedModel(script()[:3]))
    item = result.interruptions[0]
    state = ss.RunState.from_json(result.to_state().to_json())
    state.reject(item.call_id)
    resumed = machine.run_sync(state, model=ScriptedModel([[assistant_message("Not done.")]]))
    outputs = [i for i in resumed.new_items if i.type == "tool_call_output_item"]
    assert outputs[-1].call_id == item.call_id
    assert "not approved" in outputs[-1].output


def test_streamed_surface_matches_sync() -> None:
    machine = wf.compile()
    sync = machine.run_sync("hi", model=ScriptedModel([[assistant_message("hello")]]))

    async def go() -> tuple[list[str], ss.RunResultStreaming]:
        s = machine.run_streamed("hi", model=ScriptedModel([[assistant_message("hello")]]))
        kinds = [type(e).__name__ async for e in s.stream_events()]
        return kinds, s

    kinds, streamed = asyncio.run(go())
    assert "AgentUpdatedStreamEvent" in kinds and "RunItemStreamEvent" in kinds
    assert streamed.final_output == sync.final_output == "hello"
    assert streamed.new_items == sync.new_items


def test_codegen_gives_a_module_source() -> None:
    source = ss.codegen(wf.compile())
    assert "run_sync = MACHINE.run_sync" in source
    compile(source, "<generated>", "exec")


def test_openai_models_take_an_async_client() -> None:
    # both model classes take the user's own AsyncOpenAI client, and each speaks its API
    script = [[assistant_message("over responses")], [assistant_message("over chat")]]
    with OpenAIServer(script) as server:
        client = openai.AsyncOpenAI(base_url=server.url, api_key="test")
        responses = ss.models.OpenAIResponsesModel("gpt-test", client)
        chat = ss.models.OpenAIChatCompletionsModel("gpt-test", client)
        assert wf.compile().run_sync("hi", model=responses).final_output == "over responses"
        assert wf.compile().run_sync("hi", model=chat).final_output == "over chat"
        assert [r.api for r in server.model_requests()] == ["responses", "chat"]
