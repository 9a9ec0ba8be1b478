"""Every attribute of the Agents SDK objects ``from_sdk`` reads: carried, or reported.

One table per SDK class, one row per attribute, in three kinds:

- ``carried``: read into the workflow and honoured (checked, drawn, run). A row may say
  which values it cannot carry (``lost``): those are reported like a warned row.
- ``warned``: stepswitch does not carry it out. Set to anything but the SDK's default, it
  becomes a :class:`~stepswitch.dsl.notes.NotCarried` on the workflow: SW610, located at
  the object it is set on.
- ``internal``: bookkeeping the SDK sets on objects it makes itself (MCP-derived tools,
  tool origins, caches); a user does not set it, so there is nothing to carry.

``tests/interop/test_sdk_fields.py`` walks the installed SDK's own dataclass fields (and
the parameters of ``as_tool``, ``Runner.run`` and the MCP servers' constructors): an
attribute a new SDK release adds fails that test until it gets a row here. Not API.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from stepswitch._dataclass import dataclass

__all__ = ["TABLES", "Rule", "lost_settings", "markdown", "sdk_defaults"]

Status = Literal["carried", "warned", "internal"]


@dataclass(frozen=True, slots=True)
class Rule:
    """How one SDK attribute is handled."""

    status: Status
    how: str
    """Carried: where it goes. Warned: what stepswitch does instead. Internal: why."""
    lost: Callable[[Any], str | None] | None = None
    """For a carried attribute: the reason a value cannot be carried, or None."""


def _carried(how: str, lost: Callable[[Any], str | None] | None = None) -> Rule:
    return Rule("carried", how, lost)


def _warned(how: str) -> Rule:
    return Rule("warned", how)


def _internal(how: str) -> Rule:
    return Rule("internal", how)


def _not_str_model(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return None
    return (f"a {type(value).__name__} object: stepswitch runs the agent on the model the "
            "run is given")


def _reset_off(value: Any) -> str | None:
    return None if value is not False else (
        "False: stepswitch resets tool_choice after a tool call for every agent "
        "(RunConfig(reset_tool_choice=False) turns it off for a whole run)")


def _raise_on_timeout(value: Any) -> str | None:
    return None if value == "error_as_result" else (
        f"{value!r}: a timeout is an error output the model sees")


def _client_search(value: Any) -> str | None:
    return None if value in (None, "server") else (
        f"{value!r}: a tool search the client runs, which neither stepswitch nor the SDK's "
        "runner does")


def _callable_filter(value: Any) -> str | None:
    return None if value is None or isinstance(value, dict) else (
        f"a {type(value).__name__}: stepswitch filters a server's tools by name only, so "
        "the server stays opaque (SW601)")


def _named_choice(value: Any) -> str | None:
    return None if value is None or isinstance(value, str) else (
        f"a {type(value).__name__}: stepswitch sends tool_choice as a name")


def _reasoning(value: Any) -> str | None:
    if value is None:
        return None
    effort = getattr(value, "effort", None)
    others = {k: v for k, v in vars(value).items() if k != "effort" and v is not None} \
        if hasattr(value, "__dict__") else {}
    if effort not in (None, "minimal", "low", "medium", "high"):
        return f"effort {effort!r}: stepswitch sends minimal, low, medium or high"
    if others:
        return f"{', '.join(sorted(others))}: stepswitch sends the reasoning effort only"
    return None


def _not_strict(value: Any) -> str | None:
    return None if value is not False else (
        "False: stepswitch sends a handoff's input schema in strict mode")


AGENT: dict[str, Rule] = {
    "name": _carried("the agent's name"),
    "handoff_description": _carried("the description handoffs to it carry"),
    "tools": _carried("function tools, agent tools and hosted tools, each by its own table"),
    "mcp_servers": _carried("MCP servers (MCPServerStdio, ...), read from the lock"),
    "mcp_config": _warned("MCP tool conversion options; stepswitch converts locked MCP tools "
                          "its own way"),
    "instructions": _carried("instructions, a string or a function"),
    "prompt": _warned("a prompt stored with OpenAI; stepswitch sends the instructions only"),
    "handoffs": _carried("handoffs, each by the Handoff table"),
    "model": _carried("the agent's model name", _not_str_model),
    "model_settings": _carried("the agent's ModelSettings, each by the ModelSettings table"),
    "input_guardrails": _carried("input guardrails"),
    "output_guardrails": _carried("output guardrails"),
    "output_type": _carried("the output type"),
    "hooks": _carried("the agent's AgentHooks, called on every surface"),
    "tool_use_behavior": _carried("the tool-use behaviour"),
    "reset_tool_choice": _carried("tool_choice reset after a tool call", _reset_off),
}

FUNCTION_TOOL: dict[str, Rule] = {
    "name": _carried("the tool's name"),
    "description": _carried("the tool's description"),
    "params_json_schema": _carried("the parameters' schema, as the SDK made it"),
    "on_invoke_tool": _carried("the decorated function, run by stepswitch"),
    "strict_json_schema": _carried("strict mode"),
    "is_enabled": _carried("is_enabled: a bool, or a function called each turn"),
    "tool_input_guardrails": _carried("tool input guardrails, run before each call"),
    "tool_output_guardrails": _carried("tool output guardrails, run on each result"),
    "needs_approval": _carried("approval, always or per call"),
    "timeout_seconds": _carried("function_tool(timeout=)"),
    "timeout_behavior": _carried("a timeout is an error output", _raise_on_timeout),
    "timeout_error_function": _warned("the default timeout message is sent instead"),
    "defer_loading": _carried("function_tool(defer_loading=True), loaded by tool search"),
    "custom_data_extractor": _warned("custom data on the SDK's output items; stepswitch's "
                                     "items carry none"),
    "allowed_callers": _warned("programmatic tool calling; stepswitch offers the tool to "
                               "the model directly"),
    "output_json_schema": _warned("an output schema for programmatic callers; not sent"),
    "_output_type_adapter": _internal("made by the SDK from the function's return type"),
    "_failure_error_function": _carried("failure_error_function"),
    "_use_default_failure_error_function": _carried("the default error output"),
    "_is_agent_tool": _carried("as_tool: an agent tool"),
    "_agent_tool_default_identity": _internal("the SDK's default as_tool name"),
    "_is_codex_tool": _internal("set on the SDK's Codex tool, which has no Python function "
                                "stepswitch can read (a located error)"),
    "_agent_instance": _carried("the agent an agent tool runs"),
    "_tool_namespace": _carried("tool_namespace(name=...)"),
    "_tool_namespace_description": _carried("tool_namespace(description=...)"),
    "_mcp_title": _internal("set on tools the SDK lists from MCP servers at run time"),
    "_tool_origin": _internal("the SDK's record of where a tool came from (read to find "
                              "agent tools)"),
    "_emit_tool_origin": _internal("whether the SDK's items record the tool origin"),
    "_mcp_tool_binding": _internal("set on tools the SDK lists from MCP servers"),
    "_mcp_annotations": _internal("set on tools the SDK lists from MCP servers"),
}

AGENT_TOOL: dict[str, Rule] = {
    "tool_name": _carried("the agent tool's name"),
    "tool_description": _carried("the agent tool's description"),
    "custom_output_extractor": _carried("output_extractor"),
    "is_enabled": _carried("is_enabled: a bool, or a function called each turn"),
    "on_stream": _warned("the nested run's stream events are not passed to it"),
    "run_config": _warned("the nested run uses the run's settings"),
    "max_turns": _carried("the nested run's max_turns"),
    "hooks": _warned("run hooks of the nested run only; the run's own hooks (run(hooks=)) "
                     "and the agents' hooks see the nested run"),
    "previous_response_id": _warned("the nested run starts a new conversation"),
    "conversation_id": _warned("the nested run starts a new conversation"),
    "session": _warned("the nested run keeps no session"),
    "failure_error_function": _warned("a failed nested run is the default error output"),
    "needs_approval": _carried("approval, always or per call"),
    "parameters": _carried("the agent tool's parameters type"),
    "input_builder": _warned("the nested run gets the arguments as its input text"),
    "include_input_schema": _warned("the nested run's input does not include the schema"),
    "on_stream_max_pending_events": _internal("only used with on_stream"),
}

HANDOFF: dict[str, Rule] = {
    "tool_name": _carried("the handoff tool's name"),
    "tool_description": _carried("the handoff tool's description"),
    "input_json_schema": _carried("from the input type"),
    "on_invoke_handoff": _carried("on_handoff and input_type (read from it)"),
    "agent_name": _carried("the target agent"),
    "input_filter": _carried("input_filter (an SDK filter is SW603)"),
    "nest_handoff_history": _warned("the history is passed on as it is"),
    "strict_json_schema": _carried("strict mode", _not_strict),
    "is_enabled": _carried("is_enabled: a bool, or a function called each turn"),
    "_agent_ref": _carried("the target agent"),
    "_default_tool_identity": _internal("the SDK's default handoff tool name"),
}

WEB_SEARCH: dict[str, Rule] = {
    name: _carried("ss.WebSearchTool, sent as declared")
    for name in ("user_location", "filters", "search_context_size", "external_web_access",
                 "search_content_types", "image_settings")
}
FILE_SEARCH: dict[str, Rule] = {
    name: _carried("ss.FileSearchTool, sent as declared")
    for name in ("vector_store_ids", "max_num_results", "include_search_results",
                 "ranking_options", "filters")
}
CODE_INTERPRETER: dict[str, Rule] = {"tool_config": _carried("ss.CodeInterpreterTool")}
IMAGE_GENERATION: dict[str, Rule] = {"tool_config": _carried("ss.ImageGenerationTool")}
HOSTED_MCP: dict[str, Rule] = {
    "tool_config": _carried("ss.HostedMCPTool, sent as declared"),
    "on_approval_request": _warned("approval requests of the hosted server are not answered: "
                                   "a run that gets one stops with a ModelBehaviorError"),
}
TOOL_SEARCH: dict[str, Rule] = {
    "description": _carried("ss.ToolSearchTool(description=)"),
    "execution": _carried("server-side tool search", _client_search),
    "parameters": _carried("ss.ToolSearchTool(parameters=)"),
}

MODEL_SETTINGS: dict[str, Rule] = {
    "temperature": _carried("ModelSettings.temperature"),
    "top_p": _carried("ModelSettings.top_p"),
    "frequency_penalty": _carried("ModelSettings.frequency_penalty"),
    "presence_penalty": _carried("ModelSettings.presence_penalty"),
    "tool_choice": _carried("ModelSettings.tool_choice", _named_choice),
    "parallel_tool_calls": _carried("ModelSettings.parallel_tool_calls"),
    "truncation": _warned("not sent"),
    "max_tokens": _carried("ModelSettings.max_tokens"),
    "reasoning": _carried("ModelSettings.reasoning_effort", _reasoning),
    "verbosity": _warned("not sent"),
    "metadata": _warned("not sent"),
    "store": _warned("not sent (the API's default applies)"),
    "prompt_cache_retention": _warned("not sent"),
    "include_usage": _warned("not sent"),
    "response_include": _warned("not sent"),
    "top_logprobs": _warned("not sent"),
    "extra_query": _warned("not sent"),
    "extra_body": _carried("ModelSettings.extra_body"),
    "extra_headers": _warned("not sent"),
    "extra_args": _warned("not sent"),
    "retry": _warned("the openai client's own retries apply"),
    "context_management": _warned("not sent"),
    "prompt_cache_options": _warned("not sent"),
    "preserve_raw_usage": _warned("stepswitch keeps its own usage totals"),
    "timeout": _warned("the openai client's timeout applies"),
}

MCP_SERVER: dict[str, Rule] = {
    "params": _carried("the server's command or URL"),
    "cache_tools_list": _carried("stepswitch lists tools once, from the lock"),
    "name": _carried("the server's name"),
    "client_session_timeout_seconds": _carried("the server's timeout"),
    "tool_filter": _carried("a static tool_filter (a callable keeps the server opaque)",
                            _callable_filter),
    "use_structured_content": _warned("the server stays opaque (SW601)"),
    "max_retry_attempts": _warned("the server stays opaque (SW601)"),
    "retry_backoff_seconds_base": _warned("no retries"),
    "message_handler": _warned("the server stays opaque (SW601)"),
    "require_approval": _carried("require_approval"),
    "failure_error_function": _warned("the server stays opaque (SW601)"),
    "tool_meta_resolver": _warned("the server stays opaque (SW601)"),
    "custom_data_extractor": _warned("the server stays opaque (SW601)"),
    "retry_backoff_seconds_max": _warned("no retries"),
    "tool_input_guardrails": _warned("the server stays opaque (SW601)"),
    "tool_output_guardrails": _warned("the server stays opaque (SW601)"),
    "max_list_pages": _warned("stepswitch lists every page"),
}

RUN: dict[str, Rule] = {
    "starting_agent": _carried("the workflow's entry"),
    "input": _carried("the run's input is not part of the workflow (stepswitch run "
                      "--input gives one)"),
    "context": _carried("Workflow(context_type=) is the context's type"),
    "max_turns": _carried("Workflow(max_turns=)"),
    "hooks": _warned("run hooks given to the SDK's run; give them to stepswitch's "
                     "run(hooks=) (ss.RunHooks has the same methods)"),
    "run_config": _warned("the run's settings; give stepswitch run its own"),
    "error_handlers": _warned("stepswitch raises MaxTurnsExceeded and the like with run_data"),
    "previous_response_id": _warned("the run starts a new conversation"),
    "auto_previous_response_id": _warned("stepswitch sends the whole history each turn"),
    "conversation_id": _warned("the run starts a new conversation"),
    "session": _carried("conversation storage is not part of the workflow: stepswitch run "
                        "and chat take --session URL"),
}

TABLES: dict[str, tuple[str, dict[str, Rule]]] = {
    "Agent": ("agents:Agent", AGENT),
    "FunctionTool": ("agents:FunctionTool", FUNCTION_TOOL),
    "Agent.as_tool": ("agents:Agent.as_tool", AGENT_TOOL),
    "Handoff": ("agents:Handoff", HANDOFF),
    "WebSearchTool": ("agents:WebSearchTool", WEB_SEARCH),
    "FileSearchTool": ("agents:FileSearchTool", FILE_SEARCH),
    "CodeInterpreterTool": ("agents:CodeInterpreterTool", CODE_INTERPRETER),
    "ImageGenerationTool": ("agents:ImageGenerationTool", IMAGE_GENERATION),
    "HostedMCPTool": ("agents:HostedMCPTool", HOSTED_MCP),
    "ToolSearchTool": ("agents:ToolSearchTool", TOOL_SEARCH),
    "ModelSettings": ("agents:ModelSettings", MODEL_SETTINGS),
    "MCPServer": ("agents.mcp:MCPServerStdio", MCP_SERVER),
    "Runner.run": ("agents:Runner.run", RUN),
}
"""Per table: the SDK object it describes (``module:qualname``) and its rows."""

def _resolve(path: str) -> Any:
    import importlib

    module, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def sdk_defaults(table: str) -> dict[str, Any]:
    """The SDK's default for each attribute of ``table`` (dataclass defaults, or a
    function's parameter defaults); an attribute without a default is left out."""
    target = _resolve(TABLES[table][0])
    out: dict[str, Any] = {}
    if dataclasses.is_dataclass(target):
        for f in dataclasses.fields(target):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
        return out
    function = getattr(target, "__init__") if isinstance(target, type) else target  # noqa: B009
    for p in inspect.signature(function).parameters.values():
        if p.default is not inspect.Parameter.empty:
            out[p.name] = p.default
    return out


