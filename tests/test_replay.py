"""Replay: record runs of the support workflow, change the workflow, and check that the
replay names the change (code and step); unchanged workflows replay clean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import stepswitch as ss
from graphs import support as ref
from stepswitch.review.replay import (
    REPLAY_CODES,
    ReplayError,
    read_recording,
    replay_code_doc,
    replay_run,
)
from stepswitch.review.trail_read import responses_items
from stepswitch.runtime.config import RunConfig
from stepswitch.testing import ScriptedModel, assistant_message, function_call, replay
from tests._paths import ROOT
from tests.cli.conftest import run_main, run_process
from tests.review._trial import trial


@ss.function_tool(name="lookup_order")
def lookup_order_text(order_id: str) -> str:
    """Look up an order by a code."""
    return f"order {order_id}"


@ss.function_tool
def find_order(order_id: int) -> str:
    """Look up an order by id."""
    return f"order {order_id}"


@ss.function_tool(name="lookup_order", needs_approval=True)
def lookup_order_gated(order_id: int) -> str:
    """Look up an order by id (needs approval)."""
    return f"order {order_id}"


@ss.input_guardrail
def no_orders(ctx: Any, agent: Any, input: Any) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered="order" in str(input))


def build(*, tool: Any = None, handoff: bool = True, max_turns: int = 10,
          guard: bool = False, output_type: Any = None, name: str = "lookup_order") -> Any:
    lookup = ref.lookup_order if tool is None else tool
    refund = ss.Agent(name="refund", instructions="Refunds.", tools=[ref.process_refund],
                      handoffs=[ss.handoff("triage", max_uses=2)], output_type=output_type)
    triage = ss.Agent(
        name="triage", instructions="Triage.",
        tools=[lookup] if name == "lookup_order" else [find_order],
        handoffs=[refund] if handoff else [],
        input_guardrails=[no_orders] if guard else [],
    )
    return ss.Workflow(name="support", entry=triage, agents=[triage, refund],
                       max_turns=max_turns).compile()


SCRIPT: list[Any] = [
    [function_call("lookup_order", {"order_id": 42})],
    [function_call("transfer_to_refund", {})],
    [assistant_message("Order 42 can be refunded.")],
]


@pytest.fixture(scope="module")
def recorded() -> Any:
    machine = build()
    return machine.run_sync("refund my order 42", model=ScriptedModel(SCRIPT))


def test_unchanged_workflow_replays_clean_in_every_format(recorded: Any) -> None:
    machine = build()
    assert replay(recorded.to_state(), machine) is None
    assert replay(recorded.to_input_list(), machine) is None
    assert replay(json.dumps(responses_items(recorded.to_input_list())), machine) is None
    # the reference workflow itself, as graphs/ has it
    assert replay(recorded.to_state(), ref.support) is None


@pytest.mark.parametrize(("change", "code", "turn", "where"), [
    ({"name": "find_order"}, "RP101", 1, "items[0]"),
    ({"tool": lookup_order_text}, "RP102", 1, "items[0]"),
    ({"handoff": False}, "RP103", 2, "items[2]"),
    ({"max_turns": 2}, "RP104", 2, "items[2]"),
    ({"tool": lookup_order_gated}, "RP105", 1, "items[0]"),
    ({"guard": True}, "RP106", 1, "items[0]"),
    ({"output_type": int}, "RP107", 3, "items[4]"),
])
def test_each_change_is_named_with_its_code_and_step(
    recorded: Any, change: dict[str, Any], code: str, turn: int, where: str
) -> None:
    found = replay(recorded.to_state(), build(**change))
    assert found is not None, change
    assert (found.code, found.turn, found.where) == (code, turn, where), str(found)


def test_lookup_order_text_schema_really_rejects(recorded: Any) -> None:
    # RP102 comes from the runtime's own validation: a str field refuses the number 42
    found = replay(recorded.to_state(), build(tool=lookup_order_text))
    assert found is not None and "order_id" in found.message


def test_recording_that_goes_further_or_stops_short(recorded: Any) -> None:
    items = responses_items(recorded.to_input_list())
    # the run stops after lookup with a message: today's run ends there too
    done = {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "done"}]}
    assert replay(json.dumps([*items[:3], done]), build()) is None
    # without that message, today's run asks for a turn the recording lacks
    found = replay(json.dumps(items[:3]), build())
    assert found is not None and found.code == "RP110"


def test_session_history_replays_from_its_current_agent(recorded: Any) -> None:
    # a second run of the conversation starts where the first left off (refund)
    history = list(recorded.to_input_list())
    machine = build()
    second = machine.run_sync(
        [*history, {"role": "user", "content": "thanks"}],
        model=ScriptedModel([[assistant_message("You're welcome.")]]),
        starting_agent="refund",
    )
    assert second.last_agent == "refund"
    assert replay(second.to_input_list(), machine) is None
    rec = read_recording(json.dumps(responses_items(second.to_input_list())))
    assert len(rec.segments) == 2


def test_record_option_writes_a_replayable_file(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    machine = build()
    result = machine.run_sync("refund my order 42", model=ScriptedModel(SCRIPT),
                              run_config=RunConfig(record=path))
    doc = json.loads(path.read_text())
    assert doc["format"] == "stepswitch.recording" and doc["start_agent"] == "triage"
    assert (len(doc["input"]), len(doc["items"])) == (len(result.input), len(result.new_items))
    assert replay(path, machine) is None
    assert replay(str(path), build(handoff=False)) is not None
    streamed_path = tmp_path / "streamed.json"

    async def streamed() -> None:
        run = machine.run_streamed("refund my order 42", model=ScriptedModel(SCRIPT),
                                   run_config=RunConfig(record=streamed_path))
        async for _ in run.stream_events():
            pass

    import asyncio

    asyncio.run(streamed())
    assert json.loads(streamed_path.read_text())["items"] == doc["items"]
    with pytest.raises(ss.UserError, match="record"):
        RunConfig(record=42)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["{", "[1]", '{"a": 1}', "[]", '[{"type": "nope"}]',
                                  "[" + "9" * 6000 + "]", "[" * 5000 + "]" * 5000])
def test_corrupt_recording_is_a_one_line_error(text: str) -> None:
    with pytest.raises(ReplayError) as info:
        read_recording(text)
    assert "\n" not in str(info.value)


def test_every_code_has_an_explain_page() -> None:
    for code in REPLAY_CODES:
        page = replay_code_doc(code)
        assert page.startswith(f"# {code} {REPLAY_CODES[code].name}")


def test_cli_exit_codes_and_formats(
    recorded: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)

    def cli(*args: str) -> tuple[int, str, str]:
        return run_main(args, capsys)

    trail = tmp_path / "run.json"
    trail.write_text(recorded.to_state().to_json())
    code, out, err = cli("replay", str(trail), "--workflow", "graphs/support.py:support")
    assert code == 0 and "same" in out, err
    changed = tmp_path / "changed_support.py"
    changed.write_text(
        "import stepswitch as ss\n"
        "from graphs.support import process_refund, lookup_order\n"
        "refund = ss.Agent(name='refund', instructions='r', tools=[process_refund])\n"
        "triage = ss.Agent(name='triage', instructions='t', tools=[lookup_order])\n"
        "wf = ss.Workflow(name='support', entry=triage, agents=[triage, refund])\n"
    )
    outs = {}
    for fmt in ("text", "json", "github"):
        code, out, err = cli("replay", str(trail), "--workflow", f"{changed}:wf",
                             "--format", fmt)
        assert code == 1 and "RP103" in out, err
        outs[fmt] = out
    doc = json.loads(outs["json"])
    assert doc["divergence"]["code"] == "RP103" and doc["divergence"]["turn"] == 2
    assert outs["github"].startswith("::error file=")
    assert outs["text"].startswith(f"{trail}:items[2]: RP103 handoff-gone: ")
    bad = tmp_path / "bad.json"
    bad.write_text("[{\"type\": 3}]")
    code, out, err = cli("replay", str(bad), "--workflow", "graphs/support.py:support")
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(bad) in err
    code, out, err = cli("replay", str(tmp_path / "missing.json"), "--workflow",
                         "graphs/support.py:support")
    assert code == 2 and "cannot read" in err
    code, out, _ = cli("explain", "RP103")
    assert code == 0 and "handoff-gone" in out
    code, out, _ = cli("explain")
    assert code == 0 and "RP112" in out
    # a corrupt trail through the real entry point: one line on stderr, no traceback
    done = run_process("replay", str(bad), "--workflow", "graphs/support.py:support")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_agent_tool_and_recorded_approval_replay(tmp_path: Path) -> None:
    machine = ref.support.compile()
    script = ScriptedModel([
        [function_call("research", {"input": "why late?"})],
        [assistant_message('{"summary": "the carrier"}')],  # the nested researcher
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42})],
        [assistant_message("Refunded.")],
    ])
    first = machine.run_sync("refund 42", model=script)
    assert first.interruptions  # process_refund waits for a human
    state = first.to_state()
    state.approve(first.interruptions[0])
    done = machine.run_sync(state, model=script)
    assert done.final_output == "Refunded."
    # the nested run answers with its recorded output; the approval is decided as then
    assert replay(done.to_state(), machine) is None
    # today the refund agent is gone from triage's handoffs
    found = replay(done.to_state(), build(handoff=False))
    assert found is not None and found.code == "RP101"  # research is gone too: first wins


CASE = ROOT / "examples" / "cases" / "support_refund.trail.json"


def test_committed_case_passes_and_a_broken_expectation_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stepswitch.review.cases import run_case

    assert run_case(CASE).ok
    doc = json.loads(CASE.read_text())
    doc["workflow"] = str(ROOT / "graphs" / "support.py") + ":support"
    doc["expect"]["tools_called"] = ["process_refund"]
    doc["expect"]["final_output"] = "^nothing$"
    bad = tmp_path / "bad.trail.json"
    bad.write_text(json.dumps(doc))
    result = run_case(bad)
    assert [f.split(":")[0] for f in result.failures] == ["tools_called", "final_output"]
    code, out, err = run_main(["test", str(CASE.parent), str(bad), "--junit",
                               str(tmp_path / "j.xml")], capsys)
    assert code == 1, err
    assert "1 passed, 1 failed" in out
    import xml.etree.ElementTree as ET

    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert [c.find("failure") is None for c in cases] == [True, False]
    from stepswitch.cli.main import main

    assert main(["test", str(CASE), str(bad), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["passed"], doc["failed"]) == (1, 1)
    assert doc["cases"][1]["failures"][0].startswith("tools_called")
    junk = tmp_path / "junk.trail.json"
    junk.write_text("{nope")
    code, _, err = run_main(["test", str(junk)], capsys)  # no traceback: run_main checks
    assert code == 2 and str(junk) in err
    # an expectation that cannot be compared is the case's own located error
    doc = json.loads(CASE.read_text())
    doc["workflow"] = str(ROOT / "graphs" / "support.py") + ":support"
    doc["expect"]["final_output"] = "refunded (in full"
    unbalanced = tmp_path / "unbalanced.trail.json"
    unbalanced.write_text(json.dumps(doc))
    code, out, err = run_main(["test", str(CASE), str(unbalanced)], capsys)
    assert code == 2, err
    assert out.strip().endswith("1 passed, 0 failed, 1 could not run (stderr says why)")
    assert f"{unbalanced}: expect.final_output: 'refunded (in full' is not a regular " \
           "expression" in err
    doc["expect"]["final_output"] = "ok"
    doc["expect"]["tools_called"] = "process_refund"
    unbalanced.write_text(json.dumps(doc))
    code, _, err = run_main(["test", str(unbalanced)], capsys)
    assert code == 2 and "expect.tools_called: expected a list of strings" in err, err
    # a case whose workflow no longer compiles names the case's field, not a --workflow
    # flag no one passed
    broken = tmp_path / "case_workflow_that_fails_check.py"
    broken.write_text("import stepswitch as ss\n"
                      "a = ss.Agent('a', 'x', handoffs=['nobody'])\n"
                      "wf = ss.Workflow('support', a, [a])\n")
    doc["workflow"] = f"{broken}:wf"
    doc["expect"]["tools_called"] = ["process_refund"]
    unbalanced.write_text(json.dumps(doc))
    code, _, err = run_main(["test", str(unbalanced)], capsys)
    assert code == 2, err
    assert f"{unbalanced}: its workflow {broken}:wf: does not compile: " in err, err
    assert "--workflow" not in err


def test_run_record_writes_a_case_the_pytest_plugin_collects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    case = tmp_path / "refund.trail.json"
    code, printed, err = run_main(["run", "graphs/support.py:support", "--input",
                             "Order 42 arrived damaged", "--model",
                             "scripted:examples/support_script.json", "--approve", "all",
                             "--record", str(case)], capsys)
    assert code == 0, err
    doc = json.loads(case.read_text())
    assert doc["expect"]["tools_called"] == ["lookup_order", "process_refund"]
    # the final output is pinned too: the expression that matches only the text it was
    import re

    pinned = doc["expect"]["final_output"]
    assert pinned.startswith("^") and re.search(pinned, printed.strip()), (pinned, printed)
    env = {"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"}
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert "1 passed" in ran.stdout, ran.stdout + ran.stderr
    doc["expect"]["last_agent"] = "triage"
    case.write_text(json.dumps(doc))
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert "1 failed" in ran.stdout and "last_agent" in ran.stdout, ran.stdout
    # a case that cannot run at all is a failure that names its file once
    del doc["workflow"]
    case.write_text(json.dumps(doc))
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert f'{case}: a case is an object with a "workflow" target string' in ran.stdout
    assert f"{case}: {case}" not in ran.stdout, ran.stdout


def test_review_page_replay_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import re as _re

    text = (ROOT / "docs" / "review.md").read_text()
    blocks = [b for lang, b in _re.findall(r"^```(\w*)\n(.*?)^```", text, _re.S | _re.M)
              if lang == "python" and "replay(recorded, machine)" in b]
    assert len(blocks) == 1
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], "<docs/review.md>", "exec"), {})


def _judge(needs_improvement: Any) -> Any:
    from graphs import judge as j

    return ss.Workflow("judge", j.take_request, flow=[
        ss.then(j.take_request, j.story_outline_generator),
        ss.then(j.story_outline_generator, j.keep_outline),
        ss.then(j.keep_outline, j.evaluator),
        ss.route(j.evaluator, on="score", max_uses=3, cases={
            "pass": j.final_outline, "needs_improvement": needs_improvement,
            "fail": j.with_feedback,
        }),
        ss.then(j.with_feedback, j.story_outline_generator),
        ss.then(j.final_outline, ss.END),
    ], context_type=j.JudgeState, max_turns=3)


def test_flow_replays_clean_and_a_changed_route_is_named() -> None:
    from graphs import judge as j

    machine = j.judge.compile()
    grade = '{{"feedback": "more", "score": "{}"}}'
    result = machine.run_sync("a heist", context=j.JudgeState(), model=ScriptedModel([
        [assistant_message("outline 1")], [assistant_message(grade.format("needs_improvement"))],
        [assistant_message("outline 2")], [assistant_message(grade.format("pass"))],
    ]))
    assert result.final_output == "outline 2"
    assert replay(result.to_state(), j.judge) is None  # context_type() built as the CLI does
    assert replay(result.to_input_list(), machine, context=j.JudgeState()) is None
    found = replay(result.to_state(), _judge(j.final_outline))
    assert found is not None
    assert (found.code, found.turn, found.where) == ("RP112", 3, "items[2]"), str(found)
    with pytest.raises(ReplayError, match="context"):
        replay(result.to_state(), machine)  # a compiled machine needs its context given


@pytest.mark.parametrize("name", ["translation", "research"])
def test_fan_out_flows_replay_clean_on_interpreter_and_generated_runner(name: str) -> None:
    import importlib

    from graphs import research, translation
    from stepswitch.runtime.model import OutputMessage
    from tests._items import text_of
    from tests.test_flow_graphs import PLAN, REPORT, ByAgent, _numbered

    wf = {"translation": translation.translation, "research": research.research}[name]
    rules = {
        "translation": {"spanish_agent": _numbered("hola"),
                        "translation_picker": lambda r: [OutputMessage("hola 2")]},
        "research": {
            "PlannerAgent": lambda r: [OutputMessage(json.dumps(PLAN))],
            "SearchAgent": lambda r: [OutputMessage(
                "summary of " + json.loads(text_of(r.input[0]))["query"])],
            "WriterAgent": lambda r: [OutputMessage(json.dumps(REPORT))],
        },
    }[name]
    runner = importlib.import_module(f"codegen.{name}").MACHINE
    for machine in (wf.compile(), runner):
        result = machine.run_sync("hello", model=ByAgent(rules))
        for other in (wf.compile(), runner):
            assert replay(result.to_state(), other) is None
            assert replay(result.to_input_list(), other) is None


def test_support_recorded_on_the_generated_runner_replays_on_both(recorded: Any) -> None:
    import importlib

    runner = importlib.import_module("codegen.support").MACHINE
    result = runner.run_sync("refund my order 42", model=ScriptedModel(SCRIPT))
    assert replay(result.to_state(), ref.support) is None
    assert replay(recorded.to_state(), runner) is None
    found = replay(result.to_state(), build(handoff=False))
    assert found is not None and found.code == "RP103"


def test_a_session_run_replays_from_the_session_current_agent(tmp_path: Path) -> None:
    from stepswitch.sessions import MemorySession

    machine = build()
    session = MemorySession("ann")
    machine.run_sync("refund my order 42", model=ScriptedModel(SCRIPT), session=session)
    path = tmp_path / "second.json"
    second = machine.run_sync("thanks", session=session, run_config=RunConfig(record=path),
                              model=ScriptedModel([[assistant_message("Glad to help.")]]))
    assert second.last_agent == "refund"
    doc = json.loads(path.read_text())
    assert doc["start_agent"] == "refund" and len(doc["items"]) == 1
    assert replay(path, machine) is None  # replayed at refund, not at the entry
    # refund's turn now made at triage (the recording's agent is gone): named at once
    alone = ss.Agent(name="triage", instructions="t")
    found = replay(path, ss.Workflow(name="support", entry=alone, agents=[alone]))
    assert found is not None and found.code == "RP108" and found.turn == 1
    # the whole conversation, as the session holds it, replays run by run
    import asyncio

    assert replay(asyncio.run(session.get_items()), machine) is None


def test_story_and_financial_flows_replay_clean_with_agent_tools_answered_as_recorded() -> None:
    from graphs import financial, story
    from stepswitch.runtime.model import OutputMessage
    from tests.test_flow_graphs import PLAN, ByAgent, _writer

    told = story.story.compile().run_sync("a robot", context=story.StoryState(),
                                          model=ScriptedModel([
        [assistant_message("A robot learns to paint on Mars.")],
        [assistant_message('{"good_quality": true, "is_scifi": true}')],
        [assistant_message("The red dust settled on the canvas...")],
    ]))
    assert replay(told.to_state(), story.story) is None
    model = ByAgent({
        "FinancialPlannerAgent": lambda r: [OutputMessage(json.dumps(PLAN))],
        "FinancialSearchAgent": lambda r: [OutputMessage("found")],
        "FinancialWriterAgent": _writer,
        "FundamentalsAnalystAgent": lambda r: [OutputMessage('{"summary": "growing"}')],
        "RiskAnalystAgent": lambda r: [OutputMessage('{"summary": "debt"}')],
        "VerificationAgent": lambda r: [OutputMessage('{"verified": true, "issues": ""}')],
    })
    run = financial.financial.compile().run_sync("acme", model=model,
                                                 context=financial.ReportState())
    outcome = replay_run(run.to_state(), financial.financial)
    assert outcome.divergence is None
    replayed = [i.output for i in outcome.last.new_items if i.type == "tool_call_output_item"]
    assert replayed == ["growing", "debt"]  # the analysts answer as recorded, no model call
    assert outcome.last.final_output == run.final_output


def test_approval_rejected_with_a_custom_message_replays_as_rejected(tmp_path: Path) -> None:
    machine = ref.support.compile()
    script = ScriptedModel([
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42})],
        [assistant_message("No refund, sorry.")],
    ])
    first = machine.run_sync("refund 42", model=script)
    state = first.to_state()
    state.reject(first.interruptions[0], message="manager said no")
    path = tmp_path / "rejected.json"
    done = machine.run_sync(state, model=script, run_config=RunConfig(record=path))
    call_id = first.interruptions[0].call_id
    assert json.loads(path.read_text())["decisions"] == {
        call_id: {"approved": False, "message": "manager said no"}}
    for recording in (done.to_state(), path):
        outcome = replay_run(recording, machine)
        assert outcome.divergence is None
        # the human's decision itself is replayed, not guessed from the output text
        decided = outcome.last.to_state().decisions[call_id]
        assert (decided.approved, decided.message) == (False, "manager said no")
        outputs = [i.output for i in outcome.last.new_items
                   if i.type == "tool_call_output_item"]
        assert outputs == ["manager said no"]
    bad = tmp_path / "bad.json"
    doc = json.loads(path.read_text())
    doc["decisions"] = {call_id: {"approved": "no"}}
    bad.write_text(json.dumps(doc))
    with pytest.raises(ReplayError, match="decisions"):
        replay(bad, machine)


@pytest.mark.parametrize("name", ["story", "judge", "financial"])
def test_story_judge_financial_replay_on_interpreter_and_generated_runner(name: str) -> None:
    import importlib

    from graphs import financial, judge, story
    from stepswitch.runtime.model import OutputMessage
    from tests.test_flow_graphs import PLAN, ByAgent, _writer

    grade = '{{"feedback": "more", "score": "{}"}}'

    def model() -> Any:
        if name == "story":
            return ScriptedModel([
                [assistant_message("A robot learns to paint on Mars.")],
                [assistant_message('{"good_quality": true, "is_scifi": true}')],
                [assistant_message("The red dust settled on the canvas...")],
            ])
        if name == "judge":
            return ScriptedModel([
                [assistant_message("outline 1")],
                [assistant_message(grade.format("needs_improvement"))],
                [assistant_message("outline 2")], [assistant_message(grade.format("pass"))],
            ])
        return ByAgent({
            "FinancialPlannerAgent": lambda r: [OutputMessage(json.dumps(PLAN))],
            "FinancialSearchAgent": lambda r: [OutputMessage("found")],
            "FinancialWriterAgent": _writer,
            "FundamentalsAnalystAgent": lambda r: [OutputMessage('{"summary": "growing"}')],
            "RiskAnalystAgent": lambda r: [OutputMessage('{"summary": "debt"}')],
            "VerificationAgent": lambda r: [OutputMessage('{"verified": true, "issues": ""}')],
        })

    wf, state_type = {"story": (story.story, story.StoryState),
                      "judge": (judge.judge, judge.JudgeState),
                      "financial": (financial.financial, financial.ReportState)}[name]
    runner = importlib.import_module(f"codegen.{name}").MACHINE
    for machine in (wf.compile(), runner):
        result = machine.run_sync("a robot", model=model(), context=state_type())
        for other in (wf.compile(), runner):
            for recording in (result.to_state(), result.to_input_list()):
                outcome = replay_run(recording, other, context=state_type())
                assert outcome.divergence is None, str(outcome.divergence)
                assert outcome.last.final_output == result.final_output
                if name == "financial":  # agent tools answer as recorded on both
                    told = [i.output for i in outcome.last.new_items
                            if i.type == "tool_call_output_item"]
                    assert told == ["growing", "debt"]
    if name == "judge":  # a run of a changed route diverges on the generated runner too
        changed = _judge(judge.final_outline).compile().run_sync(
            "a heist", context=judge.JudgeState(), model=ScriptedModel([
                [assistant_message("outline 1")],
                [assistant_message(grade.format("needs_improvement"))],
            ]))
        found = replay(changed.to_state(), runner, context=judge.JudgeState())
        assert found is not None and (found.code, found.turn) == ("RP110", 3), str(found)


def test_record_into_a_new_folder_makes_it_and_an_unwritable_one_is_refused_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--record cases/x.trail.json` with no cases/ yet makes the folder, as --state
    does; a place no file can be written is refused before the model is called (a
    traceback after the tools had run lost the run's output)."""
    monkeypatch.chdir(ROOT)
    argv = ["run", "graphs/support.py:support", "--input", "Order 42 arrived damaged",
            "--model", "scripted:examples/support_script.json", "--approve", "all"]
    case = tmp_path / "new" / "deeper" / "refund.trail.json"
    code, out, err = run_main([*argv, "--record", str(case)], capsys)
    assert code == 0, err
    assert json.loads(case.read_text())["expect"]["tools_called"] == [
        "lookup_order", "process_refund"]
    assert out.strip(), "the run's final output is printed"
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    code, _, err = run_main([*argv, "--record", str(blocker / "x.json")], capsys)
    assert code == 2 and "--record" in err and "Traceback" not in err, err
    assert "model call" not in err  # refused before the run


