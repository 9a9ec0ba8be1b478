"""OpenTelemetry spans from the loop: whole span trees, compared as a user's tracing
backend would show them (names, kinds, nesting, the step of each turn, events)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import stepswitch as ss
from codegen.support import MACHINE as GENERATED_SUPPORT
from graphs.support import support
from stepswitch.runtime import semconv as sc
from stepswitch.testing import ScriptedModel, ScriptStep, assistant_message, function_call

Tree = list[tuple[Any, ...]]

REFUND_SCRIPT: list[ScriptStep] = [
    [function_call("lookup_order", {"order_id": 42})],
    [function_call("transfer_to_refund", {})],
    [function_call("process_refund", {"order_id": 42})],
    [assistant_message("Refunded.")],
]


def traced_config(**kw: Any) -> tuple[InMemorySpanExporter, ss.RunConfig]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, ss.RunConfig(tracer_provider=provider, **kw)


def tree(exporter: InMemorySpanExporter) -> Tree:
    """The finished spans as a nested list: (name, kind, step, events, children)."""
    spans = exporter.get_finished_spans()
    ids = {s.context.span_id for s in spans}
    children: dict[int | None, list[ReadableSpan]] = {}
    for s in spans:
        parent = s.parent.span_id if s.parent is not None and s.parent.span_id in ids else None
        children.setdefault(parent, []).append(s)

    def node(s: ReadableSpan) -> tuple[Any, ...]:
        kids = sorted(children.get(s.context.span_id, []), key=lambda c: c.start_time or 0)
        attrs = s.attributes or {}
        label: tuple[Any, ...] = (s.name, s.kind.name.lower())
        if sc.STEP in attrs:
            label += (attrs[sc.STEP],)
        events = tuple(e.name.removeprefix("stepswitch.") for e in s.events
                       if e.name != "stepswitch.turn")
        if events:
            label += (events,)
        if kids:
            label += ([node(k) for k in kids],)
        return label

    roots = sorted(children.get(None, []), key=lambda c: c.start_time or 0)
    return [node(r) for r in roots]


def spans_named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


SUPPORT_PAUSED: Tree = [
    ("invoke_workflow support", "internal", [
        ("invoke_agent triage", "internal", ("handoff",), [
            ("chat scripted", "client", "RunAgain"),
            ("execute_tool lookup_order", "internal"),
            ("chat scripted", "client", "Handoff"),
        ]),
        ("invoke_agent refund", "internal", ("approval.requested",), [
            ("chat scripted", "client", "Interruption"),
        ]),
    ]),
]

SUPPORT_RESUMED: Tree = [
    ("invoke_workflow support", "internal", [
        *SUPPORT_PAUSED[0][2],
        ("invoke_workflow support", "internal", ("run.resumed", "approval.decided"), [
            ("invoke_agent refund", "internal", [
                ("execute_tool process_refund", "internal"),
                ("chat scripted", "client", "Final"),
            ]),
        ]),
    ]),
]


def run_support(machine: Any, surface: str) -> tuple[InMemorySpanExporter, Any]:
    exporter, config = traced_config()
    model = ScriptedModel(REFUND_SCRIPT)

    def go(inp: Any) -> Any:
        if surface == "sync":
            return machine.run_sync(inp, model=model, run_config=config)
        if surface == "async":
            return asyncio.run(machine.run(inp, model=model, run_config=config))

        async def streamed() -> Any:
            s = machine.run_streamed(inp, model=model, run_config=config)
            async for _ in s.stream_events():
                pass
            return s

        return asyncio.run(streamed())

    paused = go("refund order 42")
    assert tree(exporter) == SUPPORT_PAUSED
    state = ss.RunState.from_json(paused.to_state().to_json())
    state.approve(paused.interruptions[0])
    done = go(state)
    assert done.final_output == "Refunded."
    return exporter, done


@pytest.mark.parametrize("surface", ["sync", "async", "streamed"])
def test_support_pause_and_resume_is_one_trace_on_every_surface(surface: str) -> None:
    exporter, _ = run_support(support.compile(), surface)
    assert tree(exporter) == SUPPORT_RESUMED
    assert len({s.context.trace_id for s in exporter.get_finished_spans()}) == 1


def test_generated_runner_emits_the_same_spans() -> None:
    exporter, _ = run_support(GENERATED_SUPPORT, "sync")
    assert tree(exporter) == SUPPORT_RESUMED


def test_attributes_follow_the_genai_conventions() -> None:
    exporter, _ = run_support(support.compile(), "sync")
    chat = spans_named(exporter, "chat scripted")[0]
    assert chat.kind is SpanKind.CLIENT
    attrs = dict(chat.attributes or {})
    assert attrs[sc.OPERATION_NAME] == "chat"
    assert attrs[sc.PROVIDER_NAME] == "stepswitch.scripted"
    assert attrs[sc.REQUEST_MODEL] == "scripted"
    assert sc.USAGE_INPUT_TOKENS in attrs and sc.USAGE_OUTPUT_TOKENS in attrs
    tool = spans_named(exporter, "execute_tool process_refund")[0]
    tool_attrs = dict(tool.attributes or {})
    assert tool_attrs[sc.OPERATION_NAME] == "execute_tool"
    assert tool_attrs[sc.TOOL_NAME] == "process_refund"
    assert str(tool_attrs[sc.TOOL_CALL_ID]).startswith("call_")
    agent = spans_named(exporter, "invoke_agent refund")[0]
    assert dict(agent.attributes or {})[sc.OPERATION_NAME] == "invoke_agent"
    workflow = spans_named(exporter, "invoke_workflow support")[0]
    assert dict(workflow.attributes or {})[sc.WORKFLOW_NAME] == "support"
    # content is opt-in: nothing the user or the model said is on any span by default
    for span in exporter.get_finished_spans():
        keys = set(span.attributes or {})
        assert not keys & {sc.INPUT_MESSAGES, sc.OUTPUT_MESSAGES, sc.SYSTEM_INSTRUCTIONS,
                           sc.TOOL_CALL_ARGUMENTS, sc.TOOL_CALL_RESULT}


def test_each_chat_span_names_the_model_of_its_own_call() -> None:
    # the tracer reads a call's provider and model again whenever the model object or
    # the request's model name changes: a handoff to an agent with a model of its own
    # must not inherit the last agent's
    @ss.function_tool
    def refund_it(order_id: int) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    refund_model = ScriptedModel([[assistant_message("Refunded.")]], name="refund-model")
    refund = ss.Agent("refund", instructions="Refunds.", tools=[refund_it], model=refund_model)
    triage = ss.Agent("triage", instructions="Triage.", handoffs=[refund])
    machine = ss.Workflow("two_models", entry=triage, agents=[triage, refund]).compile()
    exporter, config = traced_config()
    triage_model = ScriptedModel([[function_call("transfer_to_refund", {})]], name="triage-m")
    machine.run_sync("refund 42", model=triage_model, run_config=config)
    chats = sorted((s for s in exporter.get_finished_spans() if s.name.startswith("chat ")),
                   key=lambda s: s.start_time or 0)
    assert [(s.name, dict(s.attributes or {})[sc.REQUEST_MODEL]) for s in chats] == [
        ("chat triage-m", "triage-m"), ("chat refund-model", "refund-model")]


def test_content_only_when_asked_for() -> None:
    exporter, config = traced_config(trace_content=True)
    model = ScriptedModel([[function_call("lookup_order", {"order_id": 7})],
                           [assistant_message("It shipped.")]])
    support.compile().run_sync("where is order 7", model=model, run_config=config)
    first = spans_named(exporter, "chat scripted")[0].attributes or {}
    assert "where is order 7" in str(first[sc.INPUT_MESSAGES])
    assert "lookup_order" in str(first[sc.OUTPUT_MESSAGES])
    assert "triage" in str(first[sc.SYSTEM_INSTRUCTIONS])
    tool = spans_named(exporter, "execute_tool lookup_order")[0].attributes or {}
    assert tool[sc.TOOL_CALL_ARGUMENTS] == '{"order_id": 7}'
    assert "order 7: shipped" in str(tool[sc.TOOL_CALL_RESULT])


def test_nested_agent_tool_run_is_a_child_of_its_tool_span() -> None:
    exporter, config = traced_config()
    model = ScriptedModel([
        [function_call("research", {"input": "is 42 late?"})],
        [assistant_message('{"summary": "on time"}')],
        [assistant_message("It is on time.")],
    ])
    result = support.compile().run_sync("is 42 late?", model=model, run_config=config)
    assert result.final_output == "It is on time."
    assert tree(exporter) == [
        ("invoke_workflow support", "internal", [
            ("invoke_agent triage", "internal", [
                ("chat scripted", "client", "RunAgain"),
                ("execute_tool research", "internal", [
                    ("invoke_agent researcher", "internal", [
                        ("chat scripted", "client", "Final"),
                    ]),
                ]),
                ("chat scripted", "client", "Final"),
            ]),
        ]),
    ]
    tool = spans_named(exporter, "execute_tool research")[0]
    assert dict(tool.attributes or {})[sc.TOOL_TYPE] == "agent"
    nested = spans_named(exporter, "invoke_agent researcher")[0]
    assert nested.parent is not None and nested.parent.span_id == tool.context.span_id


def _research_tool_attrs(content: bool) -> dict[str, Any]:
    exporter, config = traced_config(trace_content=content)
    model = ScriptedModel([
        [function_call("research", {"input": "is 42 late?"})],
        [assistant_message('{"summary": "on time"}')],
        [assistant_message("It is on time.")],
    ])
    support.compile().run_sync("is 42 late?", model=model, run_config=config)
    return dict(spans_named(exporter, "execute_tool research")[0].attributes or {})


def test_content_on_an_agent_tool_span_is_its_arguments_and_the_nested_final_output() -> None:
    tool = _research_tool_attrs(True)
    assert tool[sc.TOOL_CALL_ARGUMENTS] == '{"input": "is 42 late?"}'
    assert "on time" in str(tool[sc.TOOL_CALL_RESULT])
    # and without content, neither
    tool = _research_tool_attrs(False)
    assert sc.TOOL_CALL_ARGUMENTS not in tool and sc.TOOL_CALL_RESULT not in tool


def test_a_state_saved_untraced_resumes_into_a_trace_that_says_it_resumed() -> None:
    machine = support.compile()
    model = ScriptedModel(REFUND_SCRIPT)
    paused = machine.run_sync("refund order 42", model=model)
    state = ss.RunState.from_json(paused.to_state().to_json())
    state.approve(paused.interruptions[0])
    exporter, config = traced_config()
    machine.run_sync(state, model=model, run_config=config)
    root = spans_named(exporter, "invoke_workflow support")[0]
    assert root.parent is None  # a trace of its own: the first half had none
    events = [(e.name, dict(e.attributes or {})) for e in root.events]
    assert events[0] == ("stepswitch.run.resumed", {sc.TURN: 3})
    assert events[1][0] == "stepswitch.approval.decided"
    # the events come before the resumed agent's span opens
    agent = spans_named(exporter, "invoke_agent refund")[0]
    assert all(e.timestamp <= (agent.start_time or 0) for e in root.events)


@ss.function_tool
def flaky(order_id: int) -> str:
    """Fails."""
    raise RuntimeError(f"database down for {order_id}")


def test_failed_tool_span_has_the_error() -> None:
    agent = ss.Agent(name="a", instructions="a", tools=[flaky])
    wf = ss.Workflow(name="w", entry=agent, agents=[agent])
    exporter, config = traced_config()
    model = ScriptedModel([[function_call("flaky", {"order_id": 1})],
                           [assistant_message("sorry")]])
    assert wf.compile().run_sync("x", model=model, run_config=config).final_output == "sorry"
    span = spans_named(exporter, "execute_tool flaky")[0]
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})[sc.ERROR_TYPE] == "RuntimeError"
    assert tree(exporter) == [
        ("invoke_workflow w", "internal", [
            ("invoke_agent a", "internal", [
                ("chat scripted", "client", "RunAgain"),
                ("execute_tool flaky", "internal"),
                ("chat scripted", "client", "Final"),
            ]),
        ]),
    ]


@ss.input_guardrail
def no_refunds(ctx: ss.RunContext[Any], agent: Any, input: Any) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(output_info="refund", tripwire_triggered=True)


def test_guardrail_trip_is_an_event_and_an_error() -> None:
    agent = ss.Agent(name="a", instructions="a", input_guardrails=[no_refunds])
    wf = ss.Workflow(name="w", entry=agent, agents=[agent])
    exporter, config = traced_config()
    with pytest.raises(ss.InputGuardrailTripwireTriggered):
        wf.compile().run_sync("refund", model=ScriptedModel([]), run_config=config)
    assert tree(exporter) == [
        ("invoke_workflow w", "internal", [
            ("invoke_agent a", "internal", ("guardrail.tripwire",)),
        ]),
    ]
    root = spans_named(exporter, "invoke_workflow w")[0]
    assert root.status.status_code is StatusCode.ERROR
    assert (root.attributes or {})[sc.ERROR_TYPE] == "InputGuardrailTripwireTriggered"
    assert (root.attributes or {})[sc.AGENT_NAME] == "a"  # a failed run names its agent too


def test_max_turns_ends_the_last_turn_with_its_step() -> None:
    exporter, config = traced_config()
    model = ScriptedModel([[function_call("lookup_order", {"order_id": 1})]] * 2)
    with pytest.raises(ss.MaxTurnsExceeded):
        support.compile().run_sync("x", model=model, max_turns=2, run_config=config)
    steps = [(s.attributes or {}).get(sc.STEP) for s in spans_named(exporter, "chat scripted")]
    assert steps == ["RunAgain", "RunAgain"]
    root = spans_named(exporter, "invoke_workflow support")[0]
    assert (root.attributes or {})[sc.AGENT_NAME] == "triage"


class _Broken(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        raise OSError("collector unreachable")

    def shutdown(self) -> None:
        pass


class _RaisingProcessor(SimpleSpanProcessor):
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        raise RuntimeError("processor bug")


def test_a_broken_exporter_or_processor_never_fails_a_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for processor in (SimpleSpanProcessor(_Broken()), _RaisingProcessor(InMemorySpanExporter())):
        provider = TracerProvider()
        provider.add_span_processor(processor)
        config = ss.RunConfig(tracer_provider=provider)
        with caplog.at_level(logging.WARNING):
            result = support.compile().run_sync(
                "x", model=ScriptedModel(REFUND_SCRIPT), run_config=config
            )
        assert result.interruptions[0].name == "process_refund"


def test_untraced_run_keeps_no_trace_context() -> None:
    result = support.compile().run_sync("x", model=ScriptedModel(REFUND_SCRIPT))
    state = result.to_state()
    assert state.trace_context is None
    assert "trace_context" not in state.to_json()


def test_trace_context_survives_save_and_load() -> None:
    exporter, config = traced_config()
    result = support.compile().run_sync("x", model=ScriptedModel(REFUND_SCRIPT), run_config=config)
    text = result.to_state().to_json()
    loaded = ss.RunState.from_json(text)
    root = spans_named(exporter, "invoke_workflow support")[0]
    assert loaded.trace_context is not None
    assert loaded.trace_context.startswith(
        f"00-{root.context.trace_id:032x}-{root.context.span_id:016x}-"
    )


def test_a_flow_traces_each_node_and_fan_out_branch() -> None:
    from graphs.translation import translation

    exporter, config = traced_config()
    model = ScriptedModel([
        [assistant_message("Hola uno")],
        [assistant_message("Hola dos")],
        [assistant_message("Hola tres")],
        [assistant_message("Hola dos")],
    ])
    result = translation.compile().run_sync("hello", model=model, run_config=config)
    assert result.final_output == "Hola dos"
    assert tree(exporter) == [
        ("invoke_workflow translation", "internal", [
            ("execute_step three_attempts", "internal"),
            ("fan_out spanish_agent", "internal", [
                ("invoke_agent spanish_agent", "internal", [
                    ("chat scripted", "client", "Final"),
                ]),
                ("invoke_agent spanish_agent", "internal", [
                    ("chat scripted", "client", "Final"),
                ]),
                ("invoke_agent spanish_agent", "internal", [
                    ("chat scripted", "client", "Final"),
                ]),
            ]),
            ("execute_step list_translations", "internal"),
            ("invoke_agent translation_picker", "internal", [
                ("chat scripted", "client", "Final"),
            ]),
        ]),
    ]
    fan = spans_named(exporter, "fan_out spanish_agent")[0]
    assert dict(fan.attributes or {})[sc.FLOW_FAN_OUT_COUNT] == 3


def test_spans_a_tool_opens_nest_under_its_execute_tool_span() -> None:
    exporter, config = traced_config()
    provider = config.tracer_provider

    @ss.function_tool
    def audited(order_id: int) -> str:
        """Looks an order up, with a span of its own."""
        with provider.get_tracer("user").start_as_current_span("db query"):
            return f"order {order_id}"

    agent = ss.Agent(name="a", instructions="a", tools=[audited])
    wf = ss.Workflow(name="w", entry=agent, agents=[agent])
    model = ScriptedModel([[function_call("audited", {"order_id": 1})],
                           [assistant_message("ok")]])
    wf.compile().run_sync("x", model=model, run_config=config)
    tool = spans_named(exporter, "execute_tool audited")[0]
    query = spans_named(exporter, "db query")[0]
    assert query.parent is not None and query.parent.span_id == tool.context.span_id


def test_two_calls_of_one_turn_each_nest_their_spans_under_their_own_tool_span() -> None:
    """A lone call's span is made current around the loop's wait; calls that run at once
    (in tasks or threads of their own) each make theirs current where they run."""
    exporter, config = traced_config()
    provider = config.tracer_provider

    @ss.function_tool
    async def fetch(order_id: int) -> str:
        """Fetches an order, with a span of its own."""
        with provider.get_tracer("user").start_as_current_span(f"fetch {order_id}"):
            await asyncio.sleep(0.01)  # both calls are running now
            return f"order {order_id}"

    agent = ss.Agent(name="a", instructions="a", tools=[fetch])
    wf = ss.Workflow(name="w", entry=agent, agents=[agent])
    model = ScriptedModel([[function_call("fetch", {"order_id": 1}, call_id="c1"),
                            function_call("fetch", {"order_id": 2}, call_id="c2")],
                           [assistant_message("ok")]])
    wf.compile().run_sync("x", model=model, run_config=config)
    tools = {dict(s.attributes or {})[sc.TOOL_CALL_ID]: s
             for s in spans_named(exporter, "execute_tool fetch")}
    for call_id, order in (("c1", 1), ("c2", 2)):
        inner = spans_named(exporter, f"fetch {order}")[0]
        assert inner.parent is not None
        assert inner.parent.span_id == tools[call_id].context.span_id


def test_a_timed_out_tool_span_records_the_timeout() -> None:
    @ss.function_tool(timeout=0.05)
    async def stuck(order_id: int) -> str:
        """Never answers in time."""
        await asyncio.sleep(5)
        return "late"

    exporter, config = traced_config()
    agent = ss.Agent(name="a", instructions="a", tools=[stuck])
    wf = ss.Workflow(name="w", entry=agent, agents=[agent])
    model = ScriptedModel([[function_call("stuck", {"order_id": 1})],
                           [assistant_message("gave up")]])
    assert wf.compile().run_sync("x", model=model, run_config=config).final_output == "gave up"
    span = spans_named(exporter, "execute_tool stuck")[0]
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})[sc.ERROR_TYPE] == "ToolTimeoutError"


def test_a_resumed_flow_continues_its_trace() -> None:
    from tests.runtime.test_flow_runtime import story_flow

    exporter, config = traced_config()
    machine = story_flow()
    first = machine.run_sync("x", model=ScriptedModel([
        [assistant_message('{"text": "good one"}')],
        [function_call("publish", {"title": "Dune"})],
    ]), run_config=config)
    assert [i.name for i in first.interruptions] == ["publish"]
    state = ss.RunState.from_json(first.to_state().to_json())
    state.approve(first.interruptions[0])
    done = machine.run_sync(state, model=ScriptedModel([[assistant_message("published!")]]),
                            run_config=config)
    assert done.final_output == "published!"
    first_root, resumed_root = spans_named(exporter, "invoke_workflow story")
    # one trace: the resumed run's workflow span is a child of the first run's
    assert resumed_root.context.trace_id == first_root.context.trace_id
    assert resumed_root.parent is not None
    assert resumed_root.parent.span_id == first_root.context.span_id
    # as docs/tracing.md says: the resumed workflow span has the run.resumed event and
    # one approval.decided per decision (a flow's decisions sit in its node runs' states)
    assert tree(exporter) == [
        ("invoke_workflow story", "internal", [
            ("invoke_agent outline", "internal", [("chat scripted", "client", "Final")]),
            ("execute_step check", "internal"),
            ("invoke_agent story", "internal", ("approval.requested",), [
                ("chat scripted", "client", "Interruption"),
            ]),
            ("invoke_workflow story", "internal", ("run.resumed", "approval.decided"), [
                ("invoke_agent story", "internal", [
                    ("execute_tool publish", "internal"),
                    ("chat scripted", "client", "Final"),
                ]),
            ]),
        ]),
    ]
    # it resumed after the flow's two model calls (outline's, then story's that paused)
    (resumed_event,) = [e for e in resumed_root.events if e.name == sc.EVENT_RESUMED]
    assert dict(resumed_event.attributes or {}) == {sc.TURN: 2}
    decided = [dict(e.attributes or {}) for e in resumed_root.events
               if e.name == sc.EVENT_APPROVAL_DECIDED]
    assert decided == [{sc.TOOL_CALL_ID: first.interruptions[0].call_id,
                        "stepswitch.approved": True}]
    assert {s.context.trace_id for s in exporter.get_finished_spans()} == {
        first_root.context.trace_id}
    # and the state saved after the resume still names the first span
    assert done.to_state().trace_context == first.to_state().trace_context


def test_a_broken_exporters_logged_tracebacks_carry_no_run_content(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # SimpleSpanProcessor logs its exporter's error itself, with a traceback; the span
    # that ends the run must not be ended while the loop's StopIteration (whose value is
    # the whole RunResult) is being handled, or the traceback would chain it in
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Broken()))
    script: list[ScriptStep] = [[function_call("lookup_order", {"order_id": 42})],
                                [assistant_message("SECRET-ANSWER for the customer")]]
    with caplog.at_level(logging.DEBUG):
        result = support.compile().run_sync(
            "x", model=ScriptedModel(script), run_config=ss.RunConfig(tracer_provider=provider)
        )
    assert result.final_output == "SECRET-ANSWER for the customer"
    assert caplog.records  # the SDK did log the failures
    logged = "\n".join(
        r.getMessage() + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "")
        for r in caplog.records
    )
    assert "SECRET-ANSWER" not in logged
    assert "RunResult" not in logged


def test_a_flows_agent_nodes_end_their_turns_in_final_not_handoff() -> None:
    from tests.runtime.test_flow_runtime import story_flow

    exporter, config = traced_config()
    story_flow().run_sync("x", model=ScriptedModel([
        [assistant_message('{"text": "good one"}')],
        [assistant_message("Once upon a time")],
    ]), run_config=config)
    assert tree(exporter) == [
        ("invoke_workflow story", "internal", [
            ("invoke_agent outline", "internal", [("chat scripted", "client", "Final")]),
            ("execute_step check", "internal"),
            ("invoke_agent story", "internal", [("chat scripted", "client", "Final")]),
        ]),
    ]


def test_a_nested_agent_tools_decision_is_an_event_of_the_resumed_run() -> None:
    @ss.function_tool(needs_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    cleaner = ss.Agent(name="cleaner", instructions="Clean.", tools=[delete_file])
    boss = ss.Agent(name="boss", instructions="Boss.",
                    tools=[cleaner.as_tool("clean", "Clean up")])
    machine = ss.Workflow(name="nested", entry=boss).compile()
    exporter, config = traced_config()
    model = ScriptedModel([
        [function_call("clean", {"input": "tmp"})],
        [function_call("delete_file", {"path": "/tmp/x"})],
        [assistant_message("cleaned")],
        [assistant_message("all done")],
    ])
    first = machine.run_sync("go", model=model, run_config=config)
    state = ss.RunState.from_json(first.to_state().to_json())
    state.reject(first.interruptions[0], "not that one")
    assert machine.run_sync(state, model=model, run_config=config).final_output == "all done"
    resumed = spans_named(exporter, "invoke_workflow nested")[1]
    assert [(e.name, dict(e.attributes or {})) for e in resumed.events] == [
        (sc.EVENT_RESUMED, {sc.TURN: 1}),
        (sc.EVENT_APPROVAL_DECIDED, {sc.TOOL_CALL_ID: first.interruptions[0].call_id,
                                     "stepswitch.approved": False}),
    ]


def test_lone_surrogates_reach_the_span_file_and_every_exporter_as_utf8(tmp_path: Any) -> None:
    """``--input $'caf\\xe9'`` with content tracing: the message attribute held a lone
    surrogate, so the JSON-lines exporter raised while writing (the SDK logs and drops
    the spans) and any UTF-8 exporter (OTLP) would too."""
    import json

    from stepswitch.otel import file_provider, read_spans

    text = "caf\udce9 \ud800"
    path = tmp_path / "run.jsonl"
    provider = file_provider(path)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    config = ss.RunConfig(tracer_provider=provider, trace_content=True)
    support.compile().run_sync(text, model=ScriptedModel([[assistant_message("hi")]]),
                               run_config=config)
    provider.shutdown()
    chats = [s for s in memory.get_finished_spans() if s.name.startswith("chat")]
    attr = chats[0].attributes[sc.INPUT_MESSAGES]  # type: ignore[index]
    assert isinstance(attr, str)
    attr.encode("utf-8")  # what an OTLP exporter must do with it
    assert [m["content"] for m in json.loads(attr)] == [text]  # the very code points
    path.read_bytes().decode("utf-8")  # strict: the file is UTF-8
    spans = read_spans(path)
    assert {s.name for s in spans} == {s.name for s in memory.get_finished_spans()}
    (chat,) = [s for s in spans if s.name.startswith("chat")]
    assert chat.attributes[sc.INPUT_MESSAGES] == attr  # read back exactly


def test_an_error_about_a_non_utf8_file_name_is_described_in_utf8() -> None:
    """A tool failing on a file name read from disk: the status description is free
    text any exporter must be able to send (OTLP encodes it as UTF-8)."""
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")

    @ss.function_tool(failure_error_function=None)
    def read_it() -> str:
        """Read the file."""
        raise FileNotFoundError(f"no such file: {name}")

    agent = ss.Agent(name="reader", instructions="Read.", tools=[read_it])
    machine = ss.Workflow(name="reader", agents=[agent], entry=agent).compile()
    exporter, config = traced_config()
    with pytest.raises(ss.UserError):
        machine.run_sync("go", model=ScriptedModel([[function_call("read_it", {})]]),
                         run_config=config)
    described = [s.status.description for s in exporter.get_finished_spans()
                 if s.status.status_code is StatusCode.ERROR]
    assert described and all(d is not None for d in described)
    for d in described:
        assert d is not None
        d.encode("utf-8")
    assert any("no such file: caf\\udce9.txt" in (d or "") for d in described)
