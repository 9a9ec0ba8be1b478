"""RunState JSON: round trip, and every way a document can be wrong fails closed."""

from __future__ import annotations

import json
from typing import Any

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests._items import output_of, text_of

SCRIPT = [
    [function_call("lookup_order", {"order_id": 42})],
    [function_call("transfer_to_refund", {})],
    [function_call("process_refund", {"order_id": 42})],
]


@pytest.fixture(scope="module")
def machine() -> ss.StateMachine:
    return support.compile()


@pytest.fixture
def paused(machine: ss.StateMachine) -> ss.RunResult:
    return machine.run_sync("refund 42", model=ScriptedModel(SCRIPT))


def test_round_trip_is_lossless(paused: ss.RunResult) -> None:
    state = paused.to_state()
    text = state.to_json()
    back = ss.RunState.from_json(text)
    assert back == state
    assert back.to_json() == text
    assert back.interruptions == paused.interruptions


def test_the_document_is_plain_versioned_json(paused: ss.RunResult) -> None:
    doc = json.loads(paused.to_state().to_json(indent=2))
    assert doc["format"] == "stepswitch.run_state" and doc["version"] == 1
    assert doc["digest"].startswith("sha256:")
    body = doc["body"]
    assert body["current_agent"] == "refund" and body["workflow"] == "support"
    assert body["pending"]["output"][0]["name"] == "process_refund"


def _edit(text: str, change: object) -> str:
    doc = json.loads(text)
    change(doc)  # type: ignore[operator]
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: t[: len(t) // 2], "not valid JSON"),
        (lambda t: _edit(t, lambda d: d.update(version=99)), "unknown run state version 99"),
        (lambda t: _edit(t, lambda d: d.update(format="x")), "not a stepswitch run state"),
        (lambda t: _edit(t, lambda d: d.pop("digest")), "has no digest"),
        (lambda t: _edit(t, lambda d: d["body"].update(current_turn=0)), "digest does not match"),
        (lambda t: t.replace("refund 42", "refund 43"), "digest does not match"),
    ],
)
def test_bad_documents_fail_closed(paused: ss.RunResult, mutate: object, message: str) -> None:
    text = paused.to_state().to_json()
    with pytest.raises(ss.StateError, match=message):
        ss.RunState.from_json(mutate(text))  # type: ignore[operator]


def _resign(doc: dict[str, object]) -> str:
    from stepswitch.runtime.state_json import _digest

    doc["digest"] = _digest(doc["body"], None)  # type: ignore[arg-type]
    return json.dumps(doc)


def test_a_consistent_document_naming_a_missing_agent_fails_on_resume(
    machine: ss.StateMachine, paused: ss.RunResult
) -> None:
    doc = json.loads(paused.to_state().to_json())
    doc["body"]["current_agent"] = "billing"
    with pytest.raises(ss.StateError, match="'billing'"):  # read, or at the latest resumed
        state = ss.RunState.from_json(_resign(doc))
        machine.run_sync(state, model=ScriptedModel([]))


def test_a_call_id_that_does_not_match_fails_on_resume(
    machine: ss.StateMachine, paused: ss.RunResult
) -> None:
    doc = json.loads(paused.to_state().to_json())
    doc["body"]["pending"]["output"][0]["call_id"] = "call_forged"
    with pytest.raises(ss.StateError, match="'call_forged'"):  # read, or at the latest resumed
        state = ss.RunState.from_json(_resign(doc))
        machine.run_sync(state, model=ScriptedModel([]))


def test_a_state_of_another_workflow_is_refused(paused: ss.RunResult) -> None:
    other = ss.Workflow("other", entry=ss.Agent("refund")).compile()
    with pytest.raises(ss.StateError, match="belongs to workflow 'support'"):
        other.run_sync(paused.to_state(), model=ScriptedModel([]))


def test_wrong_field_types_are_named(paused: ss.RunResult) -> None:
    doc = json.loads(paused.to_state().to_json())
    doc["body"]["items"][0]["arguments"] = 5
    with pytest.raises(ss.StateError, match=r"body.items\[0\].arguments has the wrong type"):
        ss.RunState.from_json(_resign(doc))
    doc = json.loads(paused.to_state().to_json())
    doc["body"]["items"][0]["type"] = "pickle"
    with pytest.raises(ss.StateError, match="unknown item type 'pickle'"):
        ss.RunState.from_json(_resign(doc))


