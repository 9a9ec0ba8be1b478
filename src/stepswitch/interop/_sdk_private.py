"""Every private attribute of the OpenAI Agents SDK that the reader relies on, in one place.

The SDK records some facts only in private fields and closures (the function behind a
``FunctionTool``, the agent behind ``as_tool`` and its options, the target of a
``Handoff``). Each accessor below names the attribute it reads; :func:`check_version`
refuses SDK versions this module was not written against, so a change in the SDK's
internals is a clear error instead of a silently wrong workflow.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Callable
from typing import Any

from stepswitch.errors import UserError

__all__ = [
    "SUPPORTED",
    "agent_tool_options",
    "agent_tool_settings",
    "agent_tool_target",
    "check_version",
    "failure_function",
    "handoff_hook",
    "handoff_target",
    "implicit_settings",
    "installed_version",
    "mcp_server_settings",
    "tool_function",
    "tool_namespace",
]

SUPPORTED = ((0, 24), (0, 26))
"""Versions read: at least the first, below the second (``openai-agents>=0.24,<0.26``)."""

_RANGE = "openai-agents>=0.24,<0.26"
_WRAPPED_MARKER = "__agents_function_tool_wrapped_callable__"
_checked: str | None = None


def installed_version() -> str:
    """The installed ``openai-agents`` version ("" when not installed)."""
    return _metadata_version()


@functools.lru_cache(maxsize=1)
def _metadata_version() -> str:
    try:
        return importlib.metadata.version("openai-agents")
    except importlib.metadata.PackageNotFoundError:
        return ""


def _parse(version: str) -> tuple[int, int]:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (-1, -1)


def check_version() -> None:
    """``UserError`` unless a supported ``openai-agents`` is installed."""
    global _checked
    version = installed_version()
    if _checked == version:
        return
    if not version:
        raise UserError(
            f"reading OpenAI Agents SDK apps needs the SDK: pip install 'stepswitch[sdk]' "
            f"(that is {_RANGE})"
        )
    low, high = SUPPORTED
    if not low <= _parse(version) < high:
        raise UserError(
            f"openai-agents {version} is installed; stepswitch reads {_RANGE} (it relies on "
            f"the SDK's internals, which change between versions): pip install '{_RANGE}'"
        )
    _checked = version


def _closure(fn: Any) -> dict[str, Any]:
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is None:
        return {}
    out: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, cells, strict=False):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    return out


def _missing(what: str, where: str) -> UserError:
    return UserError(
        f"cannot read {what} of {where}: openai-agents {installed_version()} keeps it where "
        f"stepswitch does not look; stepswitch reads {_RANGE}"
    )


def _invoke_impl(tool: Any) -> Any:
    """``FunctionTool.on_invoke_tool._invoke_tool_impl``: the SDK's invoker wraps it."""
    invoker = tool.on_invoke_tool
    return getattr(invoker, "_invoke_tool_impl", invoker)


def tool_function(tool: Any) -> tuple[Callable[..., Any], Any]:
    """The decorated Python function behind a ``@function_tool`` and its ``FuncSchema``
    (``the_func`` and ``schema`` in the closure of ``on_invoke_tool``)."""
    impl = _invoke_impl(tool)
    cells = _closure(impl)
    fn = getattr(impl, _WRAPPED_MARKER, None)
    if not callable(fn):
        fn = cells.get("the_func")
    schema = cells.get("schema")
    if not callable(fn) or schema is None or not hasattr(schema, "params_pydantic_model"):
        raise UserError(
            f"tool {tool.name!r} has no Python function stepswitch can find (a FunctionTool "
            f"built by hand with on_invoke_tool=..., or a change in openai-agents "
            f"{installed_version()}); declare it with @function_tool"
        )
    return fn, schema


def failure_function(tool: Any) -> tuple[bool, Any]:
    """(uses the SDK's default error text, the custom ``failure_error_function`` or None)."""
    default = getattr(tool, "_use_default_failure_error_function", True)
    return bool(default), getattr(tool, "_failure_error_function", None)


def agent_tool_target(tool: Any) -> Any:
    """The agent behind ``agent.as_tool()`` (``_agent_instance``, recognised by the tool's
    origin ``AGENT_AS_TOOL``), or None for a plain function tool."""
    from agents.tool import ToolOriginType, get_function_tool_origin

    origin = get_function_tool_origin(tool)
    if origin is None or origin.type is not ToolOriginType.AGENT_AS_TOOL:
        return None
    agent = getattr(tool, "_agent_instance", None)
    if agent is None:
        raise _missing("the wrapped agent", f"agent tool {tool.name!r}")
    return agent


