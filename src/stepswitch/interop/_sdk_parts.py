"""The parts ``from_sdk`` makes from single SDK objects: function tools, hosted tools,
opaque stand-ins, model settings, and the record of a setting it does not carry. Not API:
:mod:`stepswitch.interop.sdk` is the reader.
"""

from __future__ import annotations

import dataclasses
import typing
import warnings
from typing import Any

from pydantic import ConfigDict, create_model

from stepswitch._hints import resolved_hints
from stepswitch._names import function_style
from stepswitch._site import Site, function_site
from stepswitch.dsl.hosted import (
    CodeInterpreterTool,
    FileSearchTool,
    HostedMCPTool,
    HostedTool,
    ImageGenerationTool,
    ToolSearchTool,
    WebSearchTool,
)
from stepswitch.dsl.notes import NotCarried
from stepswitch.dsl.tools import (
    _DEFAULT,
    FunctionTool,
    agent_runs,
    call_misfit,
    context_param_type,
    ctx_agent_misfit,
    described_not_taken,
)
from stepswitch.errors import UserError
from stepswitch.interop import _sdk_private as private
from stepswitch.schema import strictify
from stepswitch.settings import ModelSettings

__all__ = [
    "HOSTED",
    "SDKNotCarriedWarning",
    "fields_of",
    "function_tool",
    "hook_misfit",
    "hosted_tool",
    "instructions_of",
    "note",
    "opaque",
    "settings_of",
]

_REASONING_EFFORTS = ("minimal", "low", "medium", "high")


class SDKNotCarriedWarning(UserWarning):
    """A setting of an SDK app that ``from_sdk`` reads but stepswitch does not carry out;
    the warning is located at the tool (or the agent) it belongs to."""


def note(attribute: str, owner: str, detail: str, path: str, site: Site) -> NotCarried:
    """A setting not carried: recorded for SW610 and warned at once (for a caller of
    ``from_sdk`` who never runs ``check``)."""
    warnings.warn_explicit(f"from_sdk: {owner}: {attribute} ({detail}) is not carried out "
                           "by stepswitch", SDKNotCarriedWarning, site.file, site.line)
    return NotCarried(attribute, owner, detail, path, site)


def fields_of(obj: Any) -> dict[str, Any]:
    """A dataclass object's fields by name (what the SDK class declares)."""
    return {f.name: getattr(obj, f.name, None) for f in dataclasses.fields(obj)}


def instructions_of(value: Any) -> Any:
    return value if value is None or isinstance(value, str) or callable(value) else str(value)


def _gate(sdk_tool: Any) -> Any:
    """A tool's ``is_enabled``; a function the SDK could not call as ``fn(ctx, agent)``
    is a ``UserError`` now, not a failed run once the agent's turn comes."""
    gate = getattr(sdk_tool, "is_enabled", True)
    if callable(gate) and (misfit := ctx_agent_misfit(gate, "is_enabled")) is not None:
        raise UserError(f"tool {sdk_tool.name!r}: {misfit}")
    return gate


def hook_misfit(hooks: Any, owner: str) -> str | None:
    """Why the SDK could not call one of the methods an ``AgentHooks`` / ``RunHooks``
    object overrides, located at the method's ``def``; None when it can call them all.

    The arguments each takes are read from the installed SDK's base classes
    (``agents.lifecycle``), so a hook a new SDK adds is checked without a list here."""
    from agents.lifecycle import AgentHooksBase, RunHooksBase

    cls = type(hooks)
    for base in (AgentHooksBase, RunHooksBase):
        if not isinstance(hooks, base):
            continue
        for name, expected in vars(base).items():
            code = getattr(expected, "__code__", None)
            if name.startswith("_") or code is None or getattr(cls, name, None) is expected:
                continue
            method = getattr(hooks, name)
            args = code.co_varnames[1:code.co_argcount]  # after self
            misfit = call_misfit(
                method, f"hooks {cls.__name__}.{name} at {function_site(method)} ({owner})",
                args)
            if misfit is not None:
                return misfit
    return None


def settings_of(sdk_settings: Any) -> ModelSettings | None:
    if sdk_settings is None:
        return None
    fields: dict[str, Any] = {}
    for key in ("temperature", "top_p", "max_tokens", "parallel_tool_calls",
                "frequency_penalty", "presence_penalty", "extra_body"):
        value = getattr(sdk_settings, key, None)
        if value is not None:
            fields[key] = value
    choice = getattr(sdk_settings, "tool_choice", None)
    if isinstance(choice, str):
        fields["tool_choice"] = choice
    effort = getattr(getattr(sdk_settings, "reasoning", None), "effort", None)
    if effort in _REASONING_EFFORTS:
        fields["reasoning_effort"] = effort
    return ModelSettings(**fields) if fields else None