def test_signed_states_need_the_key(paused: ss.RunResult) -> None:
    text = paused.to_state().to_json(key=b"secret")
    assert json.loads(text)["digest"].startswith("hmac-sha256:")
    assert ss.RunState.from_json(text, key=b"secret") == paused.to_state()
    with pytest.raises(ss.StateError, match="pass the key"):
        ss.RunState.from_json(text)
    with pytest.raises(ss.StateError, match="another key"):
        ss.RunState.from_json(text, key=b"guess")
    doc = json.loads(text)
    doc["body"]["current_turn"] = 1
    with pytest.raises(ss.StateError, match="digest does not match"):
        ss.RunState.from_json(_resign(doc), key=b"secret")


def test_approve_an_unknown_call_id(paused: ss.RunResult) -> None:
    state = paused.to_state()
    with pytest.raises(ss.StateError, match="no pending approval has call id 'nope'"):
        state.approve("nope")


@pytest.mark.parametrize("wrong", [42, None, {"call_id": "x"}])
def test_approve_or_reject_something_that_is_no_item_or_call_id(
    paused: ss.RunResult, wrong: object
) -> None:
    state = paused.to_state()
    for decide in (state.approve, state.reject):
        with pytest.raises(ss.UserError, match=r"take an interruption item .* or its call id"):
            decide(wrong)  # type: ignore[arg-type]
    assert state.interruptions == paused.interruptions  # nothing was decided


def test_decisions_survive_the_round_trip(
    machine: ss.StateMachine, paused: ss.RunResult
) -> None:
    state = paused.to_state()
    state.reject(paused.interruptions[0], message="no")
    back = ss.RunState.from_json(state.to_json())
    assert back.interruptions == []
    done = machine.run_sync(back, model=ScriptedModel([[assistant_message("ok")]]))
    assert output_of(done.new_items[-2]) == "no"


def test_resuming_a_state_marks_it_only_and_a_copy_is_a_run_of_its_own(
    machine: ss.StateMachine, paused: ss.RunResult
) -> None:
    state = paused.to_state()
    state.approve(paused.interruptions[0])
    before = json.loads(state.to_json())["body"]
    copy = state.copy()
    one = machine.run_sync(state, model=ScriptedModel([[assistant_message("1")]]))
    # the run took it (a second resume is refused: tests/runtime/test_resume_once.py);
    # nothing else of it changed
    assert json.loads(state.to_json())["body"] == {**before, "resumed": True}
    two = machine.run_sync(copy, model=ScriptedModel([[assistant_message("2")]]))
    assert (one.final_output, two.final_output) == ("1", "2")


def test_the_state_counts_the_runs_model_calls(paused: ss.RunResult) -> None:
    state = paused.to_state()
    assert state.model_calls == 3 and state.calls_made == 3
    assert json.loads(state.to_json())["body"]["model_calls"] == 3


def test_a_state_saved_before_the_count_was_kept_still_loads_and_resumes(
    machine: ss.StateMachine, paused: ss.RunResult
) -> None:
    doc = json.loads(paused.to_state().to_json())
    del doc["body"]["model_calls"]
    state = ss.RunState.from_json(_resign(doc))
    assert state.model_calls is None
    assert state.calls_made == doc["body"]["current_turn"] == 3  # the turns it records
    state.approve(state.interruptions[0])
    done = machine.run_sync(state, model=ScriptedModel([[assistant_message("Refunded.")]]))
    assert done.final_output == "Refunded."
    assert done.to_state().model_calls == 4  # counted on from the estimate


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("3", r"body.model_calls has the wrong type"),
        (True, r"body.model_calls has the wrong type"),
        (None, r"body.model_calls has the wrong type"),
        (-1, r"body.model_calls -1 is less than its .current_turn 3"),
        (2, r"body.model_calls 2 is less than its .current_turn 3"),
    ],
)
def test_an_edited_model_call_count_fails_closed(
    paused: ss.RunResult, value: object, message: str
) -> None:
    doc = json.loads(paused.to_state().to_json())
    doc["body"]["model_calls"] = value
    with pytest.raises(ss.StateError, match=message):
        ss.RunState.from_json(_resign(doc))


