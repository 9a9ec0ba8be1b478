"""``@function_tool``: a Python function the model can call, with a schema derived from
its signature and docstring."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, overload

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model

from stepswitch._hints import resolved_hints
from stepswitch._names import function_style
from stepswitch._site import Site, caller_site, function_site
from stepswitch.context import RunContext
from stepswitch.errors import UserError
from stepswitch.ir import Approval
from stepswitch.schema import SchemaProblem, strictify

__all__ = [
    "FailureErrorFunction",
    "FunctionTool",
    "agent_runs",
    "call_misfit",
    "check_is_enabled",
    "context_param_type",
    "ctx_agent_misfit",
    "described_not_taken",
    "function_tool",
    "tool_namespace",
]

FailureErrorFunction = Callable[[Any, BaseException], str]
"""``fn(ctx, error) -> str``: the tool output the model sees when a tool raises."""

_DEFAULT: Any = object()


class FunctionTool:
    """A function the model may call. Calling the object calls the function.

    The run loop validates the model's arguments with ``params_model`` (pydantic,
    lax like the Agents SDK: ``"5"`` becomes ``5``) before the function runs.
    """

    opaque: str | None = None
    """Set on a tool stepswitch cannot run, read from another framework (what it stands
    for, e.g. ``"WebSearchTool 'web_search'"``); the analyzer reports it (SW601)."""
    unknown_doc_params: tuple[str, ...] = ()
    """Parameters the docstring describes (``Args:``) that the function does not have:
    their descriptions reach no schema; the analyzer reports them (SW305)."""
    namespace: str | None = None
    """The ``tool_namespace(name=...)`` it is grouped in for the Responses API's tool
    search; the model calls it as ``namespace.name``."""
    namespace_description: str | None = None
    defer_loading: bool = False
    """Hidden from the model until a tool search (``ss.ToolSearchTool``) loads it."""
    runs_agents: str | None = None
    """The agent run its function starts itself (``"Runner.run"``: see
    :func:`agent_runs`), whose agents and tools the analyzer cannot see (SW617)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        description: str,
        params_model: type[BaseModel],
        params_json_schema: dict[str, Any],
        schema_problems: tuple[SchemaProblem, ...],
        strict: bool,
        needs_approval: bool | Callable[..., Any],
        context_type: Any,
        takes_context: bool,
        failure_error_function: FailureErrorFunction | Any | None,
        site: Site,
        timeout: float | None = None,
        is_enabled: bool | Callable[..., Any] = True,
        tool_input_guardrails: Sequence[Any] = (),
        tool_output_guardrails: Sequence[Any] = (),
        max_uses: int | None = None,
    ) -> None:
        self.fn = fn
        self.name = name
        self.description = description
        self.params_model = params_model
        self.params_json_schema = params_json_schema
        self.schema_problems = schema_problems
        self.strict = strict
        self.needs_approval = needs_approval
        self.context_type = context_type
        self.takes_context = takes_context
        self.is_async = inspect.iscoroutinefunction(fn)
        self.failure_error_function = failure_error_function
        self.uses_default_failure = failure_error_function is _DEFAULT
        self.site = site
        self.timeout = timeout
        """Seconds one call may take; past it the call is a ``ToolTimeoutError``."""
        self.is_enabled = is_enabled
        """Whether the model is offered the tool: a bool, or ``fn(ctx, agent) -> bool``
        (sync or async), asked every turn."""
        self.tool_input_guardrails: list[Any] = list(tool_input_guardrails)
        """``@tool_input_guardrail`` s: each call passes them before the tool runs."""
        self.tool_output_guardrails: list[Any] = list(tool_output_guardrails)
        """``@tool_output_guardrail`` s: each output passes them before the model sees it."""
        self.max_uses = max_uses
        """How many times one run (its nested runs and flow nodes included) may run the
        tool; None: no limit."""
        self.__module__ = getattr(fn, "__module__", __name__)
        self.__qualname__ = getattr(fn, "__qualname__", name)
        self.__name__ = getattr(fn, "__name__", name)
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def param_names(self) -> tuple[str, ...]:
        """The names of the schema's parameters, in signature order."""
        return tuple(self.params_model.model_fields)

    def arguments_of(self, params: BaseModel) -> dict[str, Any]:
        """Keyword arguments for the function from validated params (nested models kept)."""
        return {name: getattr(params, name) for name in self.params_model.model_fields}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool(name={self.name!r})"