_DEFAULTS: dict[str, dict[str, Any]] = {}


def _differs(value: Any, default: Any) -> bool:
    try:
        return bool(value != default)
    except Exception:  # an object whose == raises is not the default
        return True


def lost_settings(table: str, values: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """``(attribute, detail)`` for each value of ``values`` that ``table``'s rules do not
    carry: a warned attribute set to other than its default, or a carried one set to a
    value it cannot carry. ``values`` maps attribute names to what the object holds."""
    rules = TABLES[table][1]
    defaults = _DEFAULTS.get(table)
    if defaults is None:
        defaults = _DEFAULTS[table] = sdk_defaults(table)
    for name, value in values.items():
        rule = rules.get(name)
        if rule is None:  # an attribute this table does not know: never silent
            if name in defaults and not _differs(value, defaults[name]):
                continue
            yield f"{table}.{name}", (f"set to {_short(value)}, an attribute of a newer SDK "
                                      "that stepswitch does not know")
            continue
        if rule.status == "warned":
            if name in defaults and not _differs(value, defaults[name]):
                continue
            if name not in defaults and value is None:
                continue
            yield f"{table}.{name}", f"set to {_short(value)}; {rule.how}"
        elif rule.status == "carried" and rule.lost is not None:
            reason = rule.lost(value)
            if reason is not None:
                yield f"{table}.{name}", reason


def _short(value: Any) -> str:
    """The value in a few words: a function by name, a list of named objects (guardrails,
    hooks) by their names, anything else by a cut ``repr``."""
    if isinstance(value, list | tuple) and value and all(_named(v) for v in value):
        return "[" + ", ".join(repr(_named(v)) for v in value) + "]"
    if inspect.isfunction(value) or inspect.ismethod(value):
        return f"function {value.__qualname__}"
    if not isinstance(value, str | int | float | bool | dict | list | tuple) and value is not None:
        return f"a {type(value).__name__}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _named(value: Any) -> str | None:
    get = getattr(value, "get_name", None)
    name = get() if callable(get) else getattr(value, "name", None)
    return name if isinstance(name, str) and name else None


_BEGIN = "<!-- sdk_fields: begin (stepswitch.interop.sdk_fields.markdown) -->"
_END = "<!-- sdk_fields: end -->"


def markdown() -> str:
    """Every row as Markdown tables, one per SDK object, between the markers
    ``docs/migrating.md`` holds them in (a test keeps the page equal to this)."""
    out = [_BEGIN, ""]
    for table, (_, rows) in TABLES.items():
        out += [f"**{table}**", "", "| attribute | | how |", "|---|---|---|"]
        for name, rule in rows.items():
            how = rule.how.replace("|", "\\|")
            if rule.lost is not None:
                how += " (a value it cannot carry is reported)"
            out.append(f"| `{name}` | {rule.status} | {how} |")
        out.append("")
    out.append(_END)
    return "\n".join(out)