@ss.function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def test_a_count_below_a_paused_nested_runs_fails_closed() -> None:
    cleaner = ss.Agent(name="cleaner", instructions="Clean.", tools=[delete_file])
    boss = ss.Agent(name="boss", instructions="Boss.",
                    tools=[cleaner.as_tool("clean", "Clean up")])
    result = ss.Workflow(name="nested", entry=boss).compile().run_sync("go", model=ScriptedModel([
        [function_call("clean", {"input": "tmp"})],
        [function_call("delete_file", {"path": "/tmp/x"})],
    ]))
    doc = json.loads(result.to_state().to_json())
    body = doc["body"]
    [(key, child)] = body["nested"].items()
    assert (body["current_turn"], child["current_turn"]) == (1, 1)
    assert body["model_calls"] == child["model_calls"] == 2
    body["model_calls"] = 1  # covers its own turn, not the nested run's
    with pytest.raises(ss.StateError, match=rf"body.model_calls 1 is less than the 2 of its "
                                            rf"paused run '{key}'"):
        ss.RunState.from_json(_resign(doc))


SURROGATE = "caf\udce9 refund 42 \ud800"  # --input $'caf\xe9 …' and a lone high one


@pytest.mark.parametrize("key", [None, b"k"])
def test_lone_surrogates_are_saved_as_escapes_and_read_back_exactly(
    machine: ss.StateMachine, key: bytes | None
) -> None:
    paused = machine.run_sync(SURROGATE, model=ScriptedModel(SCRIPT))
    state = paused.to_state()
    state.reject(state.interruptions[0], message="nein \udcff")
    text = state.to_json(key=key, indent=2)
    text.encode("utf-8")  # was UnicodeEncodeError: the run could not be saved
    assert "caf\\udce9" in text and "\\ud800" in text and "nein \\udcff" in text
    back = ss.RunState.from_json(text.encode("utf-8"), key=key)
    assert back == state
    assert text_of(back.input[0]) == SURROGATE
    assert back.to_json(key=key, indent=2) == text
    # and the digest of text without surrogates is what it always was
    plain = machine.run_sync("refund 42", model=ScriptedModel(SCRIPT)).to_state().to_json()
    doc = json.loads(plain)
    import hashlib

    canonical = json.dumps(doc["body"], sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False).encode("utf-8")
    assert doc["digest"] == "sha256:" + hashlib.sha256(canonical).hexdigest()


def test_a_surrogate_pair_as_two_code_points_is_refused_not_changed(
    machine: ss.StateMachine,
) -> None:
    """JSON would read ``\\ud83d\\ude00`` back as one character: refused, with the fix."""
    paused = machine.run_sync("hi \ud83d\ude00", model=ScriptedModel(SCRIPT))
    with pytest.raises(ss.StateError, match=r"the run cannot be saved: text holds the "
                       r"surrogate pair U\+D83D U\+DE00 as two code points.*U\+1F600"):
        paused.to_state().to_json()


def test_a_tools_non_utf8_file_name_survives_a_pause_and_the_resume() -> None:
    """A tool that lists a folder returns names ``os.listdir`` decoded with
    surrogateescape; the run then pauses for an approval and must be saved."""
    name = b"r\xe9sum\xe9.txt".decode("utf-8", "surrogateescape")

    @ss.function_tool
    def list_files() -> str:
        """List the files."""
        return name

    @ss.function_tool(needs_approval=True)
    def delete_file(path: str) -> str:
        """Delete one file.

        Args:
            path: The file.
        """
        return f"deleted {path}"

    agent = ss.Agent(name="files", instructions="Tidy up.", tools=[list_files, delete_file])
    machine = ss.Workflow(name="files", agents=[agent], entry=agent).compile()
    args = json.dumps({"path": name})  # the model's JSON escape of it
    script: list[Any] = [[function_call("list_files", {})], [function_call("delete_file", args)],
              [assistant_message("done")]]
    paused = machine.run_sync("tidy", model=ScriptedModel(script))
    text = paused.to_state().to_json()
    state = ss.RunState.from_json(text.encode("utf-8"))
    outputs = [i for i in state.items if getattr(i, "type", "") == "tool_call_output_item"]
    assert [output_of(i) for i in outputs] == [name]
    state.approve(state.interruptions[0])
    result = machine.run_sync(state, model=ScriptedModel(script[2:]))
    done = [i for i in result.new_items if getattr(i, "type", "") == "tool_call_output_item"]
    assert output_of(done[-1]) == f"deleted {name}"