def test_replay_reads_what_run_record_writes_a_case_on_its_own_workflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run --record NAME.trail.json` writes a case: replay plays its trail, on the
    workflow it names unless --workflow says otherwise (a new user's trial was told the
    file was "an object")."""
    trial(tmp_path, capsys, monkeypatch)
    for argv in (["cases/hd.trail.json"], ["cases/hd.trail.json", "--workflow", "wf.py:helpdesk"],
                 ["rec.json", "--workflow", "wf.py:helpdesk"],
                 ["hd_st.json", "--workflow", "wf.py:helpdesk"]):
        code, out, err = run_main(["replay", *argv], capsys)
        assert (code, err) == (0, "") and out.endswith("replayed on wf.py:helpdesk: same\n")
    code, out, err = run_main(["replay", "cases/hd.trail.json", "--workflow", "wf.py:astool"],
                              capsys)
    # --workflow wins over the case's own; one of another name is refused, not replayed
    # into a divergence at its first turn
    assert code == 2 and out == "", out
    assert "the recorded run is of workflow 'helpdesk', not 'astool'" in err, err
    code, _, err = run_main(["replay", "hd_st.json", "--workflow", "wf.py:astool"], capsys)
    assert code == 2 and "the saved run is of workflow 'helpdesk', not 'astool'" in err, err
    code, out, err = run_main(["replay", "cases/hd.trail.json", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["same"] is True, err
    code, _, err = run_main(["replay", "rec.json"], capsys)  # a recording names no target
    assert code == 2 and "--workflow TARGET is needed" in err and err.count("\n") == 1


def test_replay_names_a_file_of_another_kind_and_the_command_that_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    trial(tmp_path, capsys, monkeypatch)
    Path("report.json").write_text(run_main(["trail", "rec.json", "--format", "json"],
                                            capsys)[1])
    expected = {"hd.json": "a scripted model's script, which `stepswitch run --model "
                           "scripted:FILE` reads",
                "hd.jsonl": "which `stepswitch trace FILE` reads",
                "report.json": "a `stepswitch trail --format json` report",
                "wf.py": "not JSON"}
    for file, says in expected.items():
        code, out, err = run_main(["replay", file, "--workflow", "wf.py:helpdesk"], capsys)
        assert (code, out) == (2, "") and err.count("\n") == 1, err
        assert f"{file}: " in err and says in err, err
    Path("odd.json").write_text('{"zeta": 1, "alpha": 2}')
    code, _, err = run_main(["replay", "odd.json", "--workflow", "wf.py:helpdesk"], capsys)
    assert code == 2 and "got an object with keys 'alpha', 'zeta'" in err
    # the two arguments the other way round: said so, with the command meant
    code, _, err = run_main(["replay", "wf.py:helpdesk", "--workflow", "rec.json"], capsys)
    assert code == 2 and "the two are swapped (stepswitch replay rec.json --workflow " \
        "wf.py:helpdesk)" in err, err
    # and trace, given a recorded run or a saved state, names what it is
    for file, says in (("rec.json", "it is a recorded run (`run --record`)"),
                       ("hd_st.json", "it is a saved run state")):
        code, _, err = run_main(["trace", file], capsys)
        assert code == 2 and f"{file}: not a trace (one span per line): {says}" in err, err


