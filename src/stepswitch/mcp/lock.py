"""``stepswitch.mcp.lock``: the reviewed contract of each MCP server's tools.

The lock is JSON, keys sorted, two-space indented, one line per field: a diff of two
locks shows exactly which tool changed and how. Per server and tool it keeps the name,
the description, the input and output schema, the annotations and a SHA-256 of each
(``sha256.tool`` covers all four). Pure functions, no I/O but :func:`read_lock` and
:func:`write_lock`.
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
    "LockedTool",
    "changes",
    "find_lock",
    "lock_text",
    "locked_tool",
    "read_lock",
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


def read_lock(path: Path) -> dict[str, Any]:
    """The lock's servers (``{name: {"transport", "tools"}}``); cached by mtime and size.
    A lock that is not one is a ``UserError`` naming the file."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the MCP lock: {exc.strerror}") from None
    cached = _CACHE.get(path)
    if cached is not None and cached[:2] == (stat.st_mtime_ns, stat.st_size):
        return cached[2]
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not an MCP lock (invalid JSON: {exc}); run "
                        "`stepswitch mcp lock` again") from None
    servers = doc.get("servers") if isinstance(doc, dict) else None
    if not isinstance(servers, dict) or doc.get("version") != LOCK_VERSION or not all(
        isinstance(s, dict) and isinstance(s.get("tools"), dict) for s in servers.values()
    ):
        raise UserError(f"{path}: not an MCP lock of version {LOCK_VERSION}; run "
                        "`stepswitch mcp lock` again")
    _CACHE[path] = (stat.st_mtime_ns, stat.st_size, servers)
    return servers


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
