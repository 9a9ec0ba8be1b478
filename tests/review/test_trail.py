"""``stepswitch trail`` on a real recorded run of graphs/support.py, and the same run
corrupted in each way a trail drifts: every corruption is caught, by its code, at the
item it broke."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphs.support import support
from stepswitch.cli.main import main
from stepswitch.review import check_trail, read_trail, responses_items
from stepswitch.review.trail_codes import TRAIL_CODES, trail_code_doc
from stepswitch.runtime.state_json import _item
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests._paths import ROOT
from tests.cli.conftest import run_main
from tests.review._trial import trial

WORKFLOW = "graphs/support.py:support"


def _script() -> ScriptedModel:
    return ScriptedModel([
        [function_call("lookup_order", {"order_id": 42}), function_call("transfer_to_refund", {})],
        [assistant_message("checking"), function_call("process_refund", {"order_id": 42}),
         function_call("process_refund", {"order_id": 43})],
        [assistant_message("Refunded.")],
    ])


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    """The support workflow paused for two approvals, then resumed to the end."""
    machine = support.compile()
    model = _script()
    paused = machine.run_sync("refund order 42", model=model)
    state = json.loads(paused.to_state().to_json())
    resumed_state = paused.to_state()
    resumed_state.approve(paused.interruptions[0])
    resumed_state.reject(paused.interruptions[1])
    done = machine.run_sync(resumed_state, model=model)
    return {
        "machine": machine,
        "items": responses_items(done.to_input_list()),
        "records": [_item(i) for i in done.to_input_list()],
        "state": state,
    }


def _write(tmp_path: Path, doc: Any, name: str = "trail.json") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def _resign(state: dict[str, Any]) -> dict[str, Any]:
    """A state edited by a buggy writer rather than tampered with: its digest fits."""
    canonical = json.dumps(state["body"], sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)
    state["digest"] = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    return state


def _trail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_main(["trail", *argv], capsys)


def _findings(doc: Any, recorded: dict[str, Any], **options: Any) -> list[tuple[str, str]]:
    trail = read_trail(json.dumps(doc))
    report = check_trail(trail, recorded["machine"].ir, **options)
    return [(f.code, f.where) for f in report.findings]


# -- the clean run, in every form ----------------------------------------------------------


def test_the_recorded_run_is_clean_in_every_form(
    recorded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("items", "records", "state"):
        path = _write(tmp_path, recorded[name], f"{name}.json")
        code, out, _ = _trail([path, "--workflow", WORKFLOW], capsys)
        assert code == 0, out
        assert out.endswith("checked against graphs/support.py:support: clean\n")
    code, out, _ = _trail([_write(tmp_path, recorded["state"]), "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["ok"] and doc["source"] == "state" and doc["items"] == 10


def test_a_paused_runs_list_has_dangling_calls_that_its_state_keeps_pending(
    recorded: dict[str, Any]
) -> None:
    paused = copy.deepcopy(recorded["items"][:8])  # cut where the run paused
    found = _findings(paused, recorded)
    assert found == [("TR101", "[6]"), ("TR101", "[7]")]
    report = check_trail(read_trail(json.dumps(paused)))
    assert "check its saved RunState" in report.findings[0].message
    assert _findings(recorded["state"], recorded) == []


# -- pins, one corruption at a time --------------------------------------------------------


def _corrupt(recorded: dict[str, Any], how: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = copy.deepcopy(recorded["items"])
    if how == "TR101":
        del items[8]  # process_refund call_2_3's output
    elif how == "TR102":
        items[9]["call_id"] = "call_9_9"
    elif how == "TR103":
        items.insert(1, items.pop(3))  # lookup_order's output ahead of its call
    elif how == "TR104":
        items.insert(9, copy.deepcopy(items[8]))
    elif how == "TR105":
        items[7]["call_id"] = "call_1_1"  # reuses lookup_order's id
        items[9]["call_id"] = "call_1_1"
    elif how == "TR106":
        items[5]["id"] = "msg_1"
        items[10]["id"] = "msg_1"
    elif how == "TR201":
        items[1]["name"] = "delete_account"
    elif how == "TR202":
        items[4]["output"] = json.dumps({"assistant": "researcher"})
    return items


CORRUPTED = {
    "TR101": [("TR101", "[6]")],
    "TR102": [("TR101", "[7]"), ("TR102", "[9]")],
    "TR103": [("TR103", "[1]")],
    "TR104": [("TR104", "[9]")],
    "TR105": [("TR104", "[9]"), ("TR105", "[7]")],
    "TR106": [("TR106", "[10]")],
    "TR201": [("TR201", "[1]")],
    "TR202": [("TR201", "[6]"), ("TR201", "[7]"), ("TR202", "[4]")],
}


@pytest.mark.parametrize("code", sorted(CORRUPTED))
def test_each_corruption_of_the_list_is_caught_where_it_is(
    code: str, recorded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _corrupt(recorded, code)
    assert sorted(_findings(doc, recorded)) == sorted(CORRUPTED[code])
    exit_code, out, _ = _trail([_write(tmp_path, doc), "--workflow", WORKFLOW], capsys)
    assert exit_code == 1
    line = next(ln for ln in out.splitlines() if f": {code} " in ln)
    where = dict(CORRUPTED[code])[code]
    assert f"trail.json:{where}: {code} {TRAIL_CODES[code].name}: " in line


def test_pins_need_no_workflow(recorded: dict[str, Any]) -> None:
    report = check_trail(read_trail(json.dumps(_corrupt(recorded, "TR104"))))
    assert [f.code for f in report.findings] == ["TR104"] and not report.machine
    report = check_trail(read_trail(json.dumps(_corrupt(recorded, "TR201"))))
    assert report.ok  # a call of an unknown tool is a machine question


def test_unknown_tools_answered_by_the_run_config_are_allowed(recorded: dict[str, Any]) -> None:
    doc = _corrupt(recorded, "TR201")
    assert _findings(doc, recorded, unknown_tool="return_error") == []


# -- steps the machine does not allow --------------------------------------------------------


def _turns(*turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, calls in enumerate(turns):
        for i, (name, _) in enumerate(calls):
            call_id = f"c{n}_{i}"
            out.append({"type": "function_call", "call_id": call_id, "name": name,
                        "arguments": "{}"})
        for i, (_, output) in enumerate(calls):
            out.append({"type": "function_call_output", "call_id": f"c{n}_{i}",
                        "output": output})
    return out


def _hand(target: str) -> str:
    return json.dumps({"assistant": target})


def test_a_handoff_taken_past_its_budget(recorded: dict[str, Any]) -> None:
    # refund → triage has max_uses=2: the third time is TR203
    back_and_forth = [[("transfer_to_refund", _hand("refund"))],
                      [("transfer_to_triage", _hand("triage"))]] * 3
    doc = _turns(*back_and_forth)
    found = _findings(doc, recorded)
    assert found == [("TR203", "[12]")]
    # refused calls (an error output, as the machine writes) are allowed
    doc[12]["output"] = "Handoff transfer_to_triage is no longer available"
    assert _findings(doc[:13], recorded) == []


def test_more_turns_than_max_turns(recorded: dict[str, Any]) -> None:
    doc = _turns(*[[("lookup_order", "ok")]] * 11)  # support has max_turns=10
    assert _findings(doc, recorded) == [("TR204", "[21]")]
    assert _findings(doc, recorded, max_turns=11) == []
    # a new user message starts a new run of the conversation, with a new budget
    doc.insert(11, {"role": "user", "content": "and another thing"})
    assert _findings(doc, recorded) == []


def test_items_attributed_to_the_wrong_agent(recorded: dict[str, Any]) -> None:
    records = copy.deepcopy(recorded["records"])
    records[5]["agent"] = "triage"  # "checking" was said by refund, after the handoff
    assert _findings(records, recorded) == [("TR205", "[5]")]
    records[5]["agent"] = "ghost"
    assert _findings(records, recorded) == [("TR205", "[5]")]


# -- saved states ----------------------------------------------------------------------------


def _state_with(recorded: dict[str, Any], change: str) -> dict[str, Any]:
    state = copy.deepcopy(recorded["state"])
    body = state["body"]
    if change == "TR107":  # a pending approval counted as done
        body["items"].append({"type": "tool_call_output_item", "agent": "refund",
                              "call_id": "call_2_3", "output": "refunded", "name":
                              "process_refund", "is_error": False})
    elif change == "TR108":
        body["decisions"]["call_7"] = {"approved": True, "message": None}
    elif change == "TR109":
        body["pending"]["output"][1]["call_id"] = "call_2_9"
    elif change == "TR205":
        body["current_agent"] = "triage"
    elif change == "TR101":
        del body["items"][2]  # lookup_order's output, in history before the pending turn
    return _resign(state)


REFUSED = ("TR110", "body")  # the runtime's own check refuses to resume these
STATE_CORRUPTED = {
    "TR101": [("TR101", "items[0]"), REFUSED],
    "TR107": [("TR107", "items[9]")],  # a pending call counted as done: the runtime misses it
    "TR108": [("TR108", "decisions['call_7']"), REFUSED],
    "TR109": [("TR109", "pending.output"), REFUSED],
    "TR205": [("TR205", "current_agent"), REFUSED],
}


@pytest.mark.parametrize("code", sorted(STATE_CORRUPTED))
def test_each_corruption_of_a_saved_state_is_caught(
    code: str, recorded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _state_with(recorded, code)
    assert sorted(_findings(doc, recorded)) == sorted(STATE_CORRUPTED[code])
    exit_code, out, _ = _trail([_write(tmp_path, doc), "--workflow", WORKFLOW], capsys)
    assert exit_code == 1 and f": {code} " in out


def test_a_tampered_state_fails_closed(
    recorded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = copy.deepcopy(recorded["state"])
    doc["body"]["current_agent"] = "triage"  # edited without the digest
    code, out, err = _trail([_write(tmp_path, doc)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "digest does not match" in err


# -- bad input -------------------------------------------------------------------------------


BAD = {
    "not JSON": ('[{"type": "function_call", ', "not JSON"),
    "a number": ("42", "expected a saved run state, a `run --record` file (a recording or "
                 "a case) or a JSON list of items, got int"),
    "an object": ('{"items": []}', "got an object"),
    "not objects": ('[["role", "user"]]', "item [0]: expected an object, got list"),
    "unknown type": ('[{"type": "function_cal", "call_id": "a"}]',
                     "item [0]: unknown item type 'function_cal'"),
    "no call id": ('[{"type": "function_call", "name": "x", "arguments": "{}"}]',
                   "item [0]: function_call item's call_id is missing"),
    "no role": ('[{"content": "hi"}]', "neither a known item type nor a message with a role"),
    "nested deeply": ("[" * 5000 + "]" * 5000, "nested deeper than 200 levels"),
    "a huge integer": ("[" + "9" * 6000 + "]", "an integer has more than 4300 digits"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_trails_are_one_line_errors_exit_two(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = BAD[case]
    code, out, err = _trail([_write(tmp_path, text)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err
    assert str(tmp_path / "trail.json") in err


def test_a_fifo_a_device_and_a_directory_are_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # read, it would block forever: nobody writes it
    for path, what in ((str(fifo), "a FIFO"), ("/dev/zero", "a device or a socket"),
                       (str(tmp_path), "a directory")):
        code, out, err = _trail([path], capsys)
        assert code == 2 and out == ""
        assert err == f"stepswitch: error: {path}: not a regular file: it is {what}\n"


def test_a_trail_past_the_size_bound_is_refused(
    recorded: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from stepswitch import _files

    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 100)
    code, _, err = _trail([_write(tmp_path, recorded["items"])], capsys)
    assert code == 2 and "larger than" in err and err.count("\n") == 1


def test_model_chosen_ids_in_findings_are_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = "c\x1b]0;pwned\x07\x1b[2K"
    items = [{"role": "user", "content": "hi"},
             {"type": "function_call_output", "call_id": evil, "output": "x"}]
    code, out, _ = _trail([_write(tmp_path, items)], capsys)
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert "c\\x1b]0;pwned\\x07" in out


def test_missing_file_and_broken_workflow_are_exit_two(
    recorded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _trail([str(tmp_path / "nope.json")], capsys)
    assert code == 2 and "cannot read" in err and err.count("\n") == 1
    broken = tmp_path / "broken_wf.py"
    broken.write_text("raise RuntimeError('half-done')\n")
    code, _, err = _trail([_write(tmp_path, recorded["items"]), "--workflow", str(broken)],
                          capsys)
    assert code == 2 and "RuntimeError: half-done" in err
    code, _, err = _trail([_write(tmp_path, recorded["items"]), "--workflow", WORKFLOW,
                           "--agent", "ghost"], capsys)
    assert code == 2 and "has no agent of that name" in err


def test_every_trail_code_has_a_page_and_explain_prints_it(
    capsys: pytest.CaptureFixture[str]
) -> None:
    for code, entry in TRAIL_CODES.items():
        page = trail_code_doc(code)
        assert page.startswith(f"# {code} {entry.name}\n")
        for section in ("## What it does", "## Why it matters", "## Example", "## Fix"):
            assert section in page
    from tests.agents_api.test_trail_on_agents_api import EXERCISED as SESSION_ONLY

    exercised = set(CORRUPTED) | set(STATE_CORRUPTED) | {"TR110", "TR203", "TR204"}
    exercised |= SESSION_ONLY  # an Agents API session's own pins, broken there
    assert exercised == set(TRAIL_CODES)
    assert main(["explain", "TR105"]) == 0
    assert capsys.readouterr().out.startswith("# TR105 reused-call-id")


def test_trail_reads_stdin_as_a_subprocess(recorded: dict[str, Any]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stepswitch", "trail", "-", "--workflow", WORKFLOW],
        input=json.dumps(_corrupt(recorded, "TR104")), capture_output=True, text=True,
        cwd=ROOT,
    )
    assert done.returncode == 1, done.stderr
    assert "-:[9]: TR104 duplicate-output: a second output for call 'call_2_3'" in done.stdout


def test_docs_trail_is_up_to_date() -> None:
    from stepswitch.review.export_docs import pages

    present = {p.name: p.read_text("utf-8") for p in (ROOT / "docs" / "trail").glob("*.md")}
    assert present == pages(), "docs/trail is stale: run `make docs`"


SDK_SHAPED: list[dict[str, Any]] = [
    {"content": "refund order 42", "role": "user"},
    {"id": "rs_1", "type": "reasoning", "summary": []},
    {"arguments": "{\"order_id\":42}", "call_id": "call_a", "name": "lookup_order",
     "type": "function_call", "id": "fc_1", "status": "completed"},
    {"arguments": "{}", "call_id": "call_b", "name": "transfer_to_refund",
     "type": "function_call", "id": "fc_2", "status": "completed"},
    {"call_id": "call_a", "output": "order 42: shipped", "type": "function_call_output"},
    {"call_id": "call_b", "output": "{\"assistant\": \"refund\"}",
     "type": "function_call_output"},
    {"id": "msg_1", "content": [{"annotations": [], "text": "Refunding.", "type": "output_text"}],
     "role": "assistant", "status": "completed", "type": "message"},
    {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]},
    {"role": "assistant", "content": "You're welcome."},
]


def test_an_sdk_shaped_history_with_ids_reasoning_and_a_second_run(
    recorded: dict[str, Any]
) -> None:
    assert _findings(SDK_SHAPED, recorded) == []
    doubled = copy.deepcopy(SDK_SHAPED)
    doubled[3]["id"] = "fc_1"  # the SDK's item ids must be unique too
    assert _findings(doubled, recorded) == [("TR106", "[3]")]
    # the refund agent has no lookup_order: after the handoff, this call is not allowed
    wrong = copy.deepcopy(SDK_SHAPED)
    wrong.insert(7, {"type": "function_call", "call_id": "call_c", "name": "lookup_order",
                     "arguments": "{}"})
    wrong.insert(8, {"type": "function_call_output", "call_id": "call_c", "output": "x"})
    assert _findings(wrong, recorded) == [("TR201", "[7]")]


def test_a_paused_nested_run_is_checked_as_a_run_of_its_agent() -> None:
    import stepswitch as ss

    @ss.function_tool(needs_approval=True)
    def pay(amount: int) -> str:
        """Pay an amount."""
        return "paid"

    worker = ss.Agent("worker", "Work.", tools=[pay])
    boss = ss.Agent("boss", "Boss.", tools=[worker.as_tool("delegate", "Delegate")])
    machine = ss.Workflow(name="nested", entry=boss, agents=[boss, worker]).compile()
    model = ScriptedModel([[function_call("delegate", {"input": "pay 5"})],
                           [function_call("pay", {"amount": 5})]])
    state = json.loads(machine.run_sync("go", model=model).to_state().to_json())
    report = check_trail(read_trail(json.dumps(state)), machine.ir)
    assert report.ok and report.items == 6  # the nested run's items are checked too
    nested = state["body"]["nested"]["call_1_1"]
    nested["items"][0]["name"] = "delegate"  # the worker has no such tool
    nested["items"][1]["name"] = "delegate"
    nested["pending"]["output"][0]["name"] = "delegate"
    found = [(f.code, f.where)
             for f in check_trail(read_trail(json.dumps(_resign(state))), machine.ir).findings]
    assert ("TR201", "nested['call_1_1'].items[0]") in found


def test_a_state_saved_on_a_conversations_second_message_replays_from_where_it_started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stepswitch.sessions import MemorySession

    machine = support.compile()
    session = MemorySession("ann")
    first = ScriptedModel([[function_call("transfer_to_refund", {})],
                           [assistant_message("Which order?")]])
    machine.run_sync("refund please", model=first, session=session)
    second = ScriptedModel([[function_call("process_refund", {"order_id": 42})]])
    paused = machine.run_sync("order 42", model=second, session=session)
    assert paused.last_agent == "refund" and paused.interruptions
    path = _write(tmp_path, paused.to_state().to_json(), "second.json")
    code, out, _ = _trail([path, "--workflow", WORKFLOW], capsys)
    assert code == 0, out
    assert out.endswith("against graphs/support.py:support: clean\n")
    # told otherwise, the replay starts at the entry, where process_refund is no tool
    code, out, _ = _trail([path, "--workflow", WORKFLOW, "--agent", "triage"], capsys)
    assert code == 1


def test_trail_reads_the_recording_and_the_case_run_record_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run --record` writes a recording, or a case around one: trail checks its items
    (a new user's trial was told either file was "an object")."""
    trial(tmp_path, capsys, monkeypatch)
    for argv in (["rec.json"], ["cases/hd.trail.json"],
                 ["rec.json", "--workflow", "wf.py:helpdesk"]):
        code, out, err = _trail(argv, capsys)
        assert (code, err) == (0, ""), err
        assert out.startswith(f"{argv[0]}: recording, 4 items checked") and "clean" in out
    code, out, _ = _trail(["rec.json", "--format", "json"], capsys)
    assert json.loads(out)["source"] == "recording"
    doc = json.loads(Path("rec.json").read_text())
    doc["items"].insert(2, doc["items"][1])  # the lookup's output, twice
    Path("dup.json").write_text(json.dumps(doc))
    code, out, _ = _trail(["dup.json", "--workflow", "wf.py:helpdesk"], capsys)
    assert code == 1 and out.startswith("dup.json:items[2]: TR104 duplicate-output"), out
    del doc["items"]
    Path("no_items.json").write_text(json.dumps(doc))
    code, out, err = _trail(["no_items.json"], capsys)
    assert (code, out) == (2, "") and "a recording needs input and items lists" in err
    for file, says in (("hd.json", "`stepswitch run --model scripted:FILE` reads"),
                       ("hd.jsonl", "`stepswitch trace FILE` reads")):
        code, out, err = _trail([file], capsys)
        assert (code, out) == (2, "") and err.count("\n") == 1 and says in err, err


def test_a_run_of_another_workflow_is_one_line_error_not_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `run --resume` does: a saved state (or recording) of 'astool' checked against
    'helpdesk' says so, instead of a finding for each of its steps."""
    trial(tmp_path, capsys, monkeypatch)
    for file, what, of, against in (("as_st.json", "saved run", "astool", "helpdesk"),
                                    ("rec.json", "recorded run", "helpdesk", "astool"),
                                    ("cases/hd.trail.json", "recorded run", "helpdesk",
                                     "astool")):
        code, out, err = _trail(["--workflow", f"wf.py:{against}", file], capsys)
        assert (code, out) == (2, "") and err.count("\n") == 1, out + err
        assert (f"{file}: the {what} is of workflow {of!r}, not {against!r} "
                f"(wf.py:{against})") in err
        code, out, err = _trail(["--workflow", f"wf.py:{of}", file], capsys)
        assert code == 0 and "clean" in out, out + err
