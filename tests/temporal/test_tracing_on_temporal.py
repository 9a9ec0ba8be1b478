"""OpenTelemetry spans from the Temporal driver: the tree a user's backend shows, under
the span that started the run (names, kinds, parent links, gen_ai.* attributes); an
approval's pause and resumption; a replay of the history emits nothing."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.worker import Replayer

from graphs.support import support
from stepswitch.runtime import semconv as sc
from stepswitch.temporal import (
    Decision,
    RunInput,
    RunOutput,
    worker_for,
    workflow_for,
    workflow_name,
)
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call
from tests.temporal.drive import wait_for_interruptions

Tree = list[tuple[Any, ...]]


def tree(spans: list[ReadableSpan]) -> Tree:
    """The spans as a nested list: (name, kind, [events], [children]), by start time."""
    ids = {s.context.span_id for s in spans}
    children: dict[int | None, list[ReadableSpan]] = {}
    for s in spans:
        parent = s.parent.span_id if s.parent is not None else None
        assert parent is None or parent in ids, f"{s.name}: its parent was never exported"
        children.setdefault(parent, []).append(s)

    def node(s: ReadableSpan) -> tuple[Any, ...]:
        label: tuple[Any, ...] = (s.name, s.kind.name.lower())
        events = tuple(e.name.removeprefix("stepswitch.") for e in s.events)
        if events:
            label += (events,)
        kids = sorted(children.get(s.context.span_id, []), key=lambda c: c.start_time or 0)
        if kids:
            label += ([node(k) for k in kids],)
        return label

    return [node(r) for r in sorted(children.get(None, []), key=lambda c: c.start_time or 0)]


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


async def _run(
    address: str, provider: TracerProvider, script: list[ScriptStep], text: str,
    approve: bool = False,
) -> tuple[RunOutput, str, Any]:
    machine = support.compile()
    client = await Client.connect(address)
    queue = f"t-{uuid.uuid4().hex[:8]}"
    workflow_id = f"conversation-{uuid.uuid4().hex[:8]}"
    async with worker_for(client, machine, task_queue=queue, model=ScriptedModel(script),
                          tracer_provider=provider):
        with provider.get_tracer("app").start_as_current_span("handle request"):
            run_input = RunInput(text)  # carries the current span's traceparent
        handle = await client.start_workflow(
            workflow_name(machine), run_input, id=workflow_id, task_queue=queue,
            result_type=RunOutput,
        )
        if approve:
            [pending] = await wait_for_interruptions(handle)
            await handle.execute_update("decide", Decision(pending.call_id, True))
        output = await handle.result()
        history = await handle.fetch_history()
    return output, workflow_id, history


def test_a_durable_run_s_spans_form_the_in_process_tree_under_the_caller_s_span(
    dev_server: str,
) -> None:
    provider, exporter = _provider()
    script: list[ScriptStep] = [
        [function_call("lookup_order", {"order_id": 42})],
        [function_call("research", {"input": "refundable?"})],
        [assistant_message('{"summary": "within 30 days"}')],  # the researcher
        [assistant_message("Order 42 is refundable within 30 days.")],
    ]
    output, workflow_id, history = asyncio.run(
        _run(dev_server, provider, script, "is order 42 refundable?")
    )
    assert output.final_output.startswith("Order 42")
    spans = list(exporter.get_finished_spans())
    assert tree(spans) == [
        ("handle request", "internal", [
            ("invoke_workflow support", "internal", [
                ("invoke_agent triage", "internal", [
                    ("chat scripted", "client"),
                    ("execute_tool lookup_order", "internal"),
                    ("chat scripted", "client"),
                    ("execute_tool research", "internal", [
                        ("invoke_agent researcher", "internal", [
                            ("chat scripted", "client"),
                        ]),
                    ]),
                    ("chat scripted", "client"),
                ]),
            ]),
        ]),
    ]
    by_name = {s.name: s for s in spans}
    assert dict(by_name["invoke_workflow support"].attributes or {}) == {
        sc.OPERATION_NAME: "invoke_workflow", sc.WORKFLOW_NAME: "support",
        sc.CONVERSATION_ID: workflow_id, sc.AGENT_NAME: "triage",
    }
    assert dict(by_name["invoke_agent researcher"].attributes or {}) == {
        sc.OPERATION_NAME: "invoke_agent", sc.AGENT_NAME: "researcher",
        sc.CONVERSATION_ID: workflow_id,
    }
    chat = dict(by_name["chat scripted"].attributes or {})
    assert chat[sc.OPERATION_NAME] == "chat" and chat[sc.REQUEST_MODEL] == "scripted"
    assert chat[sc.CONVERSATION_ID] == workflow_id
    assert {sc.PROVIDER_NAME, sc.USAGE_INPUT_TOKENS, sc.USAGE_OUTPUT_TOKENS} <= chat.keys()
    lookup = dict(by_name["execute_tool lookup_order"].attributes or {})
    assert lookup[sc.TOOL_NAME] == "lookup_order" and lookup[sc.TOOL_TYPE] == "function"
    assert lookup[sc.TOOL_CALL_ID] == output.items[0]["call_id"]
    research = dict(by_name["execute_tool research"].attributes or {})
    assert research[sc.TOOL_TYPE] == "agent"
    assert len({s.context.trace_id for s in spans}) == 1

    # replaying the history (what a new worker does after a crash) emits nothing
    async def replay() -> None:
        await Replayer(workflows=[workflow_for(support.compile(), tracer_provider=provider)]
                       ).replay_workflow(history)

    asyncio.run(replay())
    assert len(exporter.get_finished_spans()) == len(spans)


def test_an_approval_ends_the_spans_and_the_resumption_continues_the_trace(
    dev_server: str,
) -> None:
    provider, exporter = _provider()
    script: list[ScriptStep] = [
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42})],
        [assistant_message("Refunded.")],
    ]
    output, _, _ = asyncio.run(_run(dev_server, provider, script, "refund 42", approve=True))
    assert output.final_output == "Refunded."
    assert tree(list(exporter.get_finished_spans())) == [
        ("handle request", "internal", [
            ("invoke_workflow support", "internal", [
                ("invoke_agent triage", "internal", ("handoff",), [
                    ("chat scripted", "client"),
                ]),
                ("invoke_agent refund", "internal", ("approval.requested",), [
                    ("chat scripted", "client"),
                ]),
                ("invoke_workflow support", "internal", ("run.resumed", "approval.decided"), [
                    ("invoke_agent refund", "internal", [
                        ("execute_tool process_refund", "internal"),
                        ("chat scripted", "client"),
                    ]),
                ]),
            ]),
        ]),
    ]


def test_a_flow_on_temporal_draws_the_in_process_span_tree(dev_server: str) -> None:
    """Agent nodes' invoke_agent spans (a move between nodes is no handoff) and each
    step's execute_step span, from its activity, under the workflow span."""
    import json

    from graphs.judge import JudgeState, judge
    from stepswitch.runtime.config import RunConfig

    def script() -> ScriptedModel:
        return ScriptedModel([
            [assistant_message("outline 1")],
            [assistant_message(json.dumps({"feedback": "more", "score": "needs_improvement"}))],
            [assistant_message("outline 2")],
            [assistant_message(json.dumps({"feedback": "ok", "score": "pass"}))],
        ])

    machine = judge.compile()
    provider, exporter = _provider()
    machine.run_sync("a story", model=script(), context=JudgeState(),
                     run_config=RunConfig(tracer_provider=provider))
    expected = tree(list(exporter.get_finished_spans()))

    async def go() -> Tree:
        client = await Client.connect(dev_server)
        provider, exporter = _provider()
        queue = f"t-{uuid.uuid4().hex[:8]}"
        async with worker_for(client, machine, task_queue=queue, model=script(),
                              tracer_provider=provider):
            await client.execute_workflow(
                workflow_name(machine), RunInput("a story"), id=f"judge-{uuid.uuid4().hex}",
                task_queue=queue, result_type=RunOutput)
        return tree(list(exporter.get_finished_spans()))

    seen = asyncio.run(go())
    assert seen == expected
    [(_, _, nodes)] = seen
    assert [n[0] for n in nodes] == [
        "execute_step take_request", "invoke_agent story_outline_generator",
        "execute_step keep_outline", "invoke_agent evaluator", "execute_step with_feedback",
        "invoke_agent story_outline_generator", "execute_step keep_outline",
        "invoke_agent evaluator", "execute_step final_outline"]




