"""The differential corpus: each app here is plain Agents SDK code in the style of the
SDK's examples. On one script each, served over loopback HTTP to the real ``openai``
client (``OpenAIServer``):

- the SDK runs the app as written (``main()``, with the SDK's default OpenAI client
  pointed at the server);
- stepswitch reads it through the function TARGET ``app.py:main`` (stopped at its first
  run, no model called), compiles it, and runs it on the same surface the app used
  (``run`` / ``run_sync`` / ``run_streamed``), on the interpreter and on the generated
  runner, on a second server with the same script.

For every app stepswitch carries, the item traces, final outputs and last agents are
equal, every model request offers the same tools (``is_enabled`` gates), and what the
app's own hooks record is the same; an app with a feature stepswitch does not carry
gets a located SW610 naming it, instead of a check that passes."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import agents
import pytest
from agents import ItemHelpers
from agents.models import _openai_shared

import stepswitch as ss
from stepswitch.interop.sdk import from_sdk_run
from stepswitch.models import OpenAIResponsesModel, OpenAIServer
from stepswitch.models.script import call, message
from stepswitch.runtime.model import OutputResponsesItem
from stepswitch.targets.call import Reached, call_target
from tests.differential.twin import generated_twin
from tests.interop.test_sdk_differential import our_trace as differential_trace

HERE = Path(__file__).parent
Row = tuple[str, str, str | None, str | None, str | None]


def _hosted(kind: str, n: int, **fields: Any) -> OutputResponsesItem:
    return OutputResponsesItem({"type": kind, "id": f"{kind}_{n}", "status": "completed",
                                **fields})


SEARCH = _hosted("web_search_call", 1, action={"type": "search", "query": "fare rules"})
SEARCH_AGAIN = _hosted("web_search_call", 5, action={"type": "search", "query": "june fares"})
FILES = _hosted("file_search_call", 2, queries=["fare rules"], results=None)
TOOL_SEARCH = [
    _hosted("tool_search_call", 3, call_id="ts_1", arguments={"query": "report"},
            execution="server"),
    _hosted("tool_search_output", 4, call_id="ts_1", execution="server", tools=[]),
]

SCRIPTS: dict[str, list[list[Any]]] = {
    "airline_service": [
        [call("faq_lookup", {"question": "bag allowance"}, call_id="c1")],
        [message("One bag is included. Moving you now."),
         call("transfer_to_seat_booking_agent", {"reason": "seat change"}, call_id="c2")],
        [call("update_seat", {"confirmation_number": "AB12", "new_seat": "3A"}, call_id="c3")],
        [message("Done: you are in 3A.")],
    ],
    "translator": [
        [call("translate_to_spanish", {"input": "good morning"}, call_id="c1"),
         call("translate_to_french", {"input": "good morning"}, call_id="c2")],
        # the two agent tools run at once, on either side, and the server answers in the
        # order requests arrive: which nested run gets which step is a race, so both
        # steps say the same (distinct answers made the comparison flaky under load)
        [message("translated")],
        [message("translated")],
        [message("Spanish: translated. French: translated.")],
    ],
    "research_bot": [
        [SEARCH, FILES],  # hosted tools ran and nothing was said: the run goes on
        [call("save_note", {"text": "fares rise in June"}, call_id="c1")],
        [SEARCH_AGAIN, message("Fares rise in June; noted.")],
    ],
    "report_search": [
        [*TOOL_SEARCH,
         call("export_report.export_report", {"month": "may"}, call_id="c1"),
         call("crm.get_customer", {"customer_id": 7}, call_id="c2")],
        [message("May: 40 sales. Customer 7 is Ada.")],
    ],
    "memory_chat": [
        [call("track", {"order_id": 42}, call_id="c1")],
        [message("It left the warehouse.")],
        [message("In two days.")],
    ],
    "structured_triage": [
        [call("transfer_to_clerk", {}, call_id="c1")],
        [call("order_status", {"order_id": 9}, call_id="c2")],
        [call("issue_refund", {"order_id": 9}, call_id="c3")],
    ],
    "guarded_email": [
        # the first is turned away before it runs, the second's receipt after it ran
        [call("send_email", {"to": "bob", "body": "my password hunter2"}, call_id="c1"),
         call("send_email", {"to": "ann@example.org", "body": "hi"}, call_id="c2")],
        [message("I could not send either message.")],
    ],
    "gated_languages": [
        # only Spanish is offered (French and the concierge handoff are gated shut)
        [call("translate_to_spanish", {"input": "thank you"}, call_id="c1")],
        [message("gracias")],
        [message("Spanish: gracias.")],
    ],
    "agent_hooks": [
        [call("transfer_to_billing", {}, call_id="c1")],
        [call("open_ticket", {"topic": "double charge"}, call_id="c2")],
        [message("Ticket 17 is open.")],
    ],
}

REFUSED: dict[str, list[list[Any]]] = {
    # a deferred tool that no tool search loaded, called by its bare name: both refuse it
    "report_search": [[call("export_report", {"month": "may"}, call_id="c1")]],
}

NOT_CARRIED: dict[str, list[tuple[str, str]]] = {
    # app -> (SDK attribute named by SW610, the source line it is reported at)
    "lifecycle_hooks": [("Runner.run.hooks", 'result = await Runner.run(agent, "hi"')],
}


# -- the two sides ------------------------------------------------------------------------


def _module(app: str) -> Any:
    return importlib.import_module(f"tests.interop.corpus.{app}")


@pytest.fixture()
def sdk_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Point the SDK's default OpenAI client at a server set by the test."""
    holder: dict[str, Any] = {}

    def use(server: OpenAIServer) -> None:
        monkeypatch.setattr(_openai_shared, "_default_openai_client",
                            server.client(max_retries=0))
        monkeypatch.setattr(_openai_shared, "_use_responses_by_default", True)
        holder["server"] = server

    provider = agents.tracing.get_trace_provider()
    was = getattr(provider, "_disabled", False)
    agents.set_tracing_disabled(True)
    yield use
    agents.set_tracing_disabled(was)


