"""``stepswitch trail`` on a hosted Agents API session's item list: pins by
``(turn_id, call_id)``, the calls still due read from ``required_actions``, subagent items
attributed to their actors. The lists come from real runs on ``AgentsAPIServer``; each
corruption breaks one pin."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from graphs.support import support
from stepswitch.models import AgentsAPIServer
from stepswitch.models.script import call, message
from stepswitch.review.trail_agents import check_agents_trail, read_agents_trail
from tests._paths import ROOT
from tests.agents_api.conftest import model_on
from tests.cli.conftest import run_main

EXERCISED = frozenset({"TR111", "TR112", "TR113"})
"""The trail codes only a session's list has, each broken below (tests/review counts them)."""


@pytest.fixture
def finished(server: AgentsAPIServer) -> list[dict[str, Any]]:
    """The items of a finished support session: a lookup, a handoff, a final answer."""
    server.add([call("lookup_order", {"order_id": 42})],
               [call("transfer_to_refund", {})], [message("Refunds will call you.")])
    support.compile().run_sync("refund 42", model=model_on(server))
    return server.items()


def codes(doc: Any) -> list[str]:
    return [f.code for f in check_agents_trail(read_agents_trail(doc)).findings]


def test_a_real_session_is_clean_as_a_list_a_page_and_a_dump(
    finished: list[dict[str, Any]], server: AgentsAPIServer
) -> None:
    assert codes(finished) == []
    assert codes({"object": "list", "data": finished, "has_more": False}) == []
    assert codes({"session": server.session(), "items": finished}) == []
    read = read_agents_trail({"session": server.session(), "items": finished})
    root = server.session()["agent"]["id"]
    assert read.root == root and list(read.actors()) == [root]


def test_a_paused_session_keeps_its_pending_call_apart(server: AgentsAPIServer) -> None:
    server.add([call("lookup_order", {"order_id": 1})],
               [call("transfer_to_refund", {})], [call("process_refund", {"order_id": 1})])
    paused = support.compile().run_sync("refund 1", model=model_on(server))
    assert paused.interruptions
    items, session = server.items(), server.session()
    assert codes({"session": session, "items": items}) == []
    assert codes(items) == []  # its item says in_progress
    # the session no longer asks for it, yet it has no output: a dropped result
    gone = dict(session, required_actions=[])
    assert codes({"session": gone, "items": items}) == ["TR101"]
    # the session asks for it, but the items answer it: history that is not
    answered = [*items, {"type": "function_call_output", "id": "fco_x", "call_id":
                         items[-1]["call_id"], "turn_id": items[-1]["turn_id"],
                         "output": "refunded", "error": None, "status": "completed"}]
    assert codes({"session": session, "items": answered}) == ["TR107"]
    ghost = dict(session, required_actions=[dict(session["required_actions"][0],
                                                 call_id="call_ghost")])
    assert sorted(codes({"session": ghost, "items": items})) == ["TR101", "TR111"]


def test_each_broken_pin_is_found(finished: list[dict[str, Any]]) -> None:
    outputs = [n for n, i in enumerate(finished) if i["type"] == "function_call_output"]
    first = outputs[0]

    other_turn = copy.deepcopy(finished)
    other_turn[first]["turn_id"] = "turn_elsewhere"
    report = check_agents_trail(read_agents_trail(other_turn))
    assert sorted(f.code for f in report.findings) == ["TR101", "TR102"]
    [orphan] = [f for f in report.findings if f.code == "TR102"]
    assert "is in turn" in orphan.message and orphan.where == f"[{first}]"

    twice = [*finished, dict(finished[first], id="fco_again")]
    assert codes(twice) == ["TR104"]
    before = copy.deepcopy(finished)
    before.insert(0, before.pop(first))
    assert "TR103" in codes(before)
    reused = [*finished, dict(finished[first - 1], id="fc_again")]
    assert "TR105" in codes(reused)
    same_id = copy.deepcopy(finished)
    same_id[-1]["id"] = same_id[0]["id"]
    assert codes(same_id) == ["TR106"]


def test_subagent_items_are_attributed_per_actor() -> None:
    base = {"turn_id": "t1", "content": [], "status": "completed"}
    items = [
        {"type": "message", "id": "m0", "role": "user", **base},
        {"type": "create_subagent_call", "id": "c1", "agent_id": "agent_sub", **base},
        {"type": "send_subagent_input_call", "id": "s1", "sender_agent_id": "agent_root",
         "recipient_agent_id": "agent_sub", **base},
        {"type": "agent_message", "id": "a1", "sender_agent_id": "agent_sub",
         "recipient_agent_id": "agent_root", **base},
        {"type": "wait_for_subagents_call", "id": "w1", "sender_agent_id": "agent_root",
         "recipient_agent_ids": ["agent_sub"], **base},
        {"type": "close_subagent_call", "id": "x1", "sender_agent_id": "agent_root",
         "recipient_agent_id": "agent_sub", **base},
    ]
    session = {"id": "sess_1", "agent": {"id": "agent_root"}, "required_actions": []}
    read = read_agents_trail({"session": session, "items": items})
    assert check_agents_trail(read).findings == ()
    assert read.actors() == {"agent_root": 4, "agent_sub": 1}
    stranger = [*items[:3], dict(items[3], sender_agent_id="agent_nobody")]
    assert codes({"session": session, "items": stranger}) == ["TR112"]
    late = [*items, dict(items[3], id="a2")]
    assert codes({"session": session, "items": late}) == ["TR113"]  # its sender is closed


def test_the_trail_command_reads_a_session_list(
    finished: list[dict[str, Any]], server: AgentsAPIServer, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"session": server.session(), "items": finished}))
    code, out, _ = run_main(["trail", str(path)], capsys)
    assert code == 0
    root = server.session()["agent"]["id"]
    assert f"{path}: actor {root}: " in out and ": clean" in out
    code, out, _ = run_main(["trail", str(path), "--format", "json"], capsys)
    doc = json.loads(out)
    assert doc["ok"] and doc["source"] == "agents_api" and list(doc["actors"]) == [root]
    broken = [*finished, dict(finished[2], id="fco_again")]
    path.write_text(json.dumps(broken))
    code, out, _ = run_main(["trail", str(path)], capsys)
    assert code == 1 and "TR104 duplicate-output" in out
    code, _, err = run_main(["trail", str(path), "--workflow", "graphs/support.py:support"],
                            capsys)
    assert code == 2 and "drop --workflow" in err


def test_replay_plays_a_session_as_a_list_a_page_and_a_dump(
    finished: list[dict[str, Any]], server: AgentsAPIServer, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Agents API lists a call's arguments as an object, not JSON text: replayed as
    text, they are the arguments the call was made with (they read as rejected, RP102)."""
    monkeypatch.chdir(ROOT)
    docs = {"list": finished, "page": {"object": "list", "data": finished, "has_more": False},
            "dump": {"session": server.session(), "items": finished}}
    for name, doc in docs.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        code, out, err = run_main(["replay", str(path), "--workflow",
                                   "graphs/support.py:support"], capsys)
        assert (code, err) == (0, "") and out.endswith(": same\n"), name + out