def _ungated_support(ran: list[int]) -> ss.Workflow:
    """The support workflow's triage and refund with the refund's approval dropped (a
    call of it is appended to ``ran``: a replay must never make one)."""
    @ss.function_tool
    def process_refund(order_id: int) -> str:
        """Refund an order."""
        ran.append(order_id)
        return "refunded"

    refund = ss.Agent(name="refund", instructions="Refunds.", tools=[process_refund])
    triage = ss.Agent(name="triage", instructions="Triage.", handoffs=[refund])
    return ss.Workflow(name="support", entry=triage, agents=[triage, refund])


def test_a_paused_state_replays_clean_on_its_unchanged_workflow() -> None:
    """A run saved while a call waits for approval stopped there; today's run stops at
    the same call, which is not a divergence. Once answered, it replays as before."""
    machine = ref.support.compile()
    script = ScriptedModel([
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42})],
        [assistant_message("Refunded.")],
    ])
    paused = machine.run_sync("refund 42", model=script)
    assert [i.name for i in paused.interruptions] == ["process_refund"]
    saved = ss.RunState.from_json(paused.to_state().to_json())
    assert replay(saved, machine) is None
    # the gate gone: today's run would make the refund unasked, and a replay runs no tool
    ran: list[int] = []
    ungated = _ungated_support(ran)
    found = replay(saved, ungated)
    assert found is not None and found.code == "RP113", found
    assert "waited for a human" in found.message and found.turn == 2
    assert ran == []
    # an item list cut before a call's output stops there too, without running it
    items = responses_items(paused.to_input_list())
    refund_call = paused.interruptions[0].call_id
    cut = [i for i in items
           if not (i.get("type") == "function_call_output" and i.get("call_id") == refund_call)]
    found = replay(json.dumps(cut), ungated)
    assert found is not None and found.code == "RP113" and ran == [], found


