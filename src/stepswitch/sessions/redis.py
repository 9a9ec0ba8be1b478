"""``RedisSession``: conversations in Redis (redis-py, extra ``stepswitch[redis]``).

Every operation is one Lua script, which Redis runs atomically: the compare-and-append
checks the operation id and the version and pushes the items in one step, and a load
reads the items and the version together. Keys, under ``key_prefix``:
``<prefix><id>:items`` (a list of item JSON), ``<prefix><id>:head`` (a hash: version,
agent) and ``<prefix><id>:ops`` (a hash: operation id → "digest version");
``<prefix>schema`` holds the layout's version.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from stepswitch._site import shadowing
from stepswitch.errors import SessionError
from stepswitch.sessions._base import (
    SCHEMA_VERSION,
    AppendStatus,
    StoreSession,
    check_session_id,
    schema_refusal,
)

__all__ = ["RedisSession"]

_STATUSES: tuple[AppendStatus, ...] = ("ok", "replay", "reused", "conflict")

_LOAD = """
local n = tonumber(ARGV[1])
local rows
if n < 0 then rows = redis.call('LRANGE', KEYS[1], 0, -1)
elseif n == 0 then rows = {}
else rows = redis.call('LRANGE', KEYS[1], -n, -1) end
local head = redis.call('HMGET', KEYS[2], 'version', 'agent')
return {head[1] or '0', head[2] or false, rows}
"""

_APPEND = """
local version = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
local op = ARGV[1]
if op ~= '' then
  local done = redis.call('HGET', KEYS[3], op)
  if done then
    local cut = string.find(done, ' ', 1, true)
    if string.sub(done, 1, cut - 1) == ARGV[2] then
      return {'replay', tonumber(string.sub(done, cut + 1))}
    end
    return {'reused', 0}
  end
end
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= version then return {'conflict', version} end
for i = 6, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
version = version + 1
redis.call('HSET', KEYS[2], 'version', version)
if ARGV[4] == '1' then redis.call('HSET', KEYS[2], 'agent', ARGV[5]) end
if op ~= '' then redis.call('HSET', KEYS[3], op, ARGV[2] .. ' ' .. version) end
return {'ok', version}
"""

_POP = """
local row = redis.call('RPOP', KEYS[1])
if row then redis.call('HINCRBY', KEYS[2], 'version', 1) end
return row
"""

_CLEAR = """
redis.call('DEL', KEYS[1])
redis.call('HDEL', KEYS[2], 'agent')
redis.call('HINCRBY', KEYS[2], 'version', 1)
return 1
"""

_SETUP = """
local found = redis.call('GET', KEYS[1])
if found and found ~= ARGV[1] then
  return found