def agent_tool_options(tool: Any) -> dict[str, Any]:
    """``max_turns``, ``custom_output_extractor`` and ``parameters`` of an ``as_tool``
    (the closure of its ``_run_agent_impl``)."""
    cells = _closure(_invoke_impl(tool))
    if "max_turns" not in cells:
        raise _missing("the as_tool options", f"agent tool {tool.name!r}")
    adapter = cells.get("params_adapter")
    return {
        "max_turns": cells.get("max_turns"),
        "custom_output_extractor": cells.get("custom_output_extractor"),
        "parameters": getattr(adapter, "_type", None) if adapter is not None else None,
    }


def handoff_target(handoff: Any) -> Any:
    """The agent a ``Handoff`` moves to (the weak reference ``_agent_ref``)."""
    ref = getattr(handoff, "_agent_ref", None)
    agent = ref() if callable(ref) else None
    if agent is None:
        raise _missing("the target agent", f"handoff {handoff.tool_name!r}")
    return agent


def handoff_hook(handoff: Any) -> tuple[Any, Any]:
    """(``on_handoff``, ``input_type``) of a ``handoff(...)``: the closure of the
    function wrapped by ``on_invoke_handoff`` (a ``functools.partial``)."""
    invoke = handoff.on_invoke_handoff
    args = getattr(invoke, "args", ())
    impl = args[0] if args else invoke
    cells = _closure(impl)
    return cells.get("on_handoff"), cells.get("input_type")


_AS_TOOL_CELLS = ("on_stream", "run_config", "hooks", "previous_response_id",
                  "conversation_id", "session", "input_builder", "on_stream_max_pending_events")


def agent_tool_settings(tool: Any) -> dict[str, Any]:
    """The ``as_tool`` arguments stepswitch does not read elsewhere, by parameter name:
    closure cells of its ``_run_agent_impl``, ``include_input_schema`` (recorded in
    ``schema_info``'s JSON schema) and the tool's ``failure_error_function``."""
    cells = _closure(_invoke_impl(tool))
    out = {name: cells[name] for name in _AS_TOOL_CELLS if name in cells}
    info = cells.get("schema_info")
    out["include_input_schema"] = getattr(info, "json_schema", None) is not None
    if not getattr(tool, "_use_default_failure_error_function", True):
        out["failure_error_function"] = getattr(tool, "_failure_error_function", None)
    return out


def tool_namespace(tool: Any) -> tuple[str, str] | None:
    """``(name, description)`` of a ``tool_namespace(...)`` tool (``_tool_namespace``,
    ``_tool_namespace_description``), or None."""
    name = getattr(tool, "_tool_namespace", None)
    if not isinstance(name, str) or not name:
        return None
    description = getattr(tool, "_tool_namespace_description", None)
    return name, description if isinstance(description, str) else ""


def implicit_settings(model: Any, settings: Any) -> bool:
    """True when an agent's ``model_settings`` are the SDK's implicit defaults for its
    model (for a GPT-5 default model: reasoning effort and verbosity the user never
    set), not settings of the app's own."""
    try:
        from agents.agent import _model_settings_match_implicit_model_defaults as match
    except ImportError:
        return False
    try:
        return bool(match(model, settings))
    except Exception:
        return False


_MCP_ATTRIBUTES = {
    "require_approval": "_needs_approval_policy",
    "failure_error_function": "_failure_error_function",
    "name": "_name",
}


def mcp_server_settings(server: Any) -> dict[str, Any]:
    """An SDK MCP server's constructor arguments as it keeps them, by parameter name;
    a ``failure_error_function`` never given reads as unset (None)."""
    import inspect

    out: dict[str, Any] = {}
    for name in inspect.signature(type(server).__init__).parameters:
        if name == "self":
            continue
        value = getattr(server, _MCP_ATTRIBUTES.get(name, name), None)
        if name == "failure_error_function" and type(value).__name__ == "_UnsetType":
            continue
        if name == "require_approval" and isinstance(value, bool):
            value = "always" if value else None  # the constructor's default is None
        out[name] = value
    return out
def handoff_gate(handoff: Any) -> Any:
    """The ``is_enabled`` a ``handoff(...)`` was given: ``handoff()`` wraps a function in
    ``_is_enabled``, which asserts the SDK's ``Agent`` and so cannot be called with
    stepswitch's agent state; the user's function is in its closure."""
    gate = getattr(handoff, "is_enabled", True)
    if not callable(gate) or not getattr(gate, "__qualname__", "").endswith(
        "handoff.<locals>._is_enabled"
    ):
        return gate
    inner = _closure(gate).get("is_enabled")
    if not callable(inner):
        raise _missing("the is_enabled function", f"handoff {handoff.tool_name!r}")
    return inner