def _offered(server: OpenAIServer) -> list[list[str]]:
    """Per model request, the names of the tools it offered (a hosted tool by its type)."""
    return [sorted(str(t.get("name") or t.get("type")) for t in (r.body or {}).get("tools") or ())
            for r in server.model_requests()]


def _log(app: str) -> list[str]:
    """What the app's own hooks recorded (apps without hooks record nothing)."""
    return list(getattr(_module(app), "LOG", ()))


def _run_sdk(app: str, script: Sequence[Any], use: Any) -> tuple[list[Any], list[list[str]]]:
    module = _module(app)
    with OpenAIServer(script) as server:
        use(server)
        value = module.main()
        if asyncio.iscoroutine(value):
            value = asyncio.run(value)
        server.assert_complete()
        offered = _offered(server)
    return (list(value) if isinstance(value, list) else [value]), offered


def _read(app: str) -> tuple[Reached, ss.Workflow]:
    module = _module(app)
    reached = call_target(module.main, f"tests/interop/corpus/{app}.py:main")
    return reached, from_sdk_run(reached.app, name=app, run=reached)


def _run_ours(app: str, script: Sequence[Any], machine: Any, reached: Reached,
              ) -> tuple[list[Any], list[list[str]]]:
    options = dict(reached.options)
    log = getattr(_module(app), "LOG", None)
    if log is not None:  # the app's main clears its log before its run: so do we
        log.clear()
    inputs = [reached.input]
    session = None
    if options.get("session") is not None:  # the app keeps a conversation: so do we
        session = ss.sessions.SQLiteSession("corpus")
        inputs = list(_module(app).QUESTIONS)
    surface = reached.how.rsplit(".", 1)[-1]
    results = []
    with OpenAIServer(script) as server:
        model = OpenAIResponsesModel("gpt-4.1", server.client(max_retries=0))
        for text in inputs:
            kwargs: dict[str, Any] = {"model": model}
            if options.get("context") is not None:  # what the app's is_enabled reads
                kwargs["context"] = options["context"]
            if session is not None:
                kwargs["session"] = session
            if surface == "run_sync":
                results.append(machine.run_sync(text, **kwargs))
            elif surface == "run":
                results.append(asyncio.run(machine.run(text, **kwargs)))
            else:
                streamed = machine.run_streamed(text, **kwargs)

                async def drain(s: Any = streamed) -> None:
                    async for _ in s.stream_events():
                        pass

                asyncio.run(drain())
                results.append(streamed)
        server.assert_complete()
        offered = _offered(server)
    return results, offered


# -- traces -------------------------------------------------------------------------------


def _args(raw: str) -> str:
    return json.dumps(json.loads(raw or "{}"), sort_keys=True)


def _qualified(raw: Any) -> str:
    namespace = getattr(raw, "namespace", None)
    return f"{namespace}.{raw.name}" if namespace else str(raw.name)


def _kind(raw: Any) -> str:
    return str(raw.get("type") if isinstance(raw, dict) else raw.type)


