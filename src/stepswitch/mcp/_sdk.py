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

__all__ = ["read_sdk_server"]

_KINDS = ("MCPServerStdio", "MCPServerSse", "MCPServerStreamableHttp")


def read_sdk_server(server: Any, site: Site) -> MCPServer | None:
    """``server`` as a declaration located at ``site``; None when it sets something
    stepswitch does not carry (then it stays an opaque tool)."""
    kind = type(server).__name__
    if kind not in _KINDS or not _plain(server):
        return None
    name = getattr(server, "name", None) or kind
    policy = getattr(server, "_needs_approval_policy", False)
    if isinstance(policy, bool):
        approval: Any = "always" if policy else "never"
    elif isinstance(policy, dict) and all(isinstance(v, bool) for v in policy.values()):
        approval = dict(policy)
    else:
        return None
    tool_filter = getattr(server, "tool_filter", None)
    if tool_filter is not None and not isinstance(tool_filter, dict):
        return None
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


def _plain(server: Any) -> bool:
    """Nothing is set that stepswitch would drop."""
    unset = type(getattr(server, "_failure_error_function", None)).__name__ == "_UnsetType"
    return (
        unset
        and not getattr(server, "tool_input_guardrails", None)
        and not getattr(server, "tool_output_guardrails", None)
        and getattr(server, "message_handler", None) is None
        and not getattr(server, "max_retry_attempts", 0)
        and not getattr(server, "use_structured_content", False)
        and getattr(server, "tool_meta_resolver", None) is None
        and getattr(server, "custom_data_extractor", None) is None
    )
