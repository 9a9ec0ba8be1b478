"""Runs with a session on every surface: run, run_sync, run_streamed and the generated
runner; starting_agent; idempotency keys; the pin inside a saved state."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import codegen.support as generated
import stepswitch as ss
from graphs.support import support
from stepswitch.sessions import MemorySession, SQLiteSession
from stepswitch.testing import ScriptedModel, assistant_message, function_call

MACHINE = support.compile()


def _script() -> ScriptedModel:
    return ScriptedModel([
        [function_call("transfer_to_refund", {})],
        [assistant_message("Which order?")],
        [assistant_message("Order 42 it is.")],
    ])


def _two_turns(run: Any, session: Any) -> tuple[Any, Any, ScriptedModel]:
    model = _script()
    first = run("I want a refund", model=model, session=session)
    second = run("order 42", model=model, session=session)
    return first, second, model


def test_run_sync_continues_at_the_refund_agent(tmp_path: Any) -> None:
    session = SQLiteSession("u1", tmp_path / "c.db")
    first, second, model = _two_turns(MACHINE.run_sync, session)
    assert (first.last_agent, second.last_agent) == ("refund", "refund")
    assert [c.agent for c in model.calls] == ["triage", "refund", "refund"]
    assert second.final_output == "Order 42 it is."
    snap = asyncio.run(session.load())
    assert snap.current_agent == "refund" and snap.version == 3
    assert [getattr(i, "content", None) for i in snap.items][-2:] == ["order 42",
                                                                     "Order 42 it is."]


def test_generated_runner_takes_a_session() -> None:
    session = MemorySession("g")
    _, second, model = _two_turns(generated.run_sync, session)
    assert second.last_agent == "refund" and model.calls[-1].agent == "refund"


def test_streamed_run_appends_the_same_items() -> None:
    async def go() -> list[Any]:
        session = MemorySession("s")
        model = _script()
        for text in ("I want a refund", "order 42"):
            streamed = MACHINE.run_streamed(text, model=model, session=session)
            async for _ in streamed.stream_events():
                pass
        return list((await session.load()).items)

    plain = MemorySession("p")
    _two_turns(MACHINE.run_sync, plain)
    assert asyncio.run(go()) == asyncio.run(plain.get_items())


def test_starting_agent_without_a_session() -> None:
    model = ScriptedModel([[assistant_message("Refunds here.")]])
    result = MACHINE.run_sync("hi", model=model, starting_agent="refund")
    assert result.last_agent == "refund" and model.calls[0].agent == "refund"
    with pytest.raises(ss.UserError, match="'nobody' is not an agent of workflow 'support'"):
        MACHINE.run_sync("hi", model=model, starting_agent="nobody")


def test_a_session_left_at_a_vanished_agent_is_a_state_error() -> None:
    session = MemorySession("x")
    asyncio.run(session.append([], operation_id="o", expected_version=0,
                               current_agent="gone"))
    with pytest.raises(ss.StateError, match="continues at agent 'gone'"):
        MACHINE.run_sync("hi", model=_script(), session=session)
    result = MACHINE.run_sync("hi", model=ScriptedModel([[assistant_message("ok")]]),
                              session=session, starting_agent="triage")
    assert result.final_output == "ok"


def test_tools_see_a_stable_idempotency_key() -> None:
    seen: list[str | None] = []

    @ss.function_tool
    def charge(ctx: ss.RunContext[Any], amount: int) -> str:
        """Charge an amount."""
        seen.append(ctx.idempotency_key)
        return "charged"

    agent = ss.Agent(name="a", instructions="x", tools=[charge])
    machine = ss.Workflow(name="keys", entry=agent, agents=[agent]).compile()
    model = ScriptedModel([
        [function_call("charge", {"amount": 1}, call_id="c1"),
         function_call("charge", {"amount": 2}, call_id="c2")],
        [assistant_message("done")],
    ])
    result = machine.run_sync("go", model=model)
    run_id = result.to_state().run_id
    assert run_id and seen == [f"{run_id}:c1", f"{run_id}:c2"]


def test_resuming_needs_the_same_session() -> None:
    session = MemorySession("r")
    model = ScriptedModel([
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 7})],
        [assistant_message("Refunded.")],
    ])
    paused = MACHINE.run_sync("refund 7", model=model, session=session)
    state = paused.to_state()
    state.approve(state.interruptions[0])
    with pytest.raises(ss.UserError, match="taken with session 'r': pass session="):
        MACHINE.run_sync(state, model=model)
    with pytest.raises(ss.UserError, match="belongs to session 'r', not 'other'"):
        MACHINE.run_sync(state, model=model, session=MemorySession("other"))
    with pytest.raises(ss.UserError, match="starting_agent= starts a new run"):
        MACHINE.run_sync(state, model=model, session=session, starting_agent="triage")
    done = MACHINE.run_sync(state, model=model, session=session)
    assert done.final_output == "Refunded."
    # the paused turn went to the session only once it settled: no unanswered call
    items = asyncio.run(session.get_items())
    calls = [i.call_id for i in items if i.type == "tool_call_item"]
    outputs = [i.call_id for i in items if i.type == "tool_call_output_item"]
    assert calls == outputs and calls


def test_a_tampered_pin_fails_closed() -> None:
    session = MemorySession("t")
    model = ScriptedModel([
        [function_call("transfer_to_refund", {})],
        [function_call("process_refund", {"order_id": 7})],
    ])
    state = MACHINE.run_sync("refund 7", model=model, session=session).to_state()
    doc = json.loads(state.to_json())
    assert doc["body"]["session"]["session_id"] == "t"
    doc["body"]["session"]["synced"] = 999
    from stepswitch.runtime.state_json import _digest

    doc["digest"] = _digest(doc["body"], None)
    with pytest.raises(ss.StateError, match=r"session\.synced 999 is out of range"):
        ss.RunState.from_json(json.dumps(doc))


def test_session_must_be_a_session() -> None:
    with pytest.raises(ss.UserError, match="expected a stepswitch session"):
        MACHINE.run_sync("hi", model=_script(), session=object())


def test_on_conflict_must_be_known() -> None:
    with pytest.raises(ss.UserError, match="on_conflict"):
        ss.RunConfig(on_conflict="merge")  # type: ignore[arg-type]


class _LoseLastAck:
    """Commits every append; the ``n``-th (1-based) then raises."""

    def __init__(self, inner: Any, n: int) -> None:
        self.inner, self.n, self.seen = inner, n, 0
        self.session_id = inner.session_id

    async def load(self, **kw: Any) -> Any:
        return await self.inner.load(**kw)

    async def append(self, items: Any, **kw: Any) -> int:
        version: int = await self.inner.append(items, **kw)
        self.seen += 1
        if self.seen == self.n:
            raise ConnectionResetError("reset after the commit")
        return version


def test_a_lost_ack_on_the_last_turn_resumes_without_asking_the_model() -> None:
    real = MemorySession("last")
    model = _script()
    first = MACHINE.run_sync("I want a refund", model=model, session=real)
    assert first.final_output == "Which order?"
    with pytest.raises(ss.SessionError, match=r"resume exc\.run_data\.to_state") as info:
        MACHINE.run_sync("order 42", model=model, session=_LoseLastAck(real, 1))
    saved = info.value.run_data.to_state().to_json()
    state = ss.RunState.from_json(saved)
    assert state.session is not None and state.session.pending is not None
    calls = len(model.calls)
    done = MACHINE.run_sync(state, model=model, session=real)
    assert done.final_output == "Order 42 it is." and len(model.calls) == calls
    texts = [getattr(i, "content", None) for i in asyncio.run(real.get_items())]
    assert texts.count("order 42") == 1 and texts.count("Order 42 it is.") == 1
    with pytest.raises(ss.StateError, match="resumed already"):  # that object resumes once
        MACHINE.run_sync(state, model=model, session=real)
    with pytest.raises(ss.SessionConflict):  # and a copy of it conflicts with the session
        MACHINE.run_sync(ss.RunState.from_json(saved), model=model, session=real)


def test_the_runtime_loads_no_store_driver() -> None:
    import subprocess
    import sys

    code = (
        "import sys, stepswitch.runtime, stepswitch.sessions;"
        "print(sorted(m for m in ('psycopg', 'redis', 'sqlite3', 'stepswitch.sessions.postgres')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_python_callers_keep_the_python_advice_the_cli_shows_the_summary() -> None:
    session = MemorySession("u9")
    asyncio.run(session.append([], operation_id="a", expected_version=0, current_agent=None))
    with pytest.raises(ss.SessionConflict) as info:
        asyncio.run(session.append([], operation_id="b", expected_version=0,
                                   current_agent=None))
    exc = info.value
    assert str(exc).endswith("nothing was appended; load it again, or run with "
                             "RunConfig(on_conflict='reload')")
    assert exc.summary.endswith("nothing was appended") and "RunConfig" not in exc.summary
    asyncio.run(session.append([], operation_id="c", expected_version=1,
                               current_agent="nobody"))
    with pytest.raises(ss.StateError) as state_info:
        MACHINE.run_sync("hi", model=_script(), session=session)
    assert "pass starting_agent= to start elsewhere" in str(state_info.value)
    assert "starting_agent" not in state_info.value.summary