def sdk_trace(items: Sequence[Any]) -> list[Row]:
    rows: list[Row] = []
    for item in items:
        agent, raw = item.agent.name, item.raw_item
        if isinstance(item, agents.ReasoningItem):
            continue
        if isinstance(item, agents.MessageOutputItem):
            rows.append(("message", agent, None, None, ItemHelpers.text_message_output(item)))
        elif isinstance(item, agents.HandoffCallItem):
            rows.append(("handoff_call", agent, raw.name, _args(raw.arguments), raw.call_id))
        elif isinstance(item, agents.HandoffOutputItem):
            rows.append(("handoff_output", agent, item.target_agent.name, raw["output"],
                         raw["call_id"]))
        elif isinstance(item, agents.ToolCallItem) and _kind(raw) == "function_call":
            rows.append(("tool_call", agent, _qualified(raw), _args(raw.arguments),
                         raw.call_id))
        elif isinstance(item, agents.ToolCallItem | agents.ToolSearchCallItem
                        | agents.ToolSearchOutputItem):
            rows.append(("hosted", agent, _kind(raw), None, None))
        elif isinstance(item, agents.ToolCallOutputItem):
            rows.append(("tool_output", agent, None, str(raw["output"]), raw["call_id"]))
        else:
            raise AssertionError(f"unexpected SDK item {type(item).__name__}")
    return rows


def our_trace(items: Sequence[Any]) -> list[Row]:
    """The differential suite's rows, and a row per hosted tool's item (reasoning left
    out, as ``sdk_trace`` leaves it out)."""
    rows: list[Row] = []
    for item in items:
        if item.type != "responses_item":
            rows.extend(differential_trace([item]))
        elif item.item.get("type") != "reasoning":
            rows.append(("hosted", item.agent, item.item["type"], None, None))
    return rows


# -- the tests ----------------------------------------------------------------------------


@pytest.mark.parametrize("app", sorted(SCRIPTS))
def test_a_carried_app_runs_as_on_the_sdk(app: str, sdk_client: Any) -> None:
    script = SCRIPTS[app]
    theirs, their_tools = _run_sdk(app, script, sdk_client)
    their_log = _log(app)
    reached, wf = _read(app)
    report = wf.check()
    assert report.ok and "SW610" not in report.codes(), [
        d.format_line() for d in report.diagnostics]
    machine = wf.compile()
    twin, _ = generated_twin(machine)
    for runner in (machine, twin):
        ours, our_tools = _run_ours(app, script, runner, reached)
        assert our_tools == their_tools  # the same tools offered on every request
        assert _log(app) == their_log  # the app's hooks heard the same run
        assert len(ours) == len(theirs)
        for mine, sdk in zip(ours, theirs, strict=True):
            assert our_trace(mine.new_items) == sdk_trace(sdk.new_items)
            assert mine.final_output == sdk.final_output
            assert mine.last_agent == sdk.last_agent.name


@pytest.mark.parametrize("app", sorted(REFUSED))
def test_what_the_sdk_refuses_stepswitch_refuses_with_the_same_words(
    app: str, sdk_client: Any,
) -> None:
    with pytest.raises(agents.ModelBehaviorError) as sdk_error:
        _run_sdk(app, REFUSED[app], sdk_client)
    reached, wf = _read(app)
    with pytest.raises(ss.ModelBehaviorError) as our_error:
        _run_ours(app, REFUSED[app], wf.compile(), reached)
    assert str(our_error.value) == str(sdk_error.value)


def _line(app: str, text: str) -> int:
    for n, line in enumerate((HERE / f"{app}.py").read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(text)


@pytest.mark.parametrize("app", sorted(NOT_CARRIED))
def test_an_app_with_a_feature_not_carried_gets_its_warning(app: str) -> None:
    _, wf = _read(app)
    notes = [d for d in wf.check().diagnostics if d.code == "SW610"]
    found = {(d.message.split(" sets ", 1)[1].split(" (", 1)[0], d.location.line)
             for d in notes}
    for attribute, text in NOT_CARRIED[app]:
        assert (attribute, _line(app, text)) in found, [d.format_line() for d in notes]
    assert all(d.location.file.endswith(f"corpus/{app}.py") for d in notes)


def test_every_app_of_the_corpus_is_run_or_warned() -> None:
    apps = {p.stem for p in HERE.glob("*.py") if p.stem not in ("__init__", "test_corpus")}
    assert apps == set(SCRIPTS) | set(NOT_CARRIED)
