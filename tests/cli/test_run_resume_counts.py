"""``stepswitch run --resume`` with a scripted transcript continues exactly where the paused
run stopped: the state counts every model call of the run (top level, nested agent-tool
runs, a flow's nodes), so an approved effect never runs twice and a flow's resumed node
gets the step after the last one used. ``stepswitch trail`` reads a paused flow's pending
call as pending."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import stepswitch as ss
from tests.cli.conftest import run_main

APP = textwrap.dedent('''
    import os
    from dataclasses import dataclass

    import stepswitch as ss

    def _record(what):
        with open(os.environ["LEDGER"], "a") as f:
            f.write(what + "\\n")

    @ss.function_tool(needs_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: The file.
        """
        _record(f"delete {path}")
        return f"deleted {path}"

    @ss.function_tool
    def look(path: str) -> str:
        """Look at a file.

        Args:
            path: The file.
        """
        return f"{path}: junk"

    cleaner = ss.Agent(name="cleaner", instructions="Clean.", tools=[delete_file])
    scout = ss.Agent(name="scout", instructions="Look.", tools=[look])
    boss = ss.Agent(name="boss", instructions="Boss.", tools=[
        cleaner.as_tool("clean", "Clean up"), scout.as_tool("survey", "Look around")])
    nested = ss.Workflow(name="nested", entry=boss)

    @dataclass
    class Notes:
        topic: str = ""

    @ss.step
    def remember(ctx: ss.RunContext[Notes], topic: str) -> str:
        """Keep the topic."""
        ctx.context.topic = topic
        return topic

    @ss.step
    def to_publisher(ctx: ss.RunContext[Notes], draft: str) -> str:
        """Hand the draft on."""
        return f"{ctx.context.topic}: {draft}"

    @ss.function_tool(needs_approval=True)
    def publish(title: str) -> str:
        """Publish.

        Args:
            title: The title.
        """
        _record(f"publish {title}")
        return f"published {title}"

    writer = ss.Agent(name="writer", instructions="Write.")
    publisher = ss.Agent(name="publisher", instructions="Publish it.", tools=[publish])
    essay = ss.Workflow("essay", remember, context_type=Notes, flow=[
        ss.then(remember, writer),
        ss.then(writer, to_publisher),
        ss.then(to_publisher, publisher),
        ss.then(publisher, ss.END),
    ])