@overload
def function_tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def function_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: bool | Callable[..., Any] = False,
    strict: bool = True,
    failure_error_function: FailureErrorFunction | None = ...,
    timeout: float | None = None,
    max_uses: int | None = None,
    defer_loading: bool = False,
    name_override: str | None = None,
    description_override: str | None = None,
    strict_mode: bool | None = None,
    is_enabled: bool | Callable[..., Any] = True,
    tool_input_guardrails: Sequence[Any] | None = None,
    tool_output_guardrails: Sequence[Any] | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def function_tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: bool | Callable[..., Any] = False,
    strict: bool = True,
    failure_error_function: FailureErrorFunction | Any | None = _DEFAULT,
    timeout: float | None = None,
    max_uses: int | None = None,
    defer_loading: bool = False,
    name_override: str | None = None,
    description_override: str | None = None,
    strict_mode: bool | None = None,
    is_enabled: bool | Callable[..., Any] = True,
    tool_input_guardrails: Sequence[Any] | None = None,
    tool_output_guardrails: Sequence[Any] | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a function a tool: ``@function_tool`` or ``@function_tool(name=..., ...)``.

    The schema comes from the signature (ints, floats, bools, strings, enums,
    ``Literal``, ``Optional``, lists, nested pydantic models, dataclasses) and the
    parameter descriptions from the docstring (Google, NumPy or Sphinx style). A first
    parameter typed ``RunContext[T]`` receives the run context and is not in the schema.
    ``failure_error_function``: what the model sees when the tool raises; ``None``
    makes the error abort the run instead. ``timeout``: seconds one call may take; a
    call past it is an error output the model sees ("Tool '<name>' timed out after <s>
    seconds."), or with ``failure_error_function=None`` a ``ToolTimeoutError`` that ends
    the run. A synchronous tool runs in a worker thread, which cannot be stopped: past
    its timeout it runs on, but its result is dropped. ``max_uses``: how many times one
    run may run the tool, its nested agent-tool runs and a flow's nodes included (as a
    handoff's ``max_uses``, but for the whole run); once spent the tool is no longer
    offered, and a call of it anyway gets an error output and never runs. The analyzer
    uses it to prove ``ss.max_calls``. ``defer_loading=True`` hides the tool from the
    model until a tool search (``ss.ToolSearchTool``) loads it, as in the Agents SDK
    (Responses API only).

    ``is_enabled``: a bool, or ``fn(ctx, agent) -> bool`` (sync or async) asked every
    turn; the model is offered the tool only while it is enabled, and a call of it
    while disabled is treated as a call of an unknown tool. ``tool_input_guardrails`` /
    ``tool_output_guardrails``: ``@tool_input_guardrail`` / ``@tool_output_guardrail``
    functions around every call (see :mod:`stepswitch.dsl.tool_guardrails`).

    The Agents SDK's spellings are accepted: ``name_override`` for ``name``,
    ``description_override`` for ``description``, ``strict_mode`` for ``strict``.
    """
    name = _alias("name", name, "name_override", name_override)
    description = _alias("description", description, "description_override",
                         description_override)
    if strict_mode is not None:
        if strict is not True:
            raise UserError(
                f"function_tool at {caller_site()}: give strict or strict_mode "
                "(the Agents SDK's spelling), not both"
            )
        strict = strict_mode

    if type(defer_loading) is not bool:
        raise UserError(f"function_tool at {caller_site()}: defer_loading: expected True or "
                        f"False, got {defer_loading!r}")

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        tool = _make_tool(
            f,
            name=name,
            description=description,
            needs_approval=needs_approval,
            strict=strict,
            failure_error_function=failure_error_function,
            timeout=timeout,
            is_enabled=is_enabled,
            tool_input_guardrails=tool_input_guardrails,
            tool_output_guardrails=tool_output_guardrails,
            max_uses=max_uses,
        )
        if defer_loading:
            tool.defer_loading = True
        return tool

    if fn is not None:
        return wrap(fn)
    return wrap


def _alias(ours: str, value: Any, theirs: str, sdk_value: Any) -> Any:
    """``value``, or the Agents SDK spelling's ``sdk_value``; both at once is an error."""
    if sdk_value is None:
        return value
    if value is not None:
        raise UserError(
            f"function_tool at {caller_site()}: give {ours} or {theirs} "
            "(the Agents SDK's spelling), not both"
        )
    return sdk_value


def _make_tool(
    fn: Any,
    *,
    name: str | None,
    description: str | None,
    needs_approval: bool | Callable[..., Any],
    strict: bool,
    failure_error_function: Any,
    timeout: Any = None,
    is_enabled: Any = True,
    tool_input_guardrails: Any = None,
    tool_output_guardrails: Any = None,
    max_uses: Any = None,
) -> FunctionTool:
    if isinstance(fn, FunctionTool):
        raise UserError(f"function_tool at {caller_site()}: {fn.name!r} is already a tool")
    if not callable(fn):
        raise UserError(
            f"function_tool at {caller_site()}: expected a function, "
            f"got {type(fn).__name__} {fn!r}"
        )
    site = function_site(fn)
    if name is not None and (not isinstance(name, str) or not name):
        raise UserError(f"function_tool at {site}: name: expected a non-empty string, got {name!r}")
    if not isinstance(needs_approval, bool) and not callable(needs_approval):
        raise UserError(
            f"function_tool at {site}: needs_approval: expected a bool or a function "
            f"deciding per call, got {type(needs_approval).__name__} {needs_approval!r}"
        )
    if timeout is not None and (
        type(timeout) not in (int, float) or not 0 < timeout < float("inf")
    ):
        raise UserError(
            f"function_tool at {site}: timeout: expected a positive number of seconds or "
            f"None, got {type(timeout).__name__} {timeout!r}"
        )
    if max_uses is not None and (type(max_uses) is not int or max_uses < 1):
        raise UserError(
            f"function_tool at {site}: max_uses: expected a positive int (how many times one "
            f"run may run the tool) or None, got {type(max_uses).__name__} {max_uses!r}"
        )
    if failure_error_function is not _DEFAULT and failure_error_function is not None and (
        not callable(failure_error_function)
    ):
        raise UserError(
            f"function_tool at {site}: failure_error_function: expected a function or None"
        )
    check_is_enabled(is_enabled, "function_tool", site)
    input_guards = check_tool_guardrails(tool_input_guardrails, "tool_input_guardrails", site)
    output_guards = check_tool_guardrails(tool_output_guardrails, "tool_output_guardrails",
                                          site)
    tool_name = name or getattr(fn, "__name__", None) or function_style(type(fn).__name__)
    doc = parse_docstring(inspect.getdoc(fn) or "")
    params_model, plain_schema, context_type = _params_model(fn, tool_name, doc, site)
    strict_schema = strictify(plain_schema)  # a deep copy: plain_schema stays as it is
    schema = strict_schema.schema if strict else plain_schema
    tool = FunctionTool(
        fn,
        name=tool_name,
        description=description if description is not None else _description(doc),
        params_model=params_model,
        params_json_schema=schema,
        schema_problems=strict_schema.problems if strict else (),
        strict=strict,
        needs_approval=needs_approval,
        context_type=context_type,
        takes_context=context_type is not _NO_CONTEXT,
        failure_error_function=failure_error_function,
        site=site,
        timeout=timeout,
        is_enabled=is_enabled,
        tool_input_guardrails=input_guards,
        tool_output_guardrails=output_guards,
        max_uses=max_uses,
    )
    tool.unknown_doc_params = _unknown_doc_params(fn, doc)
    tool.runs_agents = agent_runs(fn)
    return tool


_RUNNERS = frozenset({"Runner", "AgentRunner"})
_RUN_METHODS = ("run", "run_sync", "run_streamed")


def agent_runs(fn: Any) -> str | None:
    """``"Runner.run"`` (``run_sync``, ``run_streamed``) when the code of ``fn`` (its
    nested functions and comprehensions too) refers to an Agents SDK runner's run: an
    agent run inside a tool (the SDK's custom agents-as-tools pattern), which no graph
    holds. Read from the code objects' names, never by calling anything; None when it
    names none. The functions of its own module it calls by name are read too (a helper
    that starts the run: ``"Runner.run, through ask()"``)."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    found = getattr(fn, "__globals__", None)
    module: dict[str, Any] = found if isinstance(found, dict) else {}
    todo: list[tuple[Any, str]] = [(code, "")] if code is not None else []
    seen: set[int] = set()
    while todo:
        current, via = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        names = current.co_names
        runner = next((n for n in names if n in _RUNNERS), None)
        if runner is not None:
            method = next((m for m in _RUN_METHODS if m in names), None)
            if method is not None:
                return f"{runner}.{method}" + (f", through {via}()" if via else "")
        todo.extend((c, via) for c in current.co_consts if hasattr(c, "co_names"))
        for name in names:
            helper: Any = module.get(name)  # a function of the same module, called by name
            if getattr(helper, "__globals__", None) is module and hasattr(helper, "__code__"):
                todo.append((helper.__code__, via or name))
    return None


def check_is_enabled(value: Any, what: str, site: Site) -> None:
    """``is_enabled`` is a bool or a function of ``(ctx, agent)``; else a ``UserError``."""
    if type(value) is bool:
        return
    if not callable(value):
        raise UserError(
            f"{what} at {site}: is_enabled: expected True, False or a function (ctx, agent) "
            f"-> bool, got {type(value).__name__} {value!r}"
        )
    misfit = ctx_agent_misfit(value, "is_enabled")
    if misfit is not None:
        raise UserError(f"{what} at {site}: {misfit}")


def ctx_agent_misfit(fn: Callable[..., Any], field: str) -> str | None:
    """Why ``fn`` cannot be called as ``fn(ctx, agent)`` (as instructions and
    ``is_enabled`` functions are), worded for ``field``: ``is_enabled: the function must
    take (ctx, agent), it takes 1 parameter(s)``; None when it can, or when its
    signature cannot be read."""
    return call_misfit(fn, field, ("ctx", "agent"))


def call_misfit(fn: Callable[..., Any], field: str, args: Sequence[str]) -> str | None:
    """Why ``fn`` cannot be called with the positional arguments ``args`` names (the SDK
    calls a guardrail as ``fn(ctx, agent, input)``, a hook method as
    ``on_start(context, agent)``), worded for ``field``; None when it can, or when its
    signature cannot be read."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    n = len(args)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if len(required) > n:
        takes = len(required)
    elif len(positional) < n:
        takes = len(positional)
    else:
        return None
    return f"{field}: the function must take ({', '.join(args)}), it takes {takes} parameter(s)"


def check_tool_guardrails(value: Any, field: str, site: Site) -> list[Any]:
    """A list of tool guardrails (either kind: one in the wrong list is the analyzer's
    SW409); anything else is a ``UserError`` naming the field."""
    if value is None:
        return []
    from stepswitch.dsl.tool_guardrails import ToolGuardrail

    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise UserError(f"function_tool at {site}: {field}: expected a list of tool "
                        f"guardrails, got {type(value).__name__} {value!r}")
    for i, guard in enumerate(value):
        if not isinstance(guard, ToolGuardrail):
            kind = "input" if "input" in field else "output"
            raise UserError(
                f"function_tool at {site}: {field}[{i}]: expected a @tool_{kind}_guardrail, "
                f"got {type(guard).__name__} {guard!r}"
            )
    return list(value)


def described_not_taken(fn: Any) -> tuple[str, ...]:
    """The parameters ``fn``'s docstring describes (``Args:``) that it does not take (a
    tool read from another framework, whose schema that framework made)."""
    return _unknown_doc_params(fn, parse_docstring(inspect.getdoc(fn) or ""))


def _unknown_doc_params(fn: Any, doc: docstring_parser.Docstring) -> tuple[str, ...]:
    """The names the docstring's ``Args:`` describes that are no parameter of ``fn``."""
    try:
        names = set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()
    found: list[str] = []
    for p in doc.params:
        name = p.arg_name.lstrip("*")
        if name and name not in names and name not in found:
            found.append(name)
    return tuple(found)


_NO_CONTEXT: Any = object()


def parse_docstring(text: str) -> docstring_parser.Docstring:
    """``docstring_parser.parse(text)``, without running the styles that cannot find
    anything in ``text``.

    ``parse`` runs all four styles (ReST, Google, NumPy, Epydoc, in that order) and
    keeps the first result with the most sections. The NumPy parser compiles a large
    regular expression and the Epydoc one several, for the first tool a process declares
    (bench/README.md). Neither finds anything without its markers: a
    NumPy section title is underlined with dashes (or is a ``.. deprecated::``
    directive), an Epydoc field starts with ``@``. Without those, the answer is the
    first of the ReST and Google results with the most sections, which is what this
    returns; with them, or when both of those fail, ``parse`` decides as before
    (tests/dsl/test_docstrings.py checks the two agree)."""
    if "@" in text or "--" in text or ".." in text:
        return docstring_parser.parse(text)
    found: docstring_parser.Docstring | None = None
    for style in (docstring_parser.rest, docstring_parser.google):
        try:
            parsed = style.parse(text)
        except docstring_parser.ParseError:
            continue
        if found is None or len(parsed.meta) > len(found.meta):
            found = parsed
    return found if found is not None else docstring_parser.parse(text)


def _description(doc: docstring_parser.Docstring) -> str:
    parts = [p for p in (doc.short_description, doc.long_description) if p]
    return "\n\n".join(parts)


def context_param_type(annotation: Any) -> Any:
    """``T`` for an annotation ``RunContext[T]`` (``Any`` for bare ``RunContext``);
    ``None`` when the annotation is not a run context."""
    if annotation is RunContext:
        return Any
    if typing.get_origin(annotation) is RunContext:
        args = typing.get_args(annotation)
        return args[0] if args else Any
    return None


def _params_model(
    fn: Any, tool_name: str, doc: docstring_parser.Docstring, site: Site
) -> tuple[type[BaseModel], dict[str, Any], Any]:
    """The parameters' pydantic model, its JSON schema (made once: generating it is
    most of a tool's declaration cost) and the run-context type, if any."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise UserError(f"function_tool at {site}: cannot read the signature: {exc}") from None
    hints = resolved_hints(fn)
    param_docs = {p.arg_name: p.description for p in doc.params if p.description}
    fields: dict[str, Any] = {}
    context_type: Any = _NO_CONTEXT
    for index, (pname, param) in enumerate(sig.parameters.items()):
        annotation = hints.get(pname, Any)
        if index == 0:
            ctx = context_param_type(annotation)
            if ctx is not None:
                context_type = ctx
                continue
        if context_param_type(annotation) is not None:
            raise UserError(
                f"function_tool at {site}: parameter {pname!r}: a RunContext parameter must "
                "come first"
            )
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            annotation = list[annotation]  # type: ignore[valid-type]
            default: Any = []
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            annotation = dict[str, annotation]  # type: ignore[valid-type]
            default = {}
        else:
            default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (annotation, Field(default, description=param_docs.get(pname)))
    model_name = "".join(part.capitalize() for part in function_style(tool_name).split("_"))
    try:
        model = create_model(
            f"{model_name or 'Tool'}Args",
            __config__=ConfigDict(extra="ignore", protected_namespaces=()),
            **fields,
        )
        schema = model.model_json_schema()
    except Exception as exc:
        raise UserError(
            f"function_tool {tool_name!r} at {site}: {_unschemable(fields, exc)}; use a "
            "standard type, an enum, a pydantic model or a dataclass"
        ) from None
    return model, schema, context_type


def _unschemable(fields: dict[str, tuple[Any, Any]], exc: Exception) -> str:
    """Which parameter has no JSON schema, in one line (pydantic's own error is an essay)."""
    from pydantic import TypeAdapter  # only for this error: its module is not otherwise needed

    for pname, (annotation, _) in fields.items():
        try:
            TypeAdapter(annotation).json_schema()
        except Exception:
            shown = getattr(annotation, "__name__", None) or repr(annotation)
            return f"parameter {pname!r} ({shown}) has no JSON schema"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"a parameter type has no JSON schema: {first}"




def tool_namespace(*, name: str, description: str, tools: list[FunctionTool]
                   ) -> list[FunctionTool]:
    """Copies of ``tools`` grouped in the namespace ``name`` (the Agents SDK's
    ``tool_namespace``): the Responses API offers them as one group a tool search can
    load, and the model calls each as ``name.tool``. The originals are left as they are."""
    import copy

    site = caller_site()
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"tool_namespace at {site}: name: expected a non-empty string, got "
                        f"{name!r}")
    if not isinstance(description, str) or not description.strip():
        raise UserError(f"tool_namespace at {site}: description: expected a non-empty string, "
                        f"got {description!r}")
    namespace = name.strip()
    out: list[FunctionTool] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, FunctionTool):
            raise UserError(f"tool_namespace({namespace!r}) at {site}: tools[{i}]: expected a "
                            f"@function_tool, got {type(tool).__name__}")
        if tool.name == namespace:
            raise UserError(
                f"tool_namespace({namespace!r}) at {site}: tools[{i}] {tool.name!r} has the "
                "namespace's own name, which the Responses API reserves for a deferred tool "
                "outside any namespace; rename the namespace or the tool"
            )
        made = copy.copy(tool)
        made.namespace = namespace
        made.namespace_description = description.strip()
        out.append(made)
    return out


def approval_mode(needs_approval: bool | Callable[..., Any]) -> Approval:
    """How a ``needs_approval`` setting reads in the spec."""
    if callable(needs_approval) and not isinstance(needs_approval, bool):
        return "per_call"
    return "always" if needs_approval else "never"
