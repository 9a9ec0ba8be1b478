"""``stepswitch.mcp.lock``: the reviewed contract of each MCP server's tools.

The lock is JSON, keys sorted, two-space indented, one line per field: a diff of two
locks shows exactly which tool changed and how. Per server and tool it keeps the name,
the description, the input and output schema, the annotations and a SHA-256 of each
(``sha256.tool`` covers all four). Reading a lock checks its shape and that each entry
hashes to its stored ``sha256``: an entry edited by hand fails closed, never read as
reviewed. Pure functions, no I/O but the readers and :func:`write_lock`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stepswitch.errors import UserError

__all__ = [
    "LOCK_NAME",
    "LOCK_VERSION",
    "TRANSPORTS",
    "LockedTool",
    "changes",
    "find_lock",
    "lock_text",
    "locked_tool",
    "read_lock",
    "read_lock_to_replace",
    "write_lock",
]

LOCK_NAME = "stepswitch.mcp.lock"
LOCK_VERSION = 1
_PARTS = ("description", "input_schema", "output_schema", "annotations")

LockedTool = dict[str, Any]
"""One tool's entry: name, the four parts, and ``sha256`` of each part and the whole."""


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def locked_tool(
    name: str,
    description: str | None,
    input_schema: Mapping[str, Any] | None,
    output_schema: Mapping[str, Any] | None,
    annotations: Mapping[str, Any] | None,
) -> LockedTool:
    """The lock entry of one listed tool."""
    entry: LockedTool = {
        "name": name,
        "description": description or "",
        "input_schema": dict(input_schema or {}),
        "output_schema": dict(output_schema) if output_schema else None,
        "annotations": {k: v for k, v in dict(annotations or {}).items() if v is not None},
    }
    sums = {part: _digest(entry[part]) for part in _PARTS}
    sums["tool"] = _digest({part: entry[part] for part in ("name", *_PARTS)})
    entry["sha256"] = sums
    return entry


def lock_text(servers: Mapping[str, Mapping[str, Any]]) -> str:
    """The lock file's text for ``{server name: {"transport": ..., "tools": {...}}}``."""
    doc = {"version": LOCK_VERSION, "servers": servers}
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_lock(path: Path, servers: Mapping[str, Mapping[str, Any]]) -> None:
    path.write_text(lock_text(servers), encoding="utf-8")


_CACHE: dict[Path, tuple[int, int, dict[str, Any]]] = {}
TRANSPORTS = ("stdio", "streamable_http", "sse")


class _Invalid(Exception):
    """What is wrong with a lock (caught in this module, raised as a ``UserError``)."""


def read_lock(path: Path) -> dict[str, Any]:
    """The lock's servers (``{name: {"transport", "tools"}}``); cached by mtime and size.
    A lock that is not one, whose entries have the wrong shape, or whose fields do not
    hash to their stored ``sha256`` (edited by hand) is a ``UserError`` naming the file
    and the entry: a lock that cannot be trusted is never read as if it could."""
    try:
        return _read(path)
    except _Invalid as exc:
        raise UserError(f"{path}: {exc}; run `stepswitch mcp lock` again") from None


def read_lock_to_replace(path: Path) -> tuple[dict[str, Any], str | None]:
    """What ``mcp lock`` writes over: the lock's servers, or (when it is not a valid
    lock) none and what is wrong with it. A missing file has no servers."""
    if not path.exists():
        return {}, None
    try:
        return _read(path), None
    except _Invalid as exc:
        return {}, str(exc)


