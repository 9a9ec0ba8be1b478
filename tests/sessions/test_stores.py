"""Bad input to the stores: URLs, ids, unreachable servers, newer schemas; and the
SDK adapters both ways."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from typing import Any

import pytest

import stepswitch as ss
from graphs.support import support
from stepswitch.sessions import (
    MemorySession,
    PostgresSession,
    RedisSession,
    SQLiteSession,
    from_sdk_session,
    open_session,
    to_sdk_session,
)
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests._paths import ROOT
from tests.sessions.stores import PG_DSN, REDIS_URL, pg_connect, pg_schema, redis_prefix

__all__ = ["pg_schema", "redis_prefix"]


@pytest.mark.parametrize("bad, message", [
    ("", "session id is empty"),
    ("x" * 300, "300 characters long; at most 256"),
    ("a\x00b", "NUL"),
])
def test_bad_session_ids(bad: str, message: str) -> None:
    with pytest.raises(ss.SessionError, match=message):
        MemorySession(bad)
    with pytest.raises(ss.SessionError, match=message):
        open_session("sqlite:///:memory:", bad)


@pytest.mark.parametrize("url, message", [
    ("mongodb://x/y", "unknown session URL scheme 'mongodb'"),
    ("conversations.db", "has no scheme"),
    ("sqlite:/conv.db", r"'sqlite:/conv.db': sqlite: is followed by // \(then the place\)"),
    ("sqlite://relative.db", "sqlite:///relative/path.db"),
    ("postgresql://h/db?synchronous_commit=maybe", "synchronous_commit is on or off"),
    # a misspelt option: redis-py would raise a TypeError at the first connect
    ("redis://127.0.0.1:1/0?prefx=p:", "unknown option 'prefx'"),
    # a typo that would write somewhere else: the public schema, redis db 0
    ("postgresql://h/db?schema=", r"schema= is empty \(leave it out for the default"),
    ("redis://127.0.0.1:6379/abc", r"the database after the port is a number \(redis://"),
    ("redis://127.0.0.1:6379/0?prefix=", "prefix= is empty"),
])
def test_bad_urls(url: str, message: str) -> None:
    with pytest.raises(ss.SessionError, match=message):
        open_session(url, "u")


def test_urls_open_each_backend(tmp_path: Any, pg_schema: str, redis_prefix: str) -> None:
    async def go() -> None:
        pg = f"{PG_DSN}?schema={pg_schema}&synchronous_commit=off"
        for url in (f"sqlite:///{tmp_path}/c.db", pg,
                    f"{REDIS_URL}?prefix={redis_prefix}"):
            s = open_session(url, "u")
            await s.append([ss.runtime.UserInputItem("hi")], operation_id="o",
                           expected_version=0, current_agent="triage")
            assert (await s.load()).current_agent == "triage"
            await s.close()

    asyncio.run(go())
    assert (tmp_path / "c.db").exists()


def test_a_postgres_url_reaches_libpq_as_written_but_for_schema(pg_schema: str) -> None:
    """No host before the path (libpq's host= in the query instead), and percent-escapes
    in a value: the URL goes to the driver unchanged, schema= taken out."""
    async def go() -> str:
        url = (f"postgresql:///test?user=postgres&host=127.0.0.1&schema={pg_schema}"
               "&application_name=a%26b%20c")
        s = open_session(url, "u")
        await s.append([ss.runtime.UserInputItem("hi")], operation_id="o",
                       expected_version=0, current_agent="triage")
        await s.close()
        return url

    asyncio.run(go())
    with pg_connect() as conn:
        rows = conn.execute(
            "select count(*) from information_schema.tables where table_schema = %s",
            (pg_schema,),
        ).fetchone()
    assert rows is not None and rows[0] >= 1  # its tables are in the schema asked for


def test_sqlite_url_with_a_tilde_is_in_the_home_folder(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    session = open_session("sqlite:///~/chat.db", "u")
    asyncio.run(session.load())
    asyncio.run(session.close())
    assert (tmp_path / "home" / "chat.db").is_file()
    assert not (tmp_path / "~").exists()


def test_unreachable_servers_are_one_line_errors() -> None:
    async def go(session: Any) -> None:
        await session.load()

    for session in (PostgresSession("u", "postgresql://postgres@127.0.0.1:1/test"),
                    RedisSession("u", "redis://127.0.0.1:1/0")):
        with pytest.raises(ss.SessionError, match="cannot connect to") as info:
            asyncio.run(go(session))
        assert "\n" not in str(info.value)
        asyncio.run(session.close())


def test_an_unusable_sqlite_path(tmp_path: Any) -> None:
    (tmp_path / "a-file").write_text("")
    session = SQLiteSession("u", tmp_path / "a-file" / "dir.db")  # nothing opened yet
    with pytest.raises(ss.SessionError, match=r"cannot open SQLite file .*cannot make its folder"):
        asyncio.run(session.load())
    asyncio.run(session.close())
    folder = tmp_path / "a-dir.db"
    folder.mkdir()
    session = SQLiteSession("u", folder)
    with pytest.raises(ss.SessionError, match="cannot open SQLite file"):
        asyncio.run(session.load())
    asyncio.run(session.close())


def test_a_sqlite_session_makes_its_folders_on_first_use(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sessions.md's ``SQLiteSession("customer-42", "out/conversations.db")`` and
    ``--session sqlite:///out/chat.db`` work in a fresh clone, which has no out/."""
    from stepswitch.sessions import open_session

    monkeypatch.chdir(tmp_path)
    for session, made in [(SQLiteSession("u", tmp_path / "a" / "b" / "c.db"), tmp_path / "a"),
                          (open_session("sqlite:///out/x/chat.db", "u"), tmp_path / "out")]:
        assert not made.exists()  # nothing until first use
        assert asyncio.run(session.load()).version == 0
        assert made.is_dir()
        asyncio.run(session.close())
    assert (tmp_path / "a" / "b" / "c.db").is_file()
    assert (tmp_path / "out" / "x" / "chat.db").is_file()


def test_a_sqlite_session_creates_nothing_until_first_use(tmp_path: Any) -> None:
    """docs/sessions.md: nothing is read or written until first use, so a command that
    fails before its run leaves no file behind."""
    from stepswitch.sessions import open_session

    path = tmp_path / "lazy.db"
    session = open_session(f"sqlite:///{path}", "x")
    assert not path.exists()
    asyncio.run(session.close())  # closing an unused session creates nothing either
    assert not path.exists()
    for first_use in ("get_items", "load", "clear_session"):
        session = open_session(f"sqlite:///{path}", "x")
        assert not path.exists()
        asyncio.run(getattr(session, first_use)())
        assert path.exists()
        asyncio.run(session.close())
        path.unlink()
        for extra in ("-wal", "-shm"):
            (tmp_path / f"lazy.db{extra}").unlink(missing_ok=True)
    session = open_session(f"sqlite:///{path}", "x")
    asyncio.run(session.add_items([{"role": "user", "content": "hi"}]))
    assert path.exists()
    asyncio.run(session.close())


@pytest.mark.parametrize(("value", "said"), [
    ("9", r"newer stepswitch \(schema version 9"),
    # no stepswitch wrote a version 0: an edited or foreign store, not read as ours
    ("0", r"say schema version '0', which no stepswitch wrote \(this one reads 1\)"),
    ("x", r"say schema version 'x', which no stepswitch wrote"),
])
def test_a_sqlite_schema_not_this_one_is_refused_and_left_alone(
        tmp_path: Any, value: str, said: str) -> None:
    path = tmp_path / "new.db"
    asyncio.run(SQLiteSession("u", path).load())  # creates the tables
    conn = sqlite3.connect(path)
    conn.execute("UPDATE stepswitch_meta SET value = ? WHERE key = 'schema_version'", (value,))
    conn.commit()
    conn.close()
    from stepswitch.sessions import sqlite as backend

    backend._REGISTRY.clear()  # a new process, as far as the store is concerned
    refused = SQLiteSession("u", path)
    with pytest.raises(ss.SessionError, match=said):
        asyncio.run(refused.load())
    asyncio.run(refused.close())
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM stepswitch_meta").fetchall() == [(value,)]
    conn.close()


def test_newer_postgres_schema_is_refused(pg_schema: str) -> None:
    first = PostgresSession("u", PG_DSN, schema=pg_schema)
    asyncio.run(first.load())
    asyncio.run(first.close())
    conn = pg_connect()
    conn.execute(f'UPDATE "{pg_schema}".stepswitch_meta SET value = \'2\'')
    conn.close()
    fresh = PostgresSession("u", PG_DSN + "?application_name=other", schema=pg_schema)
    with pytest.raises(ss.SessionError, match=r"schema version 2; this one reads 1"):
        asyncio.run(fresh.load())
    asyncio.run(fresh.close())  # its connection too: the test leaves none open


def test_newer_redis_schema_is_refused(redis_prefix: str) -> None:
    import redis

    redis.Redis.from_url(REDIS_URL).set(redis_prefix + "schema", "7")
    with pytest.raises(ss.SessionError, match=r"schema version 7"):
        asyncio.run(RedisSession("u", REDIS_URL, key_prefix=redis_prefix).load())


def test_bad_postgres_schema_name() -> None:
    with pytest.raises(ss.SessionError, match="not a plain name"):
        PostgresSession("u", PG_DSN, schema='x"; drop table y; --')


def test_approval_items_are_not_history() -> None:
    item = ss.runtime.ToolApprovalItem("refund", "process_refund", "c1", "{}")
    with pytest.raises(ss.UserError, match="not conversation history"):
        asyncio.run(MemorySession("u").add_items([item]))


# -- the SDK, both ways -------------------------------------------------------------------


def test_an_sdk_session_runs_a_stepswitch_conversation(tmp_path: Any) -> None:
    from agents import SQLiteSession as SDKSQLiteSession

    sdk = SDKSQLiteSession("chat", str(tmp_path / "sdk.db"))
    session = from_sdk_session(sdk, agent_name="refund")
    machine = support.compile()
    model = ScriptedModel([
        [function_call("transfer_to_refund", {})],
        [assistant_message("Which order?")],
        [assistant_message("Done.")],
    ])
    machine.run_sync("I want a refund", model=model, session=session)
    machine.run_sync("order 42", model=model, session=session)
    assert model.calls[-1].agent == "refund"  # kept by the adapter object
    raw = asyncio.run(sdk.get_items())
    assert raw[0] == {"role": "user", "content": "I want a refund"}
    assert raw[1]["type"] == "function_call" and raw[1]["name"] == "transfer_to_refund"
    assert raw[-1] == {"role": "assistant", "content": "Done."}


def test_a_stepswitch_session_serves_the_sdk_runner() -> None:
    from agents import Agent, Runner
    from agents.items import ModelResponse as SDKResponse
    from agents.memory import Session as SDKSession
    from agents.models.interface import Model as SDKModel
    from agents.usage import Usage as SDKUsage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    class Echo(SDKModel):
        def __init__(self) -> None:
            self.inputs: list[Any] = []

        async def get_response(self, system_instructions: Any, input: Any, *args: Any,
                               **kwargs: Any) -> SDKResponse:
            self.inputs.append(input)
            text = f"seen {len(input)}"
            msg = ResponseOutputMessage(
                id="m", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
            )
            return SDKResponse(output=[msg], usage=SDKUsage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    ours = MemorySession("sdk")
    asyncio.run(ours.add_items([ss.runtime.UserInputItem("earlier")]))
    adapter = to_sdk_session(ours)
    assert isinstance(adapter, SDKSession)
    model = Echo()
    agent = Agent(name="helper", instructions="help", model=model)
    from agents import RunConfig as SDKRunConfig

    result = asyncio.run(Runner.run(agent, "now", session=adapter,
                                    run_config=SDKRunConfig(tracing_disabled=True)))
    assert result.final_output == "seen 2"  # the SDK read our history
    items = asyncio.run(ours.get_items())
    assert [getattr(i, "content", None) for i in items] == ["earlier", "now", "seen 2"]
    # the SDK's item comes back as the SDK wrote it, not narrowed to role and text
    assert asyncio.run(adapter.pop_item()) == {
        "id": "m", "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "seen 2", "annotations": []}],
    }


def test_get_items_returns_stepswitch_items_and_to_sdk_session_dicts() -> None:
    """What docs/sessions.md says the SDK-named methods return: stepswitch items; the
    SDK's dicts only through ``to_sdk_session``."""

    text = (ROOT / "docs/sessions.md").read_text("utf-8")
    doc = " ".join(text.split())
    assert "`get_items` and `pop_item` return stepswitch items" in doc
    assert "Every session has the OpenAI Agents SDK's four methods" not in doc

    async def go() -> None:
        session = MemorySession("u")
        await session.add_items([{"role": "user", "content": "hi"}])
        [item] = await session.get_items()
        assert isinstance(item, ss.runtime.UserInputItem) and item.content == "hi"
        assert await to_sdk_session(session).get_items() == [{"role": "user", "content": "hi"}]

    asyncio.run(go())


def test_to_sdk_session_honours_session_settings() -> None:
    from agents import SessionSettings

    async def go() -> None:
        ours = MemorySession("settings")
        await ours.add_items([ss.runtime.UserInputItem(t) for t in "abcde"])
        adapter = to_sdk_session(ours, session_settings=SessionSettings(limit=2))
        assert [i["content"] for i in await adapter.get_items()] == ["d", "e"]
        assert [i["content"] for i in await adapter.get_items(4)] == ["b", "c", "d", "e"]
        assert await adapter.get_items(0) == []
        assert len(await adapter.get_items(-1)) == 5  # as the SDK's SQLiteSession: all
        adapter.session_settings = {"limit": 3}
        assert [i["content"] for i in await adapter.get_items()] == ["c", "d", "e"]
        adapter.session_settings = None
        assert len(await adapter.get_items()) == 5


@pytest.mark.parametrize("content", [b"", b"print('a package')\n", b"SQLite format 2\x00junk"])
def test_an_existing_file_that_is_not_a_database_is_refused_and_left_alone(
    tmp_path: Any, content: bytes
) -> None:
    """``--session sqlite:///pkg/__init__.py``: SQLite would make an empty file (or, on
    its first write, any file) a database; the file must stay as it was."""
    path = tmp_path / "__init__.py"
    path.write_bytes(content)
    session = SQLiteSession("u", path)
    with pytest.raises(ss.SessionError, match=r"refusing SQLite file .*__init__\.py: the file "
                       r"exists and (is empty|is not an SQLite database)") as info:
        asyncio.run(session.append([ss.runtime.UserInputItem("hi")], operation_id="o",
                                   expected_version=None, current_agent=None))
    assert "\n" not in str(info.value)
    asyncio.run(session.close())
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["__init__.py"]


def test_a_fifo_is_never_opened_as_a_sqlite_store(tmp_path: Any) -> None:
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    session = SQLiteSession("u", fifo)
    with pytest.raises(ss.SessionError, match="not a regular file"):
        asyncio.run(session.load())  # would block forever reading the header
    asyncio.run(session.close())


def test_a_new_sqlite_file_is_a_database_at_once_and_an_existing_one_is_reused(
    tmp_path: Any,
) -> None:
    path = tmp_path / "new.db"
    first = SQLiteSession("u", path)
    asyncio.run(first.append([ss.runtime.UserInputItem("hi")], operation_id="o",
                             expected_version=0, current_agent=None))
    asyncio.run(first.close())
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.db"]  # no temporary left
    again = SQLiteSession("u", path)
    assert asyncio.run(again.load()).version == 1
    asyncio.run(again.close())
    other = tmp_path / "theirs.db"  # a database of someone else's: gets the tables
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    s = SQLiteSession("u", other)
    assert asyncio.run(s.load()).version == 0
    asyncio.run(s.close())


def test_cli_refuses_a_session_file_that_is_not_a_database(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from stepswitch.cli.main import main

    monkeypatch.chdir(ROOT)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"steps": [{"output": [{"type": "message", "text": "hi"}]}]}))
    code = main(["run", "graphs/support.py:support", "--input", "hi", "--model",
                 f"scripted:{script}", "--session", f"sqlite:///{pkg}/__init__.py"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "refusing SQLite file" in err and "is empty" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert (pkg / "__init__.py").read_bytes() == b""


def test_cli_resume_from_another_folder_names_the_store_not_a_race(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run paused with a relative ``sqlite:///`` store, resumed from another folder:
    refused before a new empty file is made there (which the resume would then call a
    session that "moved on"); the printed continue-command works from anywhere."""
    from stepswitch.cli.main import main

    target = str(ROOT / "graphs/support.py") + ":support"
    script = str(ROOT / "examples/support_script.json")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    state = tmp_path / "rel.json"
    monkeypatch.chdir(tmp_path / "a")
    assert main(["run", target, "--input", "refund order 42", "--model", f"scripted:{script}",
                 "--approve", "none", "--session", "sqlite:///rel.db", "--session-id", "eve",
                 "--state", str(state)]) == 0
    err = capsys.readouterr().err
    assert f"--session sqlite:///{tmp_path}/a/rel.db --session-id eve" in err
    monkeypatch.chdir(tmp_path / "b")
    resume = ["run", target, "--resume", str(state), "--approve", "all", "--model",
              f"scripted:{script}", "--session-id", "eve", "--session"]
    assert main([*resume, "sqlite:///rel.db"]) == 2
    err = capsys.readouterr().err
    assert f"there is no such file ({tmp_path}/b/rel.db)" in err
    assert "had items when it was taken" in err
    assert not (tmp_path / "b" / "rel.db").exists()
    # an empty store elsewhere (not a missing file) is named as such too, not a race
    other = SQLiteSession("someone-else", tmp_path / "b" / "other.db")
    asyncio.run(other.load())
    asyncio.run(other.close())
    assert main([*resume, "sqlite:///other.db"]) == 1
    err = capsys.readouterr().err
    assert "holds nothing in this store (version 0), but the state was taken at its " in err
    assert "moved on" not in err
    assert main([*resume, f"sqlite:///{tmp_path}/a/rel.db"]) == 0
    assert "Done: order 42 is refunded in full." in capsys.readouterr().out


def test_cli_refuses_a_session_in_memory(capsys: pytest.CaptureFixture[str]) -> None:
    from stepswitch.cli.main import main

    code = main(["run", str(ROOT / "graphs/support.py") + ":support", "--input", "x",
                 "--model", f"scripted:{ROOT / 'examples/support_script.json'}",
                 "--session", "sqlite:///:memory:"])
    assert code == 2
    assert "lives only in this process" in capsys.readouterr().err


def _store(kind: str, tmp_path: Any, pg_schema: str, redis_prefix: str, sid: str) -> Any:
    if kind == "memory":
        return MemorySession(sid)
    if kind == "sqlite":
        return SQLiteSession(sid, tmp_path / "s.db")
    if kind == "postgres":
        return PostgresSession(sid, PG_DSN, schema=pg_schema)
    return RedisSession(sid, REDIS_URL, key_prefix=redis_prefix)


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres", "redis"])
def test_lone_surrogates_are_kept_exactly_in_every_store(
    kind: str, tmp_path: Any, pg_schema: str, redis_prefix: str
) -> None:
    """Text decoded with surrogateescape (``--input $'caf\\xe9'``, a file name a tool
    read from disk): the append failed on every retry with a UnicodeEncodeError."""
    from stepswitch.runtime import MessageOutputItem, ToolCallOutputItem, UserInputItem

    items = [
        UserInputItem("caf\udce9"),
        ToolCallOutputItem(agent="triage", call_id="c\udc80", output="r\udcf6sum\udce9.txt",
                           name="ls"),
        MessageOutputItem(agent="triage", content="lone high \ud800 and low \udfff"),
    ]

    async def go() -> None:
        s = _store(kind, tmp_path, pg_schema, redis_prefix, "u")
        try:
            version = await s.append(items, operation_id="op-1", expected_version=0,
                                     current_agent="triage")
            # the retry of the same operation is a replay, not a failure or a second copy
            assert await s.append(items, operation_id="op-1", expected_version=0,
                                  current_agent="triage") == version == 1
            await s.add_items([UserInputItem("again \udce9")])
            assert await s.get_items() == [*items, UserInputItem("again \udce9")]
            assert await s.pop_item() == UserInputItem("again \udce9")
            snap = await s.load(limit=2)
            assert snap.items == tuple(items[1:]) and snap.version == 3
        finally:
            await s.close()

    asyncio.run(go())


def test_to_sdk_session_raises_what_the_sdk_session_raises(tmp_path: Any) -> None:
    """An item that is not JSON is a TypeError from the SDK's own SQLiteSession; the
    adapter raises the same, before anything is stored."""
    from agents import SQLiteSession as SDKSQLiteSession

    async def go() -> None:
        theirs = SDKSQLiteSession("t", str(tmp_path / "sdk.db"))
        ours = to_sdk_session(MemorySession("t"))
        bad = [{"role": "user", "content": "ok"}, {"role": "user", "content": object()}]
        for session in (theirs, ours):
            with pytest.raises(TypeError):
                await session.add_items(bad)  # type: ignore[arg-type]
            assert await session.get_items() == []
        theirs.close()

    asyncio.run(go())


def test_an_sdk_item_stepswitch_cannot_read_is_still_kept(tmp_path: Any) -> None:
    """The adapter keeps what the SDK gives it, even a message stepswitch has no form
    for: it comes back as written, and stepswitch's own view leaves it out."""

    async def go() -> None:
        session = SQLiteSession("odd", str(tmp_path / "s.db"))
        odd = [{"type": "message", "role": "critic", "content": 5, "extra": [1.5, None]},
               {"type": "future_item", "payload": {"k": "v"}},
               {"role": "user", "content": "hello"}]
        await to_sdk_session(session).add_items(odd)
        assert await to_sdk_session(session).get_items() == odd
        assert await session.get_items() == [ss.runtime.UserInputItem("hello")]
        assert (await session.load()).version == 1
        await session.close()

    asyncio.run(go())


def test_from_sdk_session_reads_the_sdks_items(tmp_path: Any) -> None:
    """Items the SDK wrote (a reasoning item among them) are read in stepswitch's view;
    the version is the item count; a pop gives back what it removed."""
    from agents import SQLiteSession as SDKSQLiteSession

    async def go() -> None:
        sdk = SDKSQLiteSession("mixed", str(tmp_path / "sdk.db"))
        reasoning: Any = {"type": "reasoning", "id": "rs_1", "summary": [],
                     "encrypted_content": "enc"}
        odd: Any = {"type": "no_such_item", "x": 1}
        reply: Any = {"type": "message", "role": "assistant", "id": "m",
                      "content": [{"type": "output_text", "text": "hello", "annotations": []}]}
        await sdk.add_items([{"role": "user", "content": "hi"}, reasoning, reply])
        session = from_sdk_session(sdk, agent_name="desk")
        snap = await session.load()
        assert snap.items == (ss.runtime.UserInputItem("hi"),
                              ss.runtime.ResponsesItem("desk", reasoning),
                              ss.runtime.MessageOutputItem("desk", "hello"))
        assert snap.version == 3
        assert (await session.load(limit=2)).items == snap.items[1:]
        assert (await session.load(limit=9)).items == snap.items
        await sdk.add_items([odd])
        with pytest.raises(ss.StateError, match="stored item 3"):
            await session.load()
        assert await session.pop_item() == odd  # removed: given back, not lost
        assert await session.pop_item() == ss.runtime.MessageOutputItem("desk", "hello")
        assert await session.pop_item() == ss.runtime.ResponsesItem("desk", reasoning)
        assert (await session.load()).version == 1
        sdk.close()

    asyncio.run(go())


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres", "redis"])
def test_a_session_id_that_is_not_text_is_refused_at_the_door(
    kind: str, tmp_path: Any, pg_schema: str, redis_prefix: str
) -> None:
    with pytest.raises(ss.SessionError, match="is not text: it holds a lone surrogate"):
        _store(kind, tmp_path, pg_schema, redis_prefix, "user-\udce9")


def test_a_run_with_a_surrogate_input_appends_it_to_its_session(tmp_path: Any) -> None:
    session = SQLiteSession("u", tmp_path / "r.db")
    model = ScriptedModel([[assistant_message("hello")]])
    result = support.compile().run_sync("caf\udce9", model=model, session=session)
    assert result.final_output == "hello"
    stored = asyncio.run(session.get_items())
    assert stored[0] == ss.runtime.UserInputItem("caf\udce9")
    asyncio.run(session.close())