end
if not found then redis.call('SET', KEYS[1], ARGV[1]) end
return false
"""


def _redis() -> Any:
    shadow = shadowing("redis")
    if shadow is not None:
        raise SessionError(shadow)
    try:
        import redis
    except ImportError:
        raise SessionError("RedisSession needs redis-py: pip install 'stepswitch[redis]'") from None
    return redis


class _Client:
    """One client (with its connection pool) per URL in this process."""

    def __init__(self, url: str) -> None:
        redis = _redis()
        self.url = url
        self.users = 0
        self.ready: set[str] = set()
        self.lock = threading.Lock()
        try:
            self.client = redis.Redis.from_url(url, socket_connect_timeout=5)
        except ValueError as exc:
            raise SessionError(f"RedisSession: bad URL {url!r}: {exc}") from None
        pool = self.client.connection_pool
        kw = pool.connection_kwargs
        try:  # builds a connection object without connecting: unknown URL options fail here
            pool.connection_class(**kw)
        except TypeError as exc:
            found = re.search(r"keyword argument '(\w+)'", str(exc))
            option = found.group(1) if found else str(exc)
            raise SessionError(
                f"RedisSession: bad URL {url!r}: unknown option {option!r} (stepswitch "
                "takes ?prefix=...; the others go to redis-py's connection)"
            ) from None
        self.where = f"Redis at {kw.get('host', '?')}:{kw.get('port', '?')}/{kw.get('db', 0)}"
        self.scripts = {
            name: self.client.register_script(text)
            for name, text in (("load", _LOAD), ("append", _APPEND), ("pop", _POP),
                               ("clear", _CLEAR), ("setup", _SETUP))
        }


_REGISTRY: dict[str, _Client] = {}
_REGISTRY_LOCK = threading.Lock()


class _Backend:
    def __init__(self, shared: _Client, prefix: str) -> None:
        self.shared = shared
        self.prefix = prefix
        self.where = f"{shared.where} (keys {prefix}*)"
        self.closed = False

    def _keys(self, session_id: str) -> list[str]:
        p = self.prefix + session_id
        return [p + ":items", p + ":head", p + ":ops"]

    def _run(self, what: str, session_id: str, script: str, keys: list[str],
             args: list[Any]) -> Any:
        if self.closed:
            raise SessionError(f"{what} on a closed session ({self.where})")
        redis = _redis()
        try:
            if self.prefix not in self.shared.ready:
                found = self.shared.scripts["setup"](
                    keys=[self.prefix + "schema"], args=[SCHEMA_VERSION]
                )
                refused = None if found is None else schema_refusal(self.where, found, "keys")
                if refused is not None:
                    raise refused
                self.shared.ready.add(self.prefix)
            return self.shared.scripts[script](keys=keys, args=args)
        except redis.ConnectionError as exc:
            raise SessionError(f"cannot connect to {self.shared.where}: {exc}") from None
        except redis.RedisError as exc:
            raise SessionError(
                f"{what} of session {session_id!r} failed in {self.where}: {exc}"
            ) from None

    def load_rows(self, session_id: str, limit: int | None) -> tuple[list[str], int, str | None]:
        keys = self._keys(session_id)
        version, agent, rows = self._run(
            "load", session_id, "load", keys[:2], [-1 if limit is None else limit]
        )
        return (
            [r.decode("utf-8", "surrogateescape") for r in rows],
            int(version),
            agent.decode() if agent else None,
        )

    def append_rows(
        self,
        session_id: str,
        rows: list[str],
        operation_id: str | None,
        digest: str,
        expected_version: int | None,
        current_agent: str | None,
    ) -> tuple[AppendStatus, int]:
        args: list[Any] = [
            operation_id or "",
            digest,
            "" if expected_version is None else expected_version,
            "0" if current_agent is None else "1",
            current_agent or "",
            *rows,
        ]
        status, version = self._run(
            "append", session_id, "append", self._keys(session_id), args
        )
        text = status.decode() if isinstance(status, bytes) else str(status)
        for known in _STATUSES:
            if text == known:
                return known, int(version)
        raise SessionError(f"append to session {session_id!r}: unexpected reply {text!r}")

    def pop_row(self, session_id: str) -> str | None:
        row = self._run("pop_item", session_id, "pop", self._keys(session_id)[:2], [])
        return None if row is None else str(row.decode("utf-8", "surrogateescape"))

    def clear(self, session_id: str) -> None:
        self._run("clear_session", session_id, "clear", self._keys(session_id)[:2], [])

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with _REGISTRY_LOCK:
            self.shared.users -= 1
            if self.shared.users > 0:
                return
            if _REGISTRY.get(self.shared.url) is self.shared:
                del _REGISTRY[self.shared.url]
        self.shared.client.close()


class RedisSession(StoreSession):
    """A conversation in Redis at ``url`` (``redis://host:port/db``), its keys under
    ``key_prefix``."""

    def __init__(self, session_id: str, url: str, *, key_prefix: str = "stepswitch:") -> None:
        check_session_id(session_id)
        if not isinstance(key_prefix, str):
            raise SessionError("RedisSession: key_prefix must be a string")
        with _REGISTRY_LOCK:
            shared = _REGISTRY.get(url)
            if shared is None:
                shared = _REGISTRY[url] = _Client(url)
            shared.users += 1
        super().__init__(session_id, _Backend(shared, key_prefix))
        self.url = url
        self.key_prefix = key_prefix
