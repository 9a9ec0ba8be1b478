"""The Agents SDK's MCP servers read as stepswitch's (``from_sdk``). Not API.

A server is read only when everything it sets is carried: its transport parameters,
name, static ``tool_filter``, ``require_approval`` and session timeout. One with a
callable filter, its own failure function, tool guardrails, a message handler, retries,
structured content or meta resolvers stays opaque (SW601 names it), never half read.
"""

from __future__ import annotations

from typing import Any

from stepswitch._site import Site
from stepswitch.errors import UserError
from stepswitch.mcp.servers import (
    MCPServer,
    MCPServerSse,
    MCPServerStdio,
    MCPServerStreamableHttp,
)

__all__ = ["read_sdk_server", "why_unread"]

_KINDS = ("MCPServerStdio", "MCPServerSse", "MCPServerStreamableHttp")


def read_sdk_server(server: Any, site: Site) -> MCPServer | None:
    """``server`` as a declaration located at ``site``; None when it sets something
    stepswitch does not carry (then it stays an opaque tool; :func:`why_unread` says
    why)."""
    if why_unread(server) is not None:
        return None
    kind = type(server).__name__
    name = getattr(server, "name", None) or kind
    policy = getattr(server, "_needs_approval_policy", False)
    approval: Any = dict(policy) if isinstance(policy, dict) else \
        ("always" if policy else "never")
    tool_filter = getattr(server, "tool_filter", None)
    timeout = getattr(server, "client_session_timeout_seconds", None) or 5.0
    common: dict[str, Any] = {"tool_filter": tool_filter, "require_approval": approval,
                              "timeout": float(timeout)}
    params = server.params
    try:
        made: MCPServer
        if kind == "MCPServerStdio":
            made = MCPServerStdio(name, params.command, list(params.args or ()),
                                  env=params.env, cwd=params.cwd, **common)
        elif kind == "MCPServerStreamableHttp":
            made = MCPServerStreamableHttp(name, params["url"], headers=params.get("headers"),
                                           **common)
        else:
            made = MCPServerSse(name, params["url"], headers=params.get("headers"), site=site,
                                **common)
    except UserError as exc:
        raise UserError(f"SDK {kind} {name!r} at {site}: {str(exc).split(': ', 1)[-1]}") \
            from None
    made.site = site
    return made


def why_unread(server: Any) -> str | None:
    """What ``server`` sets that stepswitch does not carry, as the rest of a phrase
    "MCP server 'x' with ..."; None: nothing (it is read)."""
    kind = type(server).__name__
    if kind not in _KINDS:
        return f"type {kind} (not {', '.join(_KINDS)})"
    tool_filter = getattr(server, "tool_filter", None)
    if callable(tool_filter):
        return "a callable tool_filter no lock can record"
    if tool_filter is not None and not isinstance(tool_filter, dict):
        return f"a tool_filter stepswitch does not read ({type(tool_filter).__name__})"
    policy = getattr(server, "_needs_approval_policy", False)
    if not isinstance(policy, bool) and not (
        isinstance(policy, dict) and all(isinstance(v, bool) for v in policy.values())
    ):
        return "a require_approval function (decided only during a run)"
    unset = type(getattr(server, "_failure_error_function", None)).__name__ == "_UnsetType"
    settings = (
        ("failure_error_function", not unset),
        ("tool_input_guardrails", bool(getattr(server, "tool_input_guardrails", None))),
        ("tool_output_guardrails", bool(getattr(server, "tool_output_guardrails", None))),
        ("message_handler", getattr(server, "message_handler", None) is not None),
        ("max_retry_attempts", bool(getattr(server, "max_retry_attempts", 0))),
        ("use_structured_content", bool(getattr(server, "use_structured_content", False))),
        ("tool_meta_resolver", getattr(server, "tool_meta_resolver", None) is not None),
        ("custom_data_extractor", getattr(server, "custom_data_extractor", None) is not None),
    )
    found = [name for name, is_set in settings if is_set]
    if not found:
        return None
    them = "it" if len(found) == 1 else "them"
    return f"{', '.join(found)} set (stepswitch does not carry {them})"
