"""The provider-neutral script: Python helpers and the JSON form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepswitch.errors import UserError
from stepswitch.models.script import (
    ErrorReply,
    RawReply,
    Reply,
    call,
    fill_call_ids,
    load_script,
    message,
    normalize_step,
    parse_script,
    refusal,
)
from stepswitch.runtime.model import ModelResponse, OutputFunctionCall, OutputMessage
from tests._items import call_id_of
from tests._paths import ROOT


def test_helpers_make_runtime_output_items() -> None:
    assert message("hi") == OutputMessage("hi")
    assert refusal("no") == OutputMessage("", "no")
    assert call("f", {"a": 1}, "c") == OutputFunctionCall("f", '{"a": 1}', "c")
    assert call("f", "{broken").arguments == "{broken"


def test_every_step_shape_normalizes() -> None:
    assert normalize_step(message("a")) == Reply((OutputMessage("a"),))
    assert normalize_step([message("a")]) == Reply((OutputMessage("a"),))
    from stepswitch.context import Usage

    resp = ModelResponse((OutputMessage("x"),), Usage(1, 3, 4, 7))
    assert normalize_step(resp) == Reply((OutputMessage("x"),), 3, 4)


def test_json_form_round_trip(tmp_path: Path) -> None:
    script = {
        "steps": [
            {
                "output": [
                    {
                        "type": "function_call",
                        "name": "lookup_order",
                        "arguments": {"order_id": 42},
                        "call_id": "c1",
                    }
                ]
            },
            [{"type": "message", "text": "done"}],
            {"output": [{"type": "refusal", "text": "no"}], "usage": {"input_tokens": 5}},
            {"error": {"status": 429, "retry_after": 0.5}},
            {"error": 401},
            {"raw": "{trunc", "status": 200},
            {"output": [], "delay": 1.5},
        ]
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    steps = load_script(path)
    assert steps[0] == Reply((OutputFunctionCall("lookup_order", '{"order_id": 42}', "c1"),))
    assert steps[1] == Reply((OutputMessage("done"),))
    assert steps[2] == Reply((OutputMessage("", "no"),), input_tokens=5)
    assert isinstance(steps[3], ErrorReply) and steps[3].retry_after == 0.5
    assert isinstance(steps[4], ErrorReply) and steps[4].status == 401
    assert steps[5] == RawReply("{trunc")
    assert steps[6] == Reply((), delay=1.5)


@pytest.mark.parametrize(
    ("data", "phrase"),
    [
        ({"nope": 1}, "expected a list of steps"),
        ([{"output": [{"type": "picture"}]}], "step 1: output\\[0\\]: unknown item type"),
        ([{"output": [], "extra": 1}], "unknown key\\(s\\) extra"),
        ([{"error": {"status": 200}}], "status must be 400..599"),
        ([{"output": [{"type": "function_call"}]}], "needs a name"),
        ([{"output": [], "usage": {"input_tokens": -1}}], "non-negative"),
        ([7], "expected an object with output, error or raw"),
        ([{"output": [], "delay": 9999}], "seconds must be 0..600"),
        ([{"output": [], "delay": "soon"}], "delay must be a number"),
    ],
)
def test_bad_json_scripts_say_where(data: object, phrase: str) -> None:
    with pytest.raises(UserError, match=phrase):
        parse_script(data, where="s.json")


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot read"):
        load_script(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('[\n{"output": [}\n]')
    with pytest.raises(UserError, match=r"bad.json:2: not valid JSON"):
        load_script(bad)


def test_the_documented_json_example_parses() -> None:
    doc = (ROOT / "docs" / "models.md").read_text()
    section = doc.split("## Scripts as JSON", 1)[1]
    block = section.split("```json\n", 1)[1].split("```", 1)[0]
    steps = parse_script(json.loads(block), where="docs/models.md")
    assert len(steps) == 7
    assert isinstance(steps[3], ErrorReply) and steps[3].retry_after == 0.5
    assert steps[6].delay == 2.5


def test_the_example_support_script_parses() -> None:
    path = ROOT / "examples" / "support_script.json"
    steps = load_script(path)
    assert [type(s).__name__ for s in steps] == ["Reply"] * 4


def test_filled_call_ids_skip_ids_the_conversation_already_holds() -> None:
    reply = Reply((OutputFunctionCall("t", "{}", ""), OutputFunctionCall("u", "{}", "mine")))
    assert [call_id_of(o) for o in fill_call_ids(reply, 0).output] == ["call_0_0", "mine"]
    held = {"call_0_0", "call_0_0_2"}
    filled = fill_call_ids(reply, 0, held.__contains__)
    assert [call_id_of(o) for o in filled.output] == ["call_0_0_3", "mine"]