def function_tool(sdk_tool: Any) -> FunctionTool:
    fn, schema = private.tool_function(sdk_tool)
    context_type: Any = None
    if schema.takes_context:
        hints = resolved_hints(fn)
        code = getattr(fn, "__code__", None)
        params = list(code.co_varnames[:1]) if code is not None else []
        annotation = hints.get(params[0]) if params else None
        args = typing.get_args(annotation)
        context_type = context_param_type(annotation)
        if context_type is None:  # RunContextWrapper[T] / ToolContext[T]
            context_type = args[0] if args else Any
    parameters = dict(sdk_tool.params_json_schema)
    strict = bool(sdk_tool.strict_json_schema)
    uses_default, custom = private.failure_function(sdk_tool)
    timeout = sdk_tool.timeout_seconds
    made = FunctionTool(
        fn,
        name=sdk_tool.name,
        description=sdk_tool.description or "",
        params_model=schema.params_pydantic_model,
        params_json_schema=parameters,
        schema_problems=strictify(parameters).problems if strict else (),
        strict=strict,
        needs_approval=sdk_tool.needs_approval,
        context_type=context_type,
        takes_context=bool(schema.takes_context),
        failure_error_function=_DEFAULT if uses_default else custom,
        site=function_site(fn),
        timeout=float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None,
        is_enabled=_gate(sdk_tool),
    )
    made.defer_loading = bool(sdk_tool.defer_loading)
    made.unknown_doc_params = described_not_taken(fn)  # SW305, as for the DSL's tools
    made.runs_agents = agent_runs(fn)  # SW617: Runner.run inside the tool
    namespace = private.tool_namespace(sdk_tool)
    if namespace is not None:
        made.namespace, made.namespace_description = namespace
    return made


HOSTED = frozenset({"WebSearchTool", "FileSearchTool", "CodeInterpreterTool",
                     "ImageGenerationTool", "HostedMCPTool", "ToolSearchTool"})
"""The SDK's hosted tools, read as stepswitch's of the same names."""

_EMPTY_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {}, "required": [], "additionalProperties": False,
}
_NoArgs = create_model("OpaqueToolArgs", __config__=ConfigDict(extra="ignore"))


def opaque(tool_name: str, what: str, site: Site) -> FunctionTool:
    """A tool stepswitch cannot run, kept by name: the model is offered it, and a call
    gets an error output (SW601 says so before anything runs)."""

    def cannot_run() -> str:
        raise UserError(f"{what} runs only on OpenAI's side or in the SDK; stepswitch "
                        "cannot run it (see stepswitch explain SW601)")

    tool = FunctionTool(
        cannot_run,
        name=function_style(tool_name),
        description=f"{what} (not run by stepswitch)",
        params_model=_NoArgs,
        params_json_schema=dict(_EMPTY_SCHEMA),
        schema_problems=(),
        strict=True,
        needs_approval=False,
        context_type=None,
        takes_context=False,
        failure_error_function=_DEFAULT,
        site=site,
    )
    tool.opaque = what
    return tool


def hosted_tool(sdk_tool: Any) -> HostedTool:
    """An SDK hosted tool as stepswitch's of the same name and fields (the caller sets
    its site; a client-side tool search, which stepswitch does not run, is left out and
    reported by the caller)."""
    kind = type(sdk_tool).__name__
    made: HostedTool
    if kind == "WebSearchTool":
        made = WebSearchTool(
            user_location=sdk_tool.user_location, filters=sdk_tool.filters,
            search_context_size=sdk_tool.search_context_size,
            external_web_access=sdk_tool.external_web_access,
            search_content_types=sdk_tool.search_content_types,
            image_settings=sdk_tool.image_settings,
        )
    elif kind == "FileSearchTool":
        made = FileSearchTool(
            vector_store_ids=sdk_tool.vector_store_ids,
            max_num_results=sdk_tool.max_num_results,
            include_search_results=sdk_tool.include_search_results,
            ranking_options=sdk_tool.ranking_options, filters=sdk_tool.filters,
        )
    elif kind == "CodeInterpreterTool":
        made = CodeInterpreterTool(dict(sdk_tool.tool_config))
    elif kind == "ImageGenerationTool":
        made = ImageGenerationTool(dict(sdk_tool.tool_config))
    elif kind == "HostedMCPTool":
        made = HostedMCPTool(dict(sdk_tool.tool_config))
    else:  # ToolSearchTool; the caller reports a client-side search as not carried
        execution = sdk_tool.execution if sdk_tool.execution == "server" else None
        made = ToolSearchTool(description=sdk_tool.description, execution=execution,
                              parameters=sdk_tool.parameters)
    return made
