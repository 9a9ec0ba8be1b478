"""``stepswitch mcp lock TARGET… [-o FILE] [--check]``: start each MCP server the
workflows declare, list its tools and write (or, with ``--check``, compare with) the
lock ``stepswitch.mcp.lock``.

Exit 0 written or unchanged, 1 when ``--check`` finds drift, 2 when a target does not
load or a server cannot be started or listed (one line naming it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from stepswitch._visible import visible
from stepswitch.errors import MCPServerError, UserError
from stepswitch.targets.load import load_targets


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("mcp", help="lock the tools of the workflows' MCP servers")
    actions = p.add_subparsers(dest="mcp_command", metavar="ACTION")
    lock = actions.add_parser(
        "lock",
        help="start each MCP server, list its tools and write stepswitch.mcp.lock",
        description="Start each MCP server the TARGETs declare (bounded by the server's "
        "startup_timeout= and timeout=), list its tools and write them to the lock. With "
        "--check, write nothing and exit 1 when the servers' tools differ from the lock. "
        "Without --check, a lock that is not a valid one is replaced (a warning says so).",
    )
    lock.add_argument("targets", nargs="+", metavar="TARGET")
    lock.add_argument("-o", "--output", default=None, metavar="FILE",
                      help="the lock file (default: the servers' own stepswitch.mcp.lock, "
                      "else one beside the file that declares the first server). check, "
                      "run and compile read only the nearest stepswitch.mcp.lock in the "
                      "declaring file's folder or above it: a lock written elsewhere is for "
                      "`mcp lock --check -o FILE`, not for them")
    lock.add_argument("--check", action="store_true",
                      help="compare with the lock instead of writing; exit 1 on drift")
    lock.set_defaults(func=run)
    p.set_defaults(func=_usage, parser=p)


def _usage(args: argparse.Namespace) -> int:
    args.parser.print_help(sys.stderr)
    return 2


def servers_of(targets: list[str]) -> tuple[list[Any], list[Any]]:
    """Every MCP server the targets' workflows declare, each once, in order, and the SDK
    servers read as opaque tools (they set what stepswitch does not carry, SW601); two
    different servers with one name are a ``UserError``."""
    from stepswitch.dsl.build import agents_of

    found: dict[str, Any] = {}
    unread: dict[int, Any] = {}
    for loaded in load_targets(targets):
        for agent in agents_of(loaded.workflow):
            for server in agent.mcp_servers:
                other = found.setdefault(server.name, server)
                if other is not server:
                    raise UserError(
                        f"MCP server {server.name!r} is declared twice ({other.site} and "
                        f"{server.site}); the lock keeps one entry per name: rename one"
                    )
            for tool in agent.tools:
                if str(getattr(tool, "opaque", None) or "").startswith("MCP server "):
                    unread.setdefault(id(tool), tool)
    return list(found.values()), list(unread.values())


def _output(option: str | None) -> Path | None:
    """``-o FILE`` checked before any server starts: a folder, or a file in a folder that
    does not exist, is a ``UserError``."""
    if option is None:
        return None
    path = Path(option)
    if path.is_dir():
        raise UserError(f"-o {option}: is a folder; name the lock file (such as "
                        f"{path / 'stepswitch.mcp.lock'})")
    folder = path.parent
    if not folder.is_dir():
        raise UserError(f"-o {option}: there is no folder {folder}; create it first")
    return path


def run(args: argparse.Namespace) -> int:
    from stepswitch.mcp import _client
    from stepswitch.mcp import lock as lockfile

    output = _output(args.output)
    servers, unread = servers_of(args.targets)
    for tool in unread:  # an SDK server with a callable filter, say: say why it is left out
        print(f"stepswitch: {'error' if not servers else 'warning'}: {tool.opaque} "
              f"(listed at {tool.site}) is not locked: it stays an opaque tool that a run "
              "cannot call (SW601; see docs/mcp.md, \"From the Agents SDK\")",
              file=sys.stderr)
    if not servers:
        if not unread:
            print("stepswitch: error: the targets declare no MCP server "
                  "(Agent(mcp_servers=[...]))", file=sys.stderr)
        return 2
    path = output or servers[0].lock_path or \
        Path(servers[0].site.file).resolve().parent / lockfile.LOCK_NAME
    # read first: a lock that cannot be trusted stops --check before any server starts;
    # writing replaces it (what it held cannot be told from what it should hold)
    existing: dict[str, Any] = {}
    problem: str | None = None
    if args.check:
        existing = lockfile.read_lock(path) if path.is_file() else {}
    else:
        existing, problem = lockfile.read_lock_to_replace(path)
    listed: dict[str, dict[str, Any]] = {}
    try:
        for server in servers:
            bound = server.startup_timeout + server.timeout + 5
            tools = _client.wait(server.list_tools(), bound)
            listed[server.name] = {"transport": server.transport_kind, "tools": tools}
    except TimeoutError:
        print(f"stepswitch: error: MCP server {server.name!r} (declared at {server.site}) "
              f"did not answer within {bound:g} s", file=sys.stderr)
        return 2
    except MCPServerError as exc:
        print(f"stepswitch: error: {exc}", file=sys.stderr)
        return 2
    finally:
        _client.wait(_client.close_all(), 10)
    if args.check:
        return _check(path, existing, listed)
    if problem is not None:
        print(f"stepswitch: warning: {visible(str(path))}: {problem}; replacing it with a "
              "new lock of these targets' servers (entries of other servers it held are "
              "dropped)", file=sys.stderr)
    merged = {**existing, **listed}
    try:
        lockfile.write_lock(path, merged)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the MCP lock: {exc.strerror}") from None
    count = sum(len(s["tools"]) for s in listed.values())
    print(f"wrote {visible(str(path))}: {len(listed)} server(s), {count} tool(s)")
    return 0


def _check(path: Path, existing: dict[str, Any], listed: dict[str, dict[str, Any]]) -> int:
    from stepswitch.mcp import lock as lockfile

    drift = False
    for name, server in listed.items():
        entry = existing.get(name)
        if entry is None:
            print(f"{visible(str(path))}: MCP server {visible(name)!r}: not in the lock")
            drift = True
            continue
        if entry["transport"] != server["transport"]:
            print(f"{visible(str(path))}: MCP server {visible(name)!r}: locked with "
                  f"transport {entry['transport']!r}, declared with {server['transport']!r}")
            drift = True
            continue
        for line in lockfile.changes(entry["tools"], server["tools"]):
            print(f"{visible(str(path))}: MCP server {visible(name)!r}: {visible(line)}")
            drift = True
    if drift:
        print("the MCP servers' tools differ from the lock: review, then run "
              "`stepswitch mcp lock` to accept them", file=sys.stderr)
        return 1
    print(f"{visible(str(path))}: {len(listed)} server(s) match the lock")
    return 0



