"""``session_conformance(factory)``: the suite every session backend passes.

It returns a pytest test class; bind it to a ``Test*`` name in a test module::

    from stepswitch.testing import session_conformance

    TestMyStore = session_conformance(lambda session_id: MyStore(session_id, ...))

or subclass it and override its fixtures when the factory needs other fixtures (a
per-test schema, a temporary file)::

    class TestMyStore(session_conformance()):
        @pytest.fixture
        def session_factory(self, tmp_path):
            return functools.partial(SQLiteSession, db_path=str(tmp_path / "s.db"))

Fixtures: ``session_factory`` (``session_id -> Session``; required),
``process_factory`` (the same, but picklable, for the two-processes case; None skips
it: a store that lives in one process cannot share), ``corrupt_item`` (``(session,
index, text)`` overwrites a stored item's raw text; None skips the corrupt-row case).

The cases: order and limit; a limit larger than the history; every Responses input
item type written through ``to_sdk_session`` and given back exactly; an SDK ``Runner``
conversation (reasoning items, citations, a user image, a tool call) stored as the
SDK's own ``SQLiteSession`` stores it, then continued by a stepswitch run (skipped
without ``openai-agents``); isolation between session ids; idempotent replay; an
operation id reused with other items refused before any change; a stale version
refused; the SDK's four methods; two concurrent runs (``asyncio.gather``) → exactly
one ``SessionConflict``; two OS processes appending to one store → nothing lost or
duplicated; an append that commits and then raises (a lost acknowledgement) → the
retry adds nothing twice, at the session and through a run's state; a second resume
of the same state → ``SessionConflict`` and the approved tool does not run again; a
run continuing at the session's current agent; a corrupt row → ``StateError``.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from collections.abc import Callable
from typing import Any

from stepswitch.errors import SessionConflict, SessionError, StateError
from stepswitch.runtime.items import MessageOutputItem, ResponsesItem, UserInputItem
from stepswitch.sessions._base import Session
from stepswitch.sessions._conformance_kit import (
    Factory,
    LostAck,
    Together,
    append_all,
    close_all,
    conformance_machine,
    fresh_id,
    other_process,
    sdk_conversation,
    texts_of,
    user_says,
)
from stepswitch.sessions._corpus import responses_corpus
from stepswitch.sessions.sdk import to_sdk_session

__all__ = ["session_conformance"]


def session_conformance(
    factory: Factory | None = None,
    *,
    process_factory: Factory | None = None,
    corrupt: Callable[[Any, int, str], Any] | None = None,
) -> type:
    """A pytest test class that checks a session backend (see the module docs)."""
    import pytest

    default_factory = factory

    class SessionConformance:
        @pytest.fixture
        def session_factory(self) -> Factory:
            if default_factory is None:
                pytest.fail("session_conformance: pass a factory or define the "
                            "session_factory fixture")
            return default_factory

        @pytest.fixture
        def process_factory(self) -> Factory | None:
            return process_factory

        @pytest.fixture
        def corrupt_item(self) -> Callable[[Any, int, str], Any] | None:
            return corrupt

        # -- the store -------------------------------------------------------------------

        def test_is_a_session(self, session_factory: Factory) -> None:
            s = session_factory(fresh_id())
            try:
                assert isinstance(s, Session)
            finally:
                asyncio.run(close_all(s))

        def test_order_and_limit(self, session_factory: Factory) -> None:
            async def go() -> None:
                s = session_factory(fresh_id())
                try:
                    empty = await s.load()
                    assert (empty.items, empty.version, empty.current_agent) == ((), 0, None)
                    v1 = await s.append([user_says("a"), user_says("b")], operation_id="o1",
                                        expected_version=0, current_agent="front")
                    v2 = await s.append([MessageOutputItem("front", "c")], operation_id="o2",
                                        expected_version=v1, current_agent="desk")
                    assert 0 < v1 < v2
                    snap = await s.load()
                    assert texts_of(snap.items) == ["a", "b", "c"]
                    assert (snap.version, snap.current_agent) == (v2, "desk")
                    assert snap.items[2] == MessageOutputItem("front", "c")
                    assert texts_of((await s.load(limit=2)).items) == ["b", "c"]
                    assert (await s.load(limit=2)).version == v2
                    assert texts_of(await s.get_items(limit=1)) == ["c"]
                    assert texts_of(await s.get_items()) == ["a", "b", "c"]
                    assert await s.get_items(limit=0) == []
                finally:
                    await close_all(s)

            asyncio.run(go())

        def test_limit_larger_than_the_history(self, session_factory: Factory) -> None:
            async def go() -> None:
                s = session_factory(fresh_id())
                try:
                    assert (await s.load(limit=5)).items == ()
                    await s.append([user_says("a"), user_says("b")], operation_id="o1",
                                   expected_version=0, current_agent=None)
                    await s.add_items([user_says("c")])
                    for limit in (3, 4, 7, 1000):
                        assert texts_of((await s.load(limit=limit)).items) == ["a", "b", "c"]
                        assert texts_of(await s.get_items(limit=limit)) == ["a", "b", "c"]
                    sdk = to_sdk_session(s)
                    assert [i["content"] for i in await sdk.get_items(limit=7)] == ["a", "b", "c"]
                finally:
                    await close_all(s)

            asyncio.run(go())

        def test_every_responses_item_round_trips(self, session_factory: Factory) -> None:
            async def go() -> None:
                sid = fresh_id()
                s, other = session_factory(sid), session_factory(sid)
                sdk = to_sdk_session(s, agent_name="front")
                corpus = responses_corpus()
                try:
                    await sdk.add_items(corpus[:3])
                    await sdk.add_items(corpus[3:])
                    got = await sdk.get_items()
                    assert got == corpus
                    # exactly as written: the same JSON text, key order and nulls included
                    assert [json.dumps(i) for i in got] == [json.dumps(i) for i in corpus]
                    assert await to_sdk_session(other).get_items() == corpus  # another reader
                    assert await sdk.get_items(limit=3) == corpus[-3:]
                    assert await sdk.get_items(limit=len(corpus) + 5) == corpus
                    got[2]["content"].clear()  # a copy: changing it changes nothing stored
                    assert (await sdk.get_items())[2] == corpus[2]
                    # the stepswitch view: the nearest stepswitch item, and a verbatim
                    # ResponsesItem for each item stepswitch does not model
                    view = await s.get_items()
                    assert len(view) == len(corpus)
                    assert view[0] == UserInputItem("Be brief.", "system")
                    assert view[1] == UserInputItem("Cite sources.", "developer")
                    assert view[2] == UserInputItem(  # the image and files kept
                        corpus[2]["content"][0]["text"], "user", tuple(corpus[2]["content"]))
                    assert view[3] == ResponsesItem("front", corpus[3])  # reasoning
                    assert view[4] == MessageOutputItem(
                        "front", "A single pixel [1].", "I won't guess the photographer.")
                    for n, raw in enumerate(corpus):
                        if raw.get("type", "message") not in (
                            "message", "function_call", "function_call_output"
                        ):
                            assert view[n] == ResponsesItem("front", raw)
                    # a stepswitch append after the SDK's items, read back both ways
                    v = (await s.load()).version
                    await s.append([user_says("more")], operation_id="after-sdk",
                                   expected_version=v, current_agent="front")
                    mixed = await sdk.get_items()
                    assert mixed == [*corpus, {"role": "user", "content": "more"}]
                    assert await sdk.pop_item() == {"role": "user", "content": "more"}
                    assert await sdk.pop_item() == corpus[-1]
                    # stepswitch's pop: the stepswitch view
                    assert await s.pop_item() == MessageOutputItem("front", "a plain reply")
                    assert corpus[-3]["type"] == "compaction"
                    assert await s.pop_item() == ResponsesItem("front", corpus[-3])
                    assert await sdk.get_items() == corpus[:-3]
                finally:
                    await close_all(s, other)

            asyncio.run(go())

        def test_sdk_runner_keeps_reasoning_citations_and_images(
            self, session_factory: Factory
        ) -> None:
            pytest.importorskip("agents")

            async def go() -> None:
                from agents import SQLiteSession as SDKSQLiteSession

                sid = fresh_id()
                s = session_factory(sid)
                theirs = SDKSQLiteSession(sid, ":memory:")
                try:
                    ours, our_inputs = await sdk_conversation(to_sdk_session(s))
                    want, their_inputs = await sdk_conversation(theirs)
                    assert ours == want  # stored as the SDK's own session stores them
                    assert our_inputs == their_inputs  # the model was sent the same
                    kinds = [i.get("type") for i in ours]
                    assert kinds.count("reasoning") == 4 and "function_call" in kinds
                    # turn 2 saw turn 1's image, reasoning (encrypted) and citation
                    second = our_inputs[1]
                    assert second[0]["content"][1]["type"] == "input_image"
                    assert second[1]["encrypted_content"] == "enc-1"
                    assert second[2]["content"][0]["annotations"][0]["type"] == "url_citation"
                    # a stepswitch run continues the conversation the SDK wrote
                    from stepswitch.models.scripted import ScriptedModel, assistant_message

                    model = ScriptedModel([[assistant_message("Anything else?")]])
                    done = await conformance_machine().run("one more", model=model, session=s)
                    assert done.final_output == "Anything else?"
                    seen = [getattr(i, "content", None) for i in model.calls[0].input]
                    assert seen[0] == "What is in this picture?" and seen[-1] == "one more"
                    after = await to_sdk_session(s).get_items()
                    assert after[: len(ours)] == ours
                    assert after[len(ours):] == [
                        {"role": "user", "content": "one more"},
                        {"role": "assistant", "content": "Anything else?"},
                    ]
                finally:
                    theirs.close()
                    await close_all(s)

            asyncio.run(go())

        def test_isolation_between_ids(self, session_factory: Factory) -> None:
            async def go() -> None:
                a, b = session_factory(fresh_id()), session_factory(fresh_id())
                try:
                    await a.append([user_says("for a")], operation_id="same", expected_version=0,
                                   current_agent="desk")
                    # the same operation id in another session is another operation
                    await b.append([user_says("for b")], operation_id="same", expected_version=0,
                                   current_agent=None)
                    assert texts_of(await a.get_items()) == ["for a"]
                    snap = await b.load()
                    assert texts_of(snap.items) == ["for b"] and snap.current_agent is None
                    await b.clear_session()
                    assert texts_of(await a.get_items()) == ["for a"]
                finally:
                    await close_all(a, b)

            asyncio.run(go())

        def test_idempotent_replay(self, session_factory: Factory) -> None:
            async def go() -> None:
                s = session_factory(fresh_id())
                try:
                    items = [user_says("hello"), MessageOutputItem("front", "hi")]
                    v = await s.append(items, operation_id="run1:t1", expected_version=0,
                                       current_agent="front")
                    again = await s.append(items, operation_id="run1:t1", expected_version=0,
                                           current_agent="front")
                    assert again == v
                    snap = await s.load()
                    assert texts_of(snap.items) == ["hello", "hi"] and snap.version == v
                finally:
                    await close_all(s)

            asyncio.run(go())

        def test_reused_operation_id_changes_nothing(self, session_factory: Factory) -> None:
            async def go() -> None:
                s = session_factory(fresh_id())
                try:
                    v = await s.append([user_says("one")], operation_id="op", expected_version=0,
                                       current_agent="front")
                    with pytest.raises(SessionError) as info:
                        await s.append([user_says("two")], operation_id="op", expected_version=v,
                                       current_agent="front")
                    assert not isinstance(info.value, SessionConflict)
                    assert "op" in str(info.value)
                    with pytest.raises(SessionError):  # same items, another agent
                        await s.append([user_says("one")], operation_id="op", expected_version=0,
                                       current_agent="desk")
                    snap = await s.load()
                    assert (texts_of(snap.items), snap.version) == (["one"], v)
                    assert snap.current_agent == "front"
                finally:
                    await close_all(s)

            asyncio.run(go())

        def test_stale_version_is_a_conflict(self, session_factory: Factory) -> None:
            async def go() -> None:
                s = session_factory(fresh_id())
                try:
                    v = await s.append([user_says("first")], operation_id="a", expected_version=0,
                                       current_agent="front")
                    with pytest.raises(SessionConflict):
                        await s.append([user_says("late")], operation_id="b", expected_version=0,
                                       current_agent="desk")
                    snap = await s.load()
                    assert (texts_of(snap.items), snap.version) == (["first"], v)
                    assert snap.current_agent == "front"
                    # the refused operation id is free: it was never applied
                    await s.append([user_says("late")], operation_id="b", expected_version=v,
                                   current_agent="desk")
                    assert texts_of(await s.get_items()) == ["first", "late"]
                finally:
                    await close_all(s)

            asyncio.run(go())

        def test_sdk_methods(self, session_factory: Factory) -> None:
            async def go() -> None:
                s = session_factory(fresh_id())
                try:
                    assert await s.pop_item() is None
                    await s.add_items([user_says("x"), {"role": "user", "content": "y"}])
                    v = (await s.load()).version
                    popped = await s.pop_item()
                    assert popped == user_says("y")
                    after = await s.load()
                    assert texts_of(after.items) == ["x"] and after.version > v
                    # a writer that loaded before the pop is stale now
                    with pytest.raises(SessionConflict):
                        await s.append([user_says("z")], operation_id="z", expected_version=v,
                                       current_agent=None)
                    await s.append([], operation_id="agent", expected_version=after.version,
                                   current_agent="desk")
                    await s.clear_session()
                    cleared = await s.load()
                    assert cleared.items == () and cleared.current_agent is None
                    assert cleared.version > after.version
                finally:
                    await close_all(s)

            asyncio.run(go())

        def test_lost_acknowledgement_retry_adds_nothing_twice(
            self, session_factory: Factory
        ) -> None:
            async def go() -> None:
                real = session_factory(fresh_id())
                flaky = LostAck(real)
                try:
                    items = [user_says("pay 5"), MessageOutputItem("desk", "ok")]
                    with pytest.raises(ConnectionResetError):
                        await flaky.append(items, operation_id="r:t1", expected_version=0,
                                           current_agent="desk")
                    v = await flaky.append(items, operation_id="r:t1", expected_version=0,
                                           current_agent="desk")
                    snap = await real.load()
                    assert texts_of(snap.items) == ["pay 5", "ok"] and snap.version == v
                finally:
                    await close_all(real)

            asyncio.run(go())

        def test_two_processes_lose_and_duplicate_nothing(
            self, process_factory: Factory | None
        ) -> None:
            if process_factory is None:
                pytest.skip("this store lives in one process (no process_factory)")
            session_id, n = fresh_id(), 40
            ctx = multiprocessing.get_context("spawn")
            ready, start, done = ctx.Event(), ctx.Event(), ctx.Queue()
            other = ctx.Process(target=other_process, args=(
                process_factory, session_id, "q", n, ready, start, done))
            other.start()
            try:
                assert ready.wait(120), "the other process did not start"
                start.set()  # both write at once: this process and the other
                append_all(process_factory, session_id, "p", n)
                done.get(timeout=120)
            finally:
                other.join(30)
                if other.is_alive():
                    other.kill()
            assert other.exitcode == 0

            async def check() -> None:
                s = process_factory(session_id)
                try:
                    snap = await s.load()
                    texts = texts_of(snap.items)
                    assert sorted(texts) == sorted(f"{t}-{k}" for t in "pq" for k in range(n))
                    for tag in "pq":  # each process's items in its own order
                        mine = [t for t in texts if t.startswith(tag + "-")]
                        assert mine == [f"{tag}-{k}" for k in range(n)]
                    assert snap.version == 2 * n
                finally:
                    await close_all(s)

            asyncio.run(check())

        def test_corrupt_row_is_a_state_error(
            self, session_factory: Factory, corrupt_item: Callable[[Any, int, str], Any] | None
        ) -> None:
            if corrupt_item is None:
                pytest.skip("no corrupt_item hook for this store")

            async def go() -> None:
                s = session_factory(fresh_id())
                try:
                    await s.append([user_says("a"), user_says("b")], operation_id="o",
                                   expected_version=0, current_agent=None)
                    result = corrupt_item(s, 1, '{"type": "user_input_item", "cont')
                    if asyncio.iscoroutine(result):
                        await result
                    with pytest.raises(StateError, match="does not parse"):
                        await s.load()
                    with pytest.raises(StateError):
                        await s.get_items()
                    result = corrupt_item(s, 0, '{"type": "no_such_item"}')
                    if asyncio.iscoroutine(result):
                        await result
                    with pytest.raises(StateError):
                        await s.load(limit=2)
                    # a row the SDK adapter wrote, damaged (it lost its item)
                    result = corrupt_item(s, 0, '{"type": "responses_item", "agent": "x"}')
                    if asyncio.iscoroutine(result):
                        await result
                    with pytest.raises(StateError):
                        await s.load()
                finally:
                    await close_all(s)

            asyncio.run(go())

        # -- runs on the store -------------------------------------------------------------

        def test_runs_continue_at_the_current_agent(self, session_factory: Factory) -> None:
            from stepswitch.models.scripted import ScriptedModel, assistant_message, function_call

            async def go() -> None:
                s = session_factory(fresh_id())
                m = conformance_machine()
                model = ScriptedModel([
                    [function_call("transfer_to_desk", {})],
                    [assistant_message("How much?")],
                    [assistant_message("Noted.")],
                ])
                try:
                    first = await m.run("I need a payment", model=model, session=s)
                    assert first.last_agent == "desk"
                    second = await m.run("5 please", model=model, session=s)
                    assert second.last_agent == "desk"
                    assert model.calls[2].agent == "desk"  # no trip through front
                    seen = [getattr(i, "content", None) for i in model.calls[2].input]
                    assert seen[0] == "I need a payment" and seen[-1] == "5 please"
                    snap = await s.load()
                    assert snap.current_agent == "desk"
                    assert texts_of(snap.items)[-2:] == ["5 please", "Noted."]
                    third = await m.run("hi", model=ScriptedModel([[assistant_message("Hi")]]),
                                        session=s, starting_agent="front")
                    assert third.last_agent == "front"
                    assert (await s.load()).current_agent == "front"
                finally:
                    await close_all(s)

            asyncio.run(go())

        def test_concurrent_runs_one_conflict(self, session_factory: Factory) -> None:
            async def go() -> None:
                sid = fresh_id()
                a, b = session_factory(sid), session_factory(sid)
                m = conformance_machine()
                model = Together(2)
                try:
                    outcomes = await asyncio.gather(
                        m.run("from a", model=model, session=a),
                        m.run("from b", model=model, session=b),
                        return_exceptions=True,
                    )
                    errors = [o for o in outcomes if isinstance(o, BaseException)]
                    assert len(errors) == 1 and isinstance(errors[0], SessionConflict), outcomes
                    assert errors[0].run_data is not None
                    won = next(o for o in outcomes if not isinstance(o, BaseException))
                    texts = texts_of((await a.load()).items)
                    assert texts == [won.input[0].content, won.final_output]  # never interleaved
                finally:
                    await close_all(a, b)

            asyncio.run(go())

        def test_reload_appends_the_turn_whole(self, session_factory: Factory) -> None:
            from stepswitch.runtime.config import RunConfig

            async def go() -> None:
                sid = fresh_id()
                a, b = session_factory(sid), session_factory(sid)
                m = conformance_machine()
                model = Together(2)
                config = RunConfig(on_conflict="reload")
                try:
                    done = await asyncio.gather(
                        m.run("from a", model=model, session=a, run_config=config),
                        m.run("from b", model=model, session=b, run_config=config),
                    )
                    texts = texts_of((await a.load()).items)
                    assert len(texts) == 4
                    pairs = {(texts[0], texts[1]), (texts[2], texts[3])}
                    assert pairs == {(r.input[0].content, r.final_output) for r in done}
                finally:
                    await close_all(a, b)

            asyncio.run(go())

        def test_resume_twice_is_a_conflict_and_runs_the_tool_once(
            self, session_factory: Factory
        ) -> None:
            from stepswitch.models.scripted import ScriptedModel, assistant_message, function_call
            from stepswitch.runtime.state import RunState

            async def go() -> None:
                s = session_factory(fresh_id())
                m = conformance_machine()
                ledger: dict[str, Any] = {}
                model = ScriptedModel([
                    [function_call("transfer_to_desk", {})],
                    [function_call("pay", {"amount": 5})],
                    [assistant_message("Paid.")],
                ])
                try:
                    paused = await m.run("pay 5", model=model, session=s, context=ledger)
                    assert paused.interruptions
                    state = paused.to_state()
                    assert state.session is not None
                    state.approve(state.interruptions[0])
                    saved = state.to_json()
                    done = await m.run(RunState.from_json(saved), model=model, session=s,
                                       context=ledger)
                    assert done.final_output == "Paid."
                    assert [a for a, _ in ledger["paid"]] == [5]
                    key = ledger["paid"][0][1]
                    assert key and key.endswith(state.interruptions[0].call_id
                                                if state.interruptions else "")
                    with pytest.raises(SessionConflict):
                        await m.run(RunState.from_json(saved), model=model, session=s,
                                    context=ledger)
                    assert [a for a, _ in ledger["paid"]] == [5]  # the tool did not run again
                    texts = texts_of((await s.load()).items)
                    assert texts[0] == "pay 5" and texts[-1] == "Paid."
                finally:
                    await close_all(s)

            asyncio.run(go())

        def test_resume_resends_a_pending_operation(self, session_factory: Factory) -> None:
            from stepswitch.models.scripted import ScriptedModel, assistant_message, function_call
            from stepswitch.runtime.state import RunState

            async def go() -> None:
                sid = fresh_id()
                real = session_factory(sid)
                m = conformance_machine()
                model = ScriptedModel([
                    [function_call("transfer_to_desk", {})],
                    [assistant_message("How much?")],
                ])
                try:
                    with pytest.raises(SessionError) as info:
                        await m.run("hello", model=model, session=LostAck(real))
                    state = info.value.run_data.to_state()
                    assert state.session is not None and state.session.pending is not None
                    state = RunState.from_json(state.to_json())  # it crosses processes
                    # the append had committed: resuming re-sends it, a no-op, then goes on
                    done = await m.run(state, model=model, session=real)
                    assert done.final_output == "How much?"
                    assert len(model.calls) == 2  # the model was not asked again
                    snap = await real.load()
                    assert texts_of(snap.items) == ["hello", "", "", "How much?"]
                    assert snap.current_agent == "desk"
                finally:
                    await close_all(real)

            asyncio.run(go())

    return SessionConformance