def test_an_output_type_that_rejects_the_recorded_output_is_one_line_per_field() -> None:
    """RP107 carries pydantic's report as one line: each field with what is wrong."""
    from pydantic import BaseModel

    class Verdict(BaseModel):
        amount: int
        reason: str

    recorded_run = build().run_sync("x", model=ScriptedModel([
        [function_call("lookup_order", {"order_id": 42})],
        [function_call("transfer_to_refund", {})],
        [assistant_message(json.dumps({"amount": "lots"}))],
    ]))
    found = replay(recorded_run.to_state(), build(output_type=Verdict))
    assert found is not None and found.code == "RP107"
    assert "\n" not in found.message and "errors.pydantic.dev" not in found.message
    assert found.message.startswith("the output type rejects the recorded output of agent "
                                    "'refund' as Verdict: "), found.message
    assert "as Verdict: amount: Input should be a valid integer (got 'lots')" in found.message
    assert "; reason: Field required" in found.message


def test_a_dropped_approval_is_a_divergence_not_the_same_run(tmp_path: Path) -> None:
    """The recorded run asked a human before the refund ran; today's workflow runs it
    with nobody asked. Everything else replays exactly, which read as "same"."""
    machine = ref.support.compile()
    script = ScriptedModel([
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 42})],
        [assistant_message("Refunded.")],
    ])
    first = machine.run_sync("refund 42", model=script)
    state = first.to_state()
    state.approve(first.interruptions[0])
    done = machine.run_sync(state, model=script)
    assert replay(done.to_state(), machine) is None  # the same workflow: the same run
    found = replay(done.to_state(), _ungated_support([]))
    assert found is not None and found.code == "RP114", found
    assert found.message == (f"call {first.interruptions[0].call_id!r} of 'process_refund' now "
                             "runs without a human's approval; the recorded run asked for one")
    assert found.turn == 2