def _read(path: Path) -> dict[str, Any]:
    try:
        stat = path.stat()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the MCP lock: {exc.strerror}") from None
    cached = _CACHE.get(path)
    if cached is not None and cached[:2] == (stat.st_mtime_ns, stat.st_size):
        return cached[2]
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise _Invalid(f"not an MCP lock (not UTF-8 text: {exc.reason})") from None
    except ValueError as exc:
        raise _Invalid(f"not an MCP lock (invalid JSON: {exc})") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the MCP lock: {exc.strerror}") from None
    servers = doc.get("servers") if isinstance(doc, dict) else None
    if not isinstance(servers, dict) or doc.get("version") != LOCK_VERSION:
        raise _Invalid(f"not an MCP lock of version {LOCK_VERSION}")
    for name, server in servers.items():
        _check_server(name, server)
    _CACHE[path] = (stat.st_mtime_ns, stat.st_size, servers)
    return servers


def _check_server(name: str, server: Any) -> None:
    what = f"MCP server {name!r}"
    if not isinstance(server, dict):
        raise _Invalid(f"{what}: expected an object with \"transport\" and \"tools\", "
                       f"got {_shown(server)}")
    for field in ("transport", "tools"):
        if field not in server:
            raise _Invalid(f"{what}: {field}: missing")
    if server["transport"] not in TRANSPORTS:
        raise _Invalid(f"{what}: transport: expected one of {', '.join(TRANSPORTS)}, got "
                       f"{_shown(server['transport'])}")
    tools = server["tools"]
    if not isinstance(tools, dict):
        raise _Invalid(f"{what}: tools: expected an object of tool name to entry, got "
                       f"{_shown(tools)}")
    for tool, entry in tools.items():
        _check_tool(f"{what}: tool {tool!r}", tool, entry)


_SHAPES: tuple[tuple[str, tuple[type, ...], str], ...] = (
    ("name", (str,), "a string"),
    ("description", (str,), "a string"),
    ("input_schema", (dict,), "an object"),
    ("output_schema", (dict, type(None)), "an object or null"),
    ("annotations", (dict,), "an object"),
    ("sha256", (dict,), "an object"),
)


def _check_tool(what: str, name: str, entry: Any) -> None:
    if not isinstance(entry, dict):
        raise _Invalid(f"{what}: expected an object, got {_shown(entry)}")
    for field, kinds, expected in _SHAPES:
        if field not in entry:
            raise _Invalid(f"{what}: {field}: missing")
        if not isinstance(entry[field], kinds):
            raise _Invalid(f"{what}: {field}: expected {expected}, got "
                           f"{_shown(entry[field])}")
    if entry["name"] != name:
        raise _Invalid(f"{what}: name: {entry['name']!r} is not the name it is kept under")
    sums = entry["sha256"]
    wanted = {part: _digest(entry[part]) for part in _PARTS}
    wanted["tool"] = _digest({part: entry[part] for part in ("name", *_PARTS)})
    for part, digest in wanted.items():
        if sums.get(part) != digest:
            field = "sha256.tool does not match the entry" if part == "tool" else \
                f"sha256.{part} does not match its {part}"
            raise _Invalid(f"{what}: {field} (the lock was edited after `stepswitch mcp "
                           "lock` wrote it), so it cannot be trusted")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def find_lock(start: Path) -> Path | None:
    """The nearest ``stepswitch.mcp.lock`` in ``start`` (a folder) or a folder above it."""
    for folder in (start, *start.parents):
        candidate = folder / LOCK_NAME
        if candidate.is_file():
            return candidate
    return None


def changes(locked: Mapping[str, LockedTool], listed: Mapping[str, LockedTool]) -> list[str]:
    """What differs between a server's locked and listed tools, one line each, sorted:
    ``added tool 'x'``, ``removed tool 'x'``, ``tool 'x': description changed`` (and
    ``input_schema``, ``output_schema``, ``annotations``). Empty: no drift."""
    out: list[str] = []
    for name in sorted(set(locked) | set(listed)):
        if name not in locked:
            out.append(f"added tool {name!r}")
        elif name not in listed:
            out.append(f"removed tool {name!r}")
        else:
            was, now = locked[name].get("sha256", {}), listed[name]["sha256"]
            for part in _PARTS:
                if was.get(part) != now[part]:
                    out.append(f"tool {name!r}: {part.replace('_', ' ')} changed")
    return out
