"""Issue 11, item 3: a hand-edited state whose indices or references are out of range
is a ``StateError``, never an unapproved call run or a finished call run again.

The digest of an unsigned state catches accidents, not edits: whoever edits the body
can recompute it. So every index and reference is checked when a state is read (and
again when it resumes), as a hostile document would need.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import stepswitch as ss
from stepswitch.runtime.state import PendingTurn
from stepswitch.runtime.state_json import _digest
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests.conformance.kit import Ledger, compile_agents, lookup_tool, refund_tool

Body = dict[str, Any]


def _forge(text: str, change: Callable[[Body], object]) -> str:
    """Edit the body and recompute the (unkeyed) digest, as an attacker could."""
    doc = json.loads(text)
    change(doc["body"])
    doc["digest"] = _digest(doc["body"], None)
    return json.dumps(doc)


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


@pytest.fixture
def machine(ledger: Ledger) -> ss.StateMachine:
    banker = ss.Agent("banker", tools=[refund_tool(ledger, needs_approval=True)])
    desk = ss.Agent("desk", tools=[refund_tool(ledger, needs_approval=True),
                                   lookup_tool(ledger),
                                   banker.as_tool("ask_banker", "Ask the banker")])
    return compile_agents(desk, banker)


@pytest.fixture
def saved(machine: ss.StateMachine, ledger: Ledger) -> str:
    """Paused: refund 1 waits for approval, lookup 1 ran, the banker's refund 2 waits."""
    first = machine.run_sync("go", model=ScriptedModel([
        [function_call("process_refund", {"order_id": 1}, call_id="c1"),
         function_call("lookup_order", {"order_id": 1}, call_id="c2"),
         function_call("ask_banker", {"input": "refund 2"}, call_id="c3")],
        [function_call("process_refund", {"order_id": 2}, call_id="n1")],
    ]))
    assert len(first.interruptions) == 2
    ledger.ran.clear()
    return first.to_state().to_json()


def _set(path: str, value: Any) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        *parents, last = path.split(".")
        target: Any = body
        for p in parents:
            target = target[int(p)] if p.isdigit() else target[p]
        target[int(last) if last.isdigit() else last] = value

    return change


def _drop_item(kind: str) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        body["items"] = [i for i in body["items"]
                         if not (i["type"] == kind and not i.get("run_path"))]

    return change


def _add_output(call_id: str) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        body["items"].append({"type": "tool_call_output_item", "agent": "desk",
                              "call_id": call_id, "output": "x", "name": "process_refund",
                              "is_error": False})

    return change


FORGERIES: list[tuple[str, Callable[[Body], object], str]] = [
    ("start past the end", _set("pending.start", 99), "pending.start 99 is out of range"),
    ("start negative", _set("pending.start", -1), "pending.start -1 is out of range"),
    ("start moved past the turn's calls", _set("pending.start", 3),
     "does not begin with the interrupted turn's calls"),
    ("start moved back", _set("pending.start", 1),
     "does not begin with the interrupted turn's calls"),
    ("approval removed", _drop_item("tool_approval_item"),
     "neither an output, an approval request nor a paused nested run"),
    ("history_from past the end", _set("history_from", 50), "history_from 50 is out of range"),
    ("negative depth", _set("depth", -3), "depth -3"),
    ("nested depth", _set("nested.c3.depth", 5), "depth 5"),
    ("negative turn", _set("current_turn", -4), "current_turn -4"),
    ("negative budget", _set("max_turns", -1), "max_turns -1"),
    ("pending without interruption", _set("status", "stopped"), "status"),
    ("output for no call", _add_output("zz"), "call id 'zz'"),
    ("second output for a call", _add_output("c2"), "second output"),
    ("current agent is not the paused one", _set("current_agent", "banker"),
     "current_agent"),
    ("nested under a call that has an output", lambda b: b["nested"].update(
        c2=b["nested"]["c3"]), "c2"),
]


@pytest.mark.parametrize(("label", "change", "message"), FORGERIES,
                         ids=[f[0] for f in FORGERIES])
def test_a_forged_index_or_reference_is_a_state_error(
    machine: ss.StateMachine, ledger: Ledger, saved: str, label: str,
    change: Callable[[Body], object], message: str,
) -> None:
    forged = _forge(saved, change)
    with pytest.raises(ss.StateError, match=message):
        state = ss.RunState.from_json(forged)
        state.approve(state.interruptions[0])  # pragma: no cover - reading must fail
        machine.run_sync(state, model=ScriptedModel([[assistant_message("x")]] * 3))
    assert ledger.ran == []


def test_an_in_memory_state_is_checked_when_it_resumes(
    machine: ss.StateMachine, ledger: Ledger, saved: str
) -> None:
    state = ss.RunState.from_json(saved)
    assert state.pending is not None
    state.pending = PendingTurn(state.pending.agent, state.pending.output, 40)
    with pytest.raises(ss.StateError, match="out of range"):
        machine.run_sync(state, model=ScriptedModel([]))
    assert ledger.ran == []


def test_the_genuine_state_still_resumes(
    machine: ss.StateMachine, ledger: Ledger, saved: str
) -> None:
    state = ss.RunState.from_json(saved)
    for item in state.interruptions:
        state.approve(item)
    out = machine.run_sync(state, model=ScriptedModel([
        [assistant_message("banker done")], [assistant_message("desk done")]]))
    assert out.final_output == "desk done"
    assert sorted(ledger.ran) == [("process_refund", 1), ("process_refund", 2)]