def test_a_resumed_flow_s_run_resumed_event_carries_the_turn_it_resumed_at(
    dev_server: str, tmp_path: Any, monkeypatch: Any,
) -> None:
    """As in-process: the flow's model calls so far (its nodes'), not the flow state's
    own current_turn, which is always 0."""
    from stepswitch.runtime.config import RunConfig
    from tests.temporal.flows import durable_flow, model

    monkeypatch.setenv("STEPSWITCH_LEDGER", str(tmp_path / "ledger.db"))
    monkeypatch.delenv("STEPSWITCH_GO", raising=False)
    machine = durable_flow.compile()

    def resumed_turns(spans: list[ReadableSpan]) -> list[Any]:
        return [dict(e.attributes or {}).get(sc.TURN) for s in spans for e in s.events
                if e.name == sc.EVENT_RESUMED]

    provider, exporter = _provider()
    config = RunConfig(tracer_provider=provider)
    paused = machine.run_sync("one lamp", model=model, run_config=config)
    state = paused.to_state()
    state.approve(paused.interruptions[0])
    machine.run_sync(state, model=model, run_config=config)
    in_process = resumed_turns(list(exporter.get_finished_spans()))
    assert in_process == [2]  # reserve's call, then charge's, which paused

    async def go() -> list[Any]:
        client = await Client.connect(dev_server)
        provider, exporter = _provider()
        queue = f"t-{uuid.uuid4().hex[:8]}"
        async with worker_for(client, machine, task_queue=queue, model=model,
                              tracer_provider=provider):
            handle = await client.start_workflow(
                workflow_name(machine), RunInput("one lamp"), id=f"flow-{uuid.uuid4().hex}",
                task_queue=queue, result_type=RunOutput)
            [pending] = await wait_for_interruptions(handle)
            await handle.execute_update("decide", Decision(pending.call_id, True))
            await handle.result()
        return resumed_turns(list(exporter.get_finished_spans()))

    assert asyncio.run(go()) == in_process
