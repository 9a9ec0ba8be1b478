"""Hosted tools: tools OpenAI runs on its side of the Responses API, with the SDK's names.

``ss.WebSearchTool``, ``ss.FileSearchTool``, ``ss.CodeInterpreterTool``,
``ss.ImageGenerationTool``, ``ss.HostedMCPTool`` and ``ss.ToolSearchTool`` go in an
agent's ``tools=[...]`` like function tools. stepswitch never runs them: each is sent to
the Responses API as declared (:meth:`HostedTool.config` is the exact tool parameter,
the same the Agents SDK sends), its calls come back already done (kept in the run's
items and sent back next turn), and the analyzer counts each as an effect it cannot see
inside (SW611). The Chat Completions API has no hosted tools: a run there refuses them.

``ToolSearchTool`` lets the model load tools declared with ``defer_loading=True`` or put
in a ``tool_namespace(...)``: as in the SDK, a deferred tool is not offered until a tool
search loads it, and a call of it that no search loaded is a call of an unknown tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from stepswitch._site import Site, caller_site
from stepswitch.errors import UserError

__all__ = [
    "CodeInterpreterTool",
    "FileSearchTool",
    "HostedMCPTool",
    "HostedTool",
    "HostedToolKind",
    "ImageGenerationTool",
    "ToolSearchTool",
    "WebSearchTool",
]

HostedToolKind = Literal[
    "web_search", "file_search", "code_interpreter", "image_generation", "mcp", "tool_search"
]


class HostedTool:
    """What every hosted tool has: a kind, a name for diagrams and messages, the tool
    parameter the Responses API is sent, and the site it was declared at."""

    kind: ClassVar[HostedToolKind]
    site: Site

    @property
    def name(self) -> str:
        """The name the SDK gives it (``web_search``; a hosted MCP tool: its label)."""
        return self.kind

    def config(self) -> dict[str, Any]:
        """The Responses API tool parameter, as declared."""
        raise NotImplementedError

    def include(self) -> str | None:
        """A value the request's ``include`` needs for this tool's results, if any."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _dump(value: Any) -> Any:
    """A pydantic model or a typed dict as the plain JSON value the API is sent."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    if isinstance(value, Mapping):
        return {k: _dump(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    return value


def _config(what: str, site: Site, value: Any, kind: str) -> dict[str, Any]:
    """A ``tool_config`` mapping whose ``type`` is ``kind``."""
    if not isinstance(value, Mapping):
        raise UserError(f"{what} at {site}: tool_config: expected a dict with type={kind!r}, "
                        f"got {type(value).__name__}")
    config = dict(_dump(value))
    if config.get("type") != kind:
        raise UserError(f"{what} at {site}: tool_config: its type must be {kind!r}, got "
                        f"{config.get('type')!r}")
    return config


class WebSearchTool(HostedTool):
    """Web search, run by OpenAI (the SDK's ``WebSearchTool``, same fields)."""

    kind: ClassVar[HostedToolKind] = "web_search"

    def __init__(
        self,
        user_location: Mapping[str, Any] | None = None,
        filters: Any = None,
        search_context_size: Literal["low", "medium", "high"] = "medium",
        external_web_access: bool | None = None,
        search_content_types: list[Literal["text", "image"]] | None = None,
        image_settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.site = caller_site()
        if search_context_size not in ("low", "medium", "high"):
            raise UserError(f"WebSearchTool at {self.site}: search_context_size: expected "
                            f"'low', 'medium' or 'high', got {search_context_size!r}")
        self.user_location = user_location
        self.filters = filters
        self.search_context_size = search_context_size
        self.external_web_access = external_web_access
        self.search_content_types = search_content_types
        self.image_settings = image_settings

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "web_search",
            "filters": None if self.filters is None else _dump(self.filters),
            "user_location": None if self.user_location is None else _dump(self.user_location),
            "search_context_size": self.search_context_size,
        }
        if self.external_web_access is not None:
            out["external_web_access"] = self.external_web_access
        if self.search_content_types is not None:
            out["search_content_types"] = list(self.search_content_types)
        if self.image_settings is not None:
            out["image_settings"] = dict(self.image_settings)
        return out

    def include(self) -> str | None:
        types = self.search_content_types
        return "web_search_call.results" if types is not None and "image" in types else None


class FileSearchTool(HostedTool):
    """Search of OpenAI vector stores (the SDK's ``FileSearchTool``, same fields)."""

    kind: ClassVar[HostedToolKind] = "file_search"

    def __init__(
        self,
        vector_store_ids: list[str],
        max_num_results: int | None = None,
        include_search_results: bool = False,
        ranking_options: Mapping[str, Any] | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> None:
        self.site = caller_site()
        if isinstance(vector_store_ids, str) or not isinstance(vector_store_ids, list | tuple):
            raise UserError(f"FileSearchTool at {self.site}: vector_store_ids: expected a list "
                            f"of vector store ids, got {vector_store_ids!r}")
        self.vector_store_ids = list(vector_store_ids)
        self.max_num_results = max_num_results
        self.include_search_results = include_search_results
        self.ranking_options = ranking_options
        self.filters = filters

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "file_search",
                               "vector_store_ids": list(self.vector_store_ids)}
        n = self.max_num_results
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            out["max_num_results"] = n  # zero, like None, is the provider's default
        if self.ranking_options:
            out["ranking_options"] = _dump(self.ranking_options)
        if self.filters:
            out["filters"] = _dump(self.filters)
        return out

    def include(self) -> str | None:
        return "file_search_call.results" if self.include_search_results else None


class CodeInterpreterTool(HostedTool):
    """Code run in OpenAI's sandbox (the SDK's ``CodeInterpreterTool``): ``tool_config``
    is the Responses parameter, e.g. ``{"type": "code_interpreter", "container":
    {"type": "auto"}}``."""

    kind: ClassVar[HostedToolKind] = "code_interpreter"

    def __init__(self, tool_config: Mapping[str, Any]) -> None:
        self.site = caller_site()
        self.tool_config = _config("CodeInterpreterTool", self.site, tool_config,
                                   "code_interpreter")

    def config(self) -> dict[str, Any]:
        return dict(self.tool_config)


class ImageGenerationTool(HostedTool):
    """Images made by OpenAI (the SDK's ``ImageGenerationTool``): ``tool_config`` is the
    Responses parameter, ``{"type": "image_generation", ...}``."""

    kind: ClassVar[HostedToolKind] = "image_generation"

    def __init__(self, tool_config: Mapping[str, Any]) -> None:
        self.site = caller_site()
        self.tool_config = _config("ImageGenerationTool", self.site, tool_config,
                                   "image_generation")

    def config(self) -> dict[str, Any]:
        return dict(self.tool_config)


class HostedMCPTool(HostedTool):
    """A remote MCP server that OpenAI calls itself (the SDK's ``HostedMCPTool``):
    ``tool_config`` is ``{"type": "mcp", "server_label": ..., "server_url": ... (or
    "connector_id"), "allowed_tools": [...], "require_approval": ..., "headers": ...}``.

    stepswitch does not answer the server's approval requests: a server that asks for
    one stops the run with a ``ModelBehaviorError`` (SW613 says so before anything
    runs); declare ``require_approval="never"`` with ``allowed_tools``, or run the
    server locally with ``ss.MCPServerStreamableHttp`` and approve its calls there."""

    kind: ClassVar[HostedToolKind] = "mcp"

    def __init__(self, tool_config: Mapping[str, Any]) -> None:
        self.site = caller_site()
        self.tool_config = _config("HostedMCPTool", self.site, tool_config, "mcp")
        label = self.tool_config.get("server_label")
        if not isinstance(label, str) or not label:
            raise UserError(f"HostedMCPTool at {self.site}: tool_config: server_label: "
                            f"expected a non-empty string, got {label!r}")

    @property
    def name(self) -> str:
        return str(self.tool_config["server_label"])

    def config(self) -> dict[str, Any]:
        return dict(self.tool_config)


class ToolSearchTool(HostedTool):
    """Lets the model search and load deferred tools (``function_tool(defer_loading=
    True)``, ``tool_namespace(...)``, a hosted MCP tool with ``defer_loading``), run on
    OpenAI's side (the SDK's ``ToolSearchTool``)."""

    kind: ClassVar[HostedToolKind] = "tool_search"

    def __init__(self, description: str | None = None,
                 execution: Literal["server", "client"] | None = None,
                 parameters: object | None = None) -> None:
        self.site = caller_site()
        if execution not in (None, "server", "client"):
            raise UserError(f"ToolSearchTool at {self.site}: execution: expected 'server', "
                            f"'client' or None, got {execution!r}")
        if execution == "client":
            raise UserError(f"ToolSearchTool at {self.site}: execution='client' means your "
                            "code answers each tool_search_call, which stepswitch's runner "
                            "does not do (nor the SDK's); leave execution unset")
        self.description = description
        self.execution = execution
        self.parameters = parameters

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "tool_search"}
        if isinstance(self.description, str):
            out["description"] = self.description
        if self.execution is not None:
            out["execution"] = self.execution
        if self.parameters is not None:
            out["parameters"] = self.parameters
        return out