''')


def call(name: str, call_id: str | None = None, **arguments: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function_call", "name": name, "arguments": arguments}
    if call_id is not None:
        out["call_id"] = call_id
    return out


def text(content: str) -> dict[str, Any]:
    return {"type": "message", "text": content}


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _app_file(tmp_path).write_text(APP)
    monkeypatch.setenv("LEDGER", str(tmp_path / "ledger.txt"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    return tmp_path


def _app_file(app: Path) -> Path:
    """A module name of its own per test: the CLI refuses two files of one name."""
    return app / f"{app.name.replace('-', '_')}_counts.py"


def ledger(app: Path) -> list[str]:
    path = app / "ledger.txt"
    return path.read_text().splitlines() if path.exists() else []


def stepswitch(app: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
               ) -> tuple[int, str, str]:
    return run_main(argv, capsys)


def run(app: Path, name: str, steps: list[list[dict[str, Any]]], *argv: str,
        capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    script = app / "script.json"
    script.write_text(json.dumps({"steps": [{"output": s} for s in steps]}))
    return stepswitch(app, ["run", f"{_app_file(app)}:{name}", "--model", f"scripted:{script}",
                            *argv], capsys)


def approvals(state: Path) -> list[str]:
    items = json.loads(state.read_text())["body"]["items"]
    return [i["call_id"] for i in items if i["type"] == "tool_approval_item"]


NESTED = [
    [call("clean", input="tmp")],
    [call("delete_file", path="/tmp/x")],
    [text("cleaned")],
    [text("all done")],
]


def test_a_nested_agent_tools_approved_call_runs_once_on_resume(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = app / "n.json"
    code, _, _ = run(app, "nested", NESTED, "--input", "go", "--state", str(state),
                     "--approve", "none", capsys=capsys)
    assert code == 0 and ledger(app) == []
    assert json.loads(state.read_text())["body"]["model_calls"] == 2
    code, out, err = run(app, "nested", NESTED, "--resume", str(state), "--approve", "all",
                         capsys=capsys)
    assert (code, out) == (0, "all done\n")
    # the resumed cleaner got step 3 ("cleaned"), not step 2 again (a second delete)
    assert err.count("approved delete_file") == 1
    assert ledger(app) == ["delete /tmp/x"]
    assert approvals(state) == ["call_1_0"]


def test_a_finished_nested_run_in_the_paused_turn_is_counted(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the scout's run finished before the cleaner's run paused: its two model calls are
    # in no paused run's turn count, and the transcript must skip them too
    steps = [
        [call("survey", input="look")],
        [call("look", path="/tmp/x")],
        [text("junk found")],
        [call("clean", input="tmp")],
        [call("delete_file", path="/tmp/x")],
        [text("cleaned")],
        [text("all done")],
    ]
    state = app / "n.json"
    run(app, "nested", steps, "--input", "go", "--state", str(state), "--approve", "none",
        capsys=capsys)
    assert json.loads(state.read_text())["body"]["model_calls"] == 5
    code, out, _ = run(app, "nested", steps, "--resume", str(state), "--approve", "all",
                       capsys=capsys)
    assert (code, out) == (0, "all done\n")
    assert ledger(app) == ["delete /tmp/x"]


ESSAY = [
    [text("Cats purr.")],
    [call("publish", title="Cats")],
    [text("Published.")],
]


def test_a_resumed_flow_continues_its_transcript_after_the_last_step(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = app / "e.json"
    code, _, _ = run(app, "essay", ESSAY, "--input", "cats", "--state", str(state),
                     "--approve", "none", capsys=capsys)
    assert code == 0
    body = json.loads(state.read_text())["body"]
    assert body["current_turn"] == 0 and body["model_calls"] == 2
    code, out, _ = run(app, "essay", ESSAY, "--resume", str(state), "--approve", "all",
                       capsys=capsys)
    # the publisher's answer is step 3, not step 1 (the writer's draft) again
    assert (code, out) == (0, "Published.\n")
    assert ledger(app) == ["publish Cats"]


def test_trail_reads_a_paused_flows_pending_call_as_pending(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = app / "e.json"
    run(app, "essay", ESSAY, "--input", "cats", "--state", str(state), "--approve", "none",
        capsys=capsys)
    code, out, _ = stepswitch(app, ["trail", str(state)], capsys)
    assert (code, out.split(": ", 1)[1]) == (
        0, "saved run state, 5 items checked (pins only: how calls and outputs pair up; "
        "--workflow also checks each step against the workflow): clean\n")
    code, out, _ = stepswitch(app, ["trail", str(state), "--workflow",
                                    f"{_app_file(app)}:essay"], capsys)
    assert code == 0 and out.endswith(": clean\n")


def test_trail_still_finds_a_call_without_output_in_a_flows_finished_nodes(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state_path = app / "e.json"
    run(app, "essay", ESSAY, "--input", "cats", "--state", str(state_path), "--approve",
        "none", capsys=capsys)
    state = ss.RunState.from_json(state_path.read_text())
    assert state.flow is not None
    # a call slipped into the finished nodes' items, with no output: still a finding
    stray = ss.RunState.from_json(state_path.read_text()).items[-2]  # the pending call
    assert stray.type == "tool_call_item"
    state.items.insert(0, stray)
    state.flow.done += 1
    doc = json.loads(state.to_json())
    (app / "bad.json").write_text(json.dumps(doc))
    code, out, _ = stepswitch(app, ["trail", str(app / "bad.json")], capsys)
    assert code == 1 and "TR101" in out
