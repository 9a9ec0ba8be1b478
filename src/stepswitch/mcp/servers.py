"""MCP server declarations (``ss.MCPServerStdio``, ``ss.MCPServerStreamableHttp``) and
the function tools an agent gets from a server's lock entry.

Nothing here starts a server: an agent's MCP tools come from ``stepswitch.mcp.lock``
(the nearest one in the declaring file's folder or above), so ``check`` reads them
offline. A run connects on the first call, lists the tools once per run and compares
them with the lock before any call goes out.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from stepswitch._site import Site, caller_site
from stepswitch.dsl.servers import ToolServer
from stepswitch.dsl.tools import _DEFAULT, FunctionTool
from stepswitch.errors import MCPServerError, ToolTimeoutError, UserError
from stepswitch.mcp import lock as _lock
from stepswitch.schema import strictify

if TYPE_CHECKING:
    from stepswitch.graph.spec import Location, MCPServerSpec

__all__ = [
    "MCPServer",
    "MCPServerSse",
    "MCPServerStdio",
    "MCPServerStreamableHttp",
    "RequireApproval",
    "begin_run",
    "mcp_tools",
]

RequireApproval = Literal["always", "never"] | Mapping[str, Any]
"""``"always"``, ``"never"``, a tool → bool map, or the SDK's
``{"always": {"tool_names": [...]}, "never": {"tool_names": [...]}}``."""


class MCPServer(ToolServer):
    """What every kind of server declares. Build one with :class:`MCPServerStdio`,
    :class:`MCPServerStreamableHttp` or :class:`MCPServerSse`."""

    transport_kind = ""

    def __init__(
        self,
        name: str,
        *,
        tool_filter: Sequence[str] | Mapping[str, Sequence[str]] | None,
        require_approval: RequireApproval,
        timeout: float,
        startup_timeout: float,
        site: Site,
    ) -> None:
        what = f"{type(self).__name__}({name!r})"
        if not isinstance(name, str) or not name.strip():
            raise UserError(f"{type(self).__name__} at {site}: name: expected a non-empty "
                            f"string, got {name!r}")
        for field, value in (("timeout", timeout), ("startup_timeout", startup_timeout)):
            if type(value) not in (int, float) or not 0 < value < float("inf"):
                raise UserError(f"{what} at {site}: {field}: expected a positive number of "
                                f"seconds, got {value!r}")
        self.name = name
        self.site = site
        self.timeout = float(timeout)
        """Seconds listing the tools or one call may take (not the start: see below)."""
        self.startup_timeout = float(startup_timeout)
        """Seconds the server may take to start and answer MCP's handshake."""
        self.allowed, self.blocked = _filter(what, site, tool_filter)
        self.tool_filter = tool_filter
        self.approval_default, self.approval_map = _approval(what, site, require_approval)
        self.require_approval = require_approval
        self._tools: dict[str, FunctionTool] = {}
        self._where: tuple[str, str] | None = None
        self.import_path: Callable[[], tuple[str, str] | None] | None = None
        """How to find :meth:`import_name` when the module-level name holds another object
        this server was read from (``from_sdk``: the SDK's server)."""

    # -- the lock -----------------------------------------------------------------------

    @property
    def lock_path(self) -> Path | None:
        """The lock this server's tools are read from (None: there is none)."""
        return _lock.find_lock(Path(self.site.file).resolve().parent)

    def locked(self) -> dict[str, Any] | None:
        """This server's lock entry (``{"transport", "tools"}``), or None: none, or one
        written for a server of another transport (see :meth:`stale_transport`)."""
        entry = self._lock_entry()
        return entry if entry is not None and entry["transport"] == self.transport_kind \
            else None

    def stale_transport(self) -> str | None:
        """The transport of the lock's entry under this server's name when it is not this
        server's (the entry was written for another server: its tools are not used)."""
        entry = self._lock_entry()
        if entry is None or entry["transport"] == self.transport_kind:
            return None
        return str(entry["transport"])

    def _lock_entry(self) -> dict[str, Any] | None:
        path = self.lock_path
        if path is None:
            return None
        entry: dict[str, Any] | None = _lock.read_lock(path).get(self.name)
        return entry

    def offered(self, name: str) -> bool:
        """The filter lets the model see tool ``name``."""
        if self.allowed is not None and name not in self.allowed:
            return False
        return name not in self.blocked

    def needs_approval(self, name: str) -> bool:
        return self.approval_map.get(name, self.approval_default)

    def function_tools(self) -> list[FunctionTool]:
        """The tools the filter offers, as locked, in name order (made once each)."""
        entry = self.locked()
        if entry is None:
            return []
        where = self.import_name()
        out = []
        for name, locked in sorted(entry["tools"].items()):
            if not self.offered(name):
                continue
            tool = self._tools.get(name)
            if tool is None or tool.mcp_entry != locked:  # type: ignore[attr-defined]
                tool = self._tools[name] = _function_tool(self, name, locked)
            if where is not None:  # what a generated runner imports: module:server.tools.x
                tool.__module__, tool.__qualname__ = where[0], f"{where[1]}.tools.{name}"
            out.append(tool)
        return out

    def to_spec(
        self, location: Callable[[Site], Location]
    ) -> tuple[MCPServerSpec, list[FunctionTool]]:
        from stepswitch.mcp.spec import server_spec

        return server_spec(self, location), self.function_tools()

    @property
    def tools(self) -> _Tools:
        """The offered tools by name (``server.tools.add``): a generated runner imports
        an MCP tool as ``module:server.tools.add``, so it reaches the server the module
        declares, with the tools of the lock beside that module."""
        return _Tools(self)

    def import_name(self) -> tuple[str, str] | None:
        """``(module, name)`` of the module-level name that holds this server, looked up
        in the module of the declaring file; None when no such name holds it (declared
        inline in a list, or in a module not imported)."""
        if self._where is None and self.import_path is not None:
            self._where = self.import_path()
        elif self._where is None:
            import sys

            for module in list(sys.modules.values()):
                if getattr(module, "__file__", None) != self.site.file:
                    continue
                for key, value in list(vars(module).items()):
                    if value is self and key.isidentifier():
                        self._where = (module.__name__, key)
                        break
        return self._where

    # -- running ------------------------------------------------------------------------

    def transport(self) -> AbstractAsyncContextManager[Any]:
        raise NotImplementedError

    def error(self, what: str, hint: str | None = None) -> MCPServerError:
        return MCPServerError(f"MCP server {self.name!r} (declared at {self.site}) {what}",
                              hint=hint)

    async def list_tools(self) -> dict[str, _lock.LockedTool]:
        """Start (or reuse) the connection and list its tools as lock entries."""
        from stepswitch.mcp import _client

        async def listed() -> dict[str, _lock.LockedTool]:
            conn = await _client.connection(self)
            try:
                tools = await asyncio.wait_for(conn.list_tools(), self.timeout)
            except TimeoutError:
                _client.drop(self)
                raise self.error(f"did not list its tools within {self.timeout:g} s") from None
            except MCPServerError:
                raise
            except Exception as exc:
                _client.drop(self)
                raise self.error(f"failed to list its tools: {exc}") from None
            return {t.name: _entry(t) for t in tools}

        return await asyncio.wrap_future(_client.on_loop(listed()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class _Tools:
    """``server.tools``: the server's offered tools as attributes (made from its lock)."""

    __slots__ = ("_server",)

    def __init__(self, server: MCPServer) -> None:
        self._server = server

    def __getattr__(self, name: str) -> FunctionTool:
        if name.startswith("__"):
            raise AttributeError(name)
        server = self._server
        for tool in server.function_tools():
            if tool.name == name:
                return tool
        lock = server.lock_path
        where = f"the lock {lock}" if lock is not None else "no lock (none found)"
        raise UserError(
            f"MCP server {server.name!r} (declared at {server.site}) offers no tool {name!r}: "
            f"{where} does not list it, or tool_filter leaves it out; run `stepswitch mcp "
            "lock`, then regenerate the runner (`stepswitch compile`)"
        )


class MCPServerStdio(MCPServer):
    """A server run as a subprocess speaking MCP over its stdin and stdout."""

    transport_kind = "stdio"

    def __init__(
        self,
        name: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        tool_filter: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        require_approval: RequireApproval = "never",
        timeout: float = 30.0,
        startup_timeout: float = 30.0,
    ) -> None:
        site = caller_site()
        super().__init__(name, tool_filter=tool_filter, require_approval=require_approval,
                         timeout=timeout, startup_timeout=startup_timeout, site=site)
        if not isinstance(command, str) or not command:
            raise UserError(f"MCPServerStdio({name!r}) at {site}: command: expected a "
                            f"program to run, got {command!r}")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise UserError(f"MCPServerStdio({name!r}) at {site}: args: expected a list "
                            f"of strings, got {args!r}")
        self.command = command
        self.args = list(args)
        self.env = dict(env) if env is not None else None
        self.cwd = str(cwd) if cwd is not None else None

    def transport(self) -> AbstractAsyncContextManager[Any]:
        import os
        import sys

        from mcp.client.stdio import StdioServerParameters, stdio_client

        env = None if self.env is None else {**os.environ, **self.env}
        params = StdioServerParameters(command=self.command, args=self.args, env=env,
                                       cwd=self.cwd)
        return stdio_client(params, errlog=_errlog(sys.stderr, sys.__stderr__))


def _errlog(*streams: Any) -> Any:
    """Where a server's stderr goes: the first stream that is a real file (a captured
    ``sys.stderr`` has no file descriptor for a subprocess to write to)."""
    import os

    for stream in streams:
        try:
            stream.fileno()
            return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")


class _HttpServer(MCPServer):
    """What the two HTTP transports share: a URL checked at the declaration, and headers."""

    def __init__(
        self,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        tool_filter: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        require_approval: RequireApproval = "never",
        timeout: float = 30.0,
        startup_timeout: float = 30.0,
        site: Site | None = None,
    ) -> None:
        site = site or caller_site()
        super().__init__(name, tool_filter=tool_filter, require_approval=require_approval,
                         timeout=timeout, startup_timeout=startup_timeout, site=site)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise UserError(f"{type(self).__name__}({name!r}) at {site}: url: expected an "
                            f"http:// or https:// URL, got {url!r}")
        self.url = url
        self.headers = dict(headers or {})


class MCPServerStreamableHttp(_HttpServer):
    """A server reached over MCP's streamable HTTP transport at ``url``."""

    transport_kind = "streamable_http"

    def transport(self) -> AbstractAsyncContextManager[Any]:
        from contextlib import asynccontextmanager

        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        @asynccontextmanager
        async def opened() -> Any:
            async with (
                create_mcp_http_client(headers=self.headers or None) as http,
                streamable_http_client(self.url, http_client=http) as streams,
            ):
                yield streams

        return opened()


class MCPServerSse(_HttpServer):
    """A server reached over MCP's older HTTP+SSE transport at ``url`` (``ss.MCPServerSse``;
    what ``from_sdk`` reads an SDK ``MCPServerSse`` as)."""

    transport_kind = "sse"

    def transport(self) -> AbstractAsyncContextManager[Any]:
        from mcp.client.sse import sse_client

        return sse_client(self.url, headers=self.headers or None, timeout=self.startup_timeout)


def _filter(
    what: str, site: Site, value: Any
) -> tuple[frozenset[str] | None, frozenset[str]]:
    if value is None:
        return None, frozenset()
    if isinstance(value, Mapping):
        unknown = set(value) - {"allowed_tool_names", "blocked_tool_names"}
        allowed = value.get("allowed_tool_names")
        blocked = value.get("blocked_tool_names") or ()
        if not unknown and _names(allowed, True) and _names(blocked, False):
            return (None if allowed is None else frozenset(allowed)), frozenset(blocked)
    elif _names(value, False):
        return frozenset(value), frozenset()
    raise UserError(
        f"{what} at {site}: tool_filter: expected a list of tool names or "
        f"{{'allowed_tool_names': [...], 'blocked_tool_names': [...]}}, got {value!r}"
    )


def _names(value: Any, optional: bool) -> bool:
    if value is None:
        return optional
    return not isinstance(value, str | bytes) and isinstance(value, Sequence | frozenset | set) \
        and all(isinstance(n, str) for n in value)


def _approval(what: str, site: Site, value: Any) -> tuple[bool, dict[str, bool]]:
    if value in ("always", "never"):
        return value == "always", {}
    if isinstance(value, Mapping):
        if set(value) <= {"always", "never"} and all(isinstance(v, Mapping) for v in
                                                      value.values()):
            table: dict[str, bool] = {}
            for key in ("never", "always"):
                names = value.get(key, {}).get("tool_names", ())
                if not _names(names, False):
                    break
                table.update(dict.fromkeys(names, key == "always"))
            else:
                return False, table
        elif all(isinstance(k, str) and isinstance(v, bool) for k, v in value.items()):
            return False, dict(value)
    raise UserError(
        f"{what} at {site}: require_approval: expected 'always', 'never' or a map of tool "
        f"name to bool, got {value!r}"
    )


def _entry(tool: Any) -> _lock.LockedTool:
    """A listed ``mcp.types.Tool`` as a lock entry."""
    annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) \
        if tool.annotations is not None else None
    return _lock.locked_tool(tool.name, tool.description, tool.input_schema,
                             tool.output_schema, annotations)


# -- the function tools -----------------------------------------------------------------


def _function_tool(server: MCPServer, name: str, locked: Mapping[str, Any]) -> FunctionTool:
    schema = dict(locked.get("input_schema") or {"type": "object", "properties": {}})
    strict = strictify(schema)
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    keys = list(props) if isinstance(props, dict) else []
    # an optional parameter not given is None, which the call leaves out when the schema
    # takes no null (a null it takes is sent: strict mode has the model send every key,
    # so there it was the model's); None, not a sentinel, so the keywords stay JSON for a
    # Temporal activity
    fields: dict[str, Any] = {
        f"p{i}": (Any, Field(... if key in required else None, alias=key))
        for i, key in enumerate(keys)
    }
    validator: list[Any] = []  # made on the first call: check() need not load jsonschema

    def check(cls: Any, data: Any) -> Any:
        if isinstance(data, dict):
            # strict mode made optional parameters required: a null the schema does not
            # take stands for "not given"
            data = {k: v for k, v in data.items()
                    if not (v is None and k not in required and not _takes_null(props.get(k)))}
            if not validator:
                validator.append(_schema_validator(schema))
            problems = sorted(validator[0].iter_errors(data), key=lambda e: list(e.path))
            if problems:
                first = problems[0]
                where = ".".join(str(p) for p in first.path) or "arguments"
                raise ValueError(f"{where}: {first.message}")
        return data

    model: type[BaseModel] = create_model(
        f"MCP_{server.name}_{name}_Args".replace("-", "_"),
        __config__=ConfigDict(extra="ignore", populate_by_name=False,
                              protected_namespaces=()),
        __validators__={"check": cast(Any, model_validator(mode="before"))(classmethod(check))},
        **fields,
    )
    names = dict(zip((f"p{i}" for i in range(len(keys))), keys, strict=True))
    unset_if_none = frozenset(f"p{i}" for i, key in enumerate(keys)
                              if key not in required and not _takes_null(props.get(key)))

    async def call(ctx: Any, **params: Any) -> Any:
        arguments = {names[k]: v for k, v in params.items()
                     if v is not None or k not in unset_if_none}
        return await _call(server, name, arguments, ctx)

    call.__qualname__ = f"<mcp {server.name}>.{name}"
    call.__module__ = __name__
    tool = FunctionTool(
        call,
        name=name,
        description=str(locked.get("description") or ""),
        params_model=model,
        params_json_schema=strict.schema,
        schema_problems=strict.problems,
        strict=True,
        needs_approval=server.needs_approval(name),
        context_type=Any,
        takes_context=True,
        failure_error_function=_DEFAULT,  # a dead server ends the run all the same
        site=server.site,
        timeout=None,  # the call alone is bounded by server.timeout (in _call), not the
        # connecting (startup_timeout) and the listing before a run's first call
    )
    tool.mcp_server = server  # type: ignore[attr-defined]
    tool.mcp_entry = dict(locked)  # type: ignore[attr-defined]
    return tool


def _takes_null(prop: Any) -> bool:
    if not isinstance(prop, dict):
        return True
    kind = prop.get("type")
    if kind is None:
        return "anyOf" not in prop or any(_takes_null(p) for p in prop["anyOf"])
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


def _schema_validator(schema: dict[str, Any]) -> Any:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


# -- a run's view of its servers ----------------------------------------------------------


class _RunState:
    __slots__ = ("checked", "drift")

    def __init__(self, drift: str) -> None:
        self.drift = drift
        self.checked: dict[int, asyncio.Future[None]] = {}


_runs: OrderedDict[str, _RunState] = OrderedDict()
_RUNS_KEPT = 4096


def begin_run(run_id: str, drift: str) -> None:
    """Note a run's drift policy (``RunConfig(mcp_drift=)``); its tool calls find it by
    the run id their idempotency key starts with."""
    _run_state(run_id).drift = drift


def _run_state(run_id: str) -> _RunState:
    state = _runs.get(run_id)
    if state is None:
        state = _runs[run_id] = _RunState("error")
        while len(_runs) > _RUNS_KEPT:
            _runs.popitem(last=False)
    return state


async def _call(server: MCPServer, tool: str, arguments: dict[str, Any], ctx: Any) -> Any:
    from stepswitch.mcp import _client

    key = getattr(ctx, "idempotency_key", None) or ""
    run = _run_state(key.split(":", 1)[0])
    pending = run.checked.get(id(server))
    if pending is None:  # the first call of this run: list once, compare with the lock
        pending = run.checked[id(server)] = asyncio.ensure_future(_compare(server, run.drift))
    try:
        await asyncio.shield(pending)
    except BaseException:
        run.checked.pop(id(server), None)
        raise

    async def called() -> Any:
        conn = await _client.connection(server)  # bounded by startup_timeout
        try:
            return await asyncio.wait_for(conn.call(tool, arguments), server.timeout)
        except TimeoutError:
            raise ToolTimeoutError(tool, server.timeout) from None

    result = await asyncio.wrap_future(_client.on_loop(called()))
    return _output(result)


async def _compare(server: MCPServer, drift: str) -> None:
    listed = await server.list_tools()
    try:
        entry = server.locked()
    except UserError as exc:  # the lock changed under the run: it cannot be trusted now
        raise server.error(f"cannot be checked against its lock: {exc}") from None
    locked = entry["tools"] if entry else {}
    found = _lock.changes(locked, listed)
    if found and drift != "allow":
        raise server.error(
            "no longer matches its lock (" + "; ".join(found) + "); review the change and run "
            "`stepswitch mcp lock` again", hint=DRIFT_HINT)


DRIFT_HINT = ("or allow it: RunConfig(mcp_drift='allow') (on Temporal, "
              "worker_for(..., mcp_drift='allow'))")
"""How a run allows a drifted server, in Python; the CLI says its own flag instead."""


def _output(result: Any) -> Any:
    """What the model sees of a ``CallToolResult``: its text, else its structured content."""
    texts = [getattr(c, "text", None) for c in result.content]
    text = "\n".join(t for t in texts if isinstance(t, str))
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, sort_keys=True)
    if not text and result.content:
        text = json.dumps([c.model_dump(mode="json", by_alias=True) for c in result.content])
    if result.is_error:
        return f"Error: {text}" if text else "Error"
    return text


def mcp_tools(agent: Any) -> list[FunctionTool]:
    """Every MCP tool ``agent`` offers, server by server."""
    out: list[FunctionTool] = []
    for server in getattr(agent, "mcp_servers", ()):
        out.extend(server.function_tools())
    return out