class _Answer(BaseModel):
    text: str


class _SourcedAnswer(BaseModel):
    text: str
    source: str


def _desk(output_type: Any) -> ss.Workflow:
    kb = ss.Agent(name="kb", instructions="Know things.", output_type=output_type)
    desk = ss.Agent(name="desk", instructions="Help.", tools=[kb.as_tool("ask_kb", "Ask")])
    return ss.Workflow(name="desk", entry=desk, agents=[desk, kb])


def test_an_agent_tool_s_recorded_output_its_output_type_now_rejects_is_rp107() -> None:
    """The nested run is not run again (it answers as recorded), so its agent's stricter
    output type went unchecked and the replay said "same"."""
    run = _desk(_Answer).compile().run_sync("how long?", model=ScriptedModel([
        [function_call("ask_kb", {"input": "refund window"})],
        [assistant_message('{"text": "30 days"}')],
        [assistant_message("Thirty days.")],
    ]))
    assert replay(run.to_state(), _desk(_Answer)) is None
    found = replay(run.to_state(), _desk(_SourcedAnswer))
    assert found is not None and found.code == "RP107", found
    assert found.message.startswith("agent tool 'ask_kb': the output type of agent 'kb' "
                                    "rejects the recorded output: "), found.message
    assert "source" in found.message and found.turn == 1
