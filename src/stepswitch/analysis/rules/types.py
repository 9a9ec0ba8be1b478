"""SW4xx types: schemas OpenAI strict mode rejects (with the rule each breaks),
guardrails and output extractors whose declared type does not fit, and
``RunContext[X]`` parameters that do not fit ``Workflow(context_type=...)``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from stepswitch.analysis._context import Ctx, where
from stepswitch.analysis._typefit import fits, show_type
from stepswitch.analysis.diagnostic import Diagnostic, DiagnosticLocation
from stepswitch.graph.spec import Ref, SchemaProblemSpec

__all__ = ["RULES"]

_STRICT_HELP = (
    "use a pydantic model with named, typed fields (no dict[str, X], Any or unions at "
    "the root); `stepswitch explain {code}` shows a fix"
)


_MCP_HELP = (
    "the schema is the server's, so it cannot be changed here: leave the tool out with the "
    "server's tool_filter ({{'blocked_tool_names': [{tool!r}]}}), or have the server's "
    "author fix it; `stepswitch explain SW402` shows what strict mode needs"
)


def _problem_diags(
    ctx: Ctx,
    code: str,
    what: str,
    problems: tuple[SchemaProblemSpec, ...],
    loc: DiagnosticLocation,
    help: str | None = None,
) -> Iterator[Diagnostic]:
    for p in problems:
        yield ctx.diag(
            code,
            f"{what}: strict-mode rule {p.rule} is broken at {p.path}: {p.message}",
            loc,
            help=help or _STRICT_HELP.format(code=code),
        )


def strict_schemas(ctx: Ctx) -> Iterator[Diagnostic]:
    seen: set[tuple[str, str]] = set()  # shared tools and output types: report once

    def first(kind: str, ref: Ref) -> bool:
        key = (kind, ref.path)
        if key in seen:
            return False
        seen.add(key)
        return True

    for agent in ctx.index().agents:
        out = agent.output_type
        if out is not None and out.schema_problems and first("output", out.ref):
            yield from _problem_diags(
                ctx, "SW401", f"output type {out.ref.display} of agent {agent.name!r}",
                out.schema_problems, where(agent.location, f"agents.{agent.name}.output_type"),
            )
        for i, tool in enumerate(agent.tools):
            if tool.strict and tool.schema_problems and first("tool", tool.ref):
                mcp = tool.mcp_server
                yield from _problem_diags(
                    ctx, "SW402", f"parameters of function tool {tool.name!r}" if mcp is None
                    else f"parameters of tool {tool.name!r} of MCP server {mcp!r}",
                    tool.schema_problems, where(tool.location, f"agents.{agent.name}.tools[{i}]"),
                    help=None if mcp is None else _MCP_HELP.format(tool=tool.name),
                )
        for i, h in enumerate(agent.handoffs):
            if h.schema_problems:
                shown = h.input_type.display if h.input_type else "?"
                yield from _problem_diags(
                    ctx, "SW403",
                    f"input type {shown} of the handoff {agent.name!r} → {h.target!r}",
                    h.schema_problems, where(h.location, f"agents.{agent.name}.handoffs[{i}]"),
                )
        for i, t in enumerate(agent.agent_tools):
            if t.schema_problems:
                shown = t.parameters_type.display if t.parameters_type else "?"
                yield from _problem_diags(
                    ctx, "SW404", f"parameters type {shown} of agent tool {t.tool_name!r}",
                    t.schema_problems,
                    where(t.location, f"agents.{agent.name}.agent_tools[{i}]"),
                )


def guardrail_types(ctx: Ctx) -> Iterator[Diagnostic]:
    bindings = ctx.graph.bindings
    for agent in ctx.index().agents:
        if not agent.output_guardrails and not agent.input_guardrails:
            continue
        name = agent.name
        base = f"agents.{name}"
        if agent.output_type is None:
            output: Any = str
            output_shown = "str (no output_type)"
        else:
            output = bindings.get(agent.output_type.ref)
            output_shown = agent.output_type.ref.display
        for i, g in enumerate(agent.output_guardrails):
            declared = bindings.get(g.declared_type)
            if declared is None or output is None or fits(output, declared):
                continue
            yield ctx.diag(
                "SW405",
                f"output guardrail {g.name!r} of agent {name!r} declares its output as "
                f"{show_type(declared)}, but the agent's output type is {output_shown}",
                where(g.location, f"{base}.output_guardrails[{i}]"),
                help=f"annotate the guardrail's third parameter as {output_shown.split()[0]}",
            )
        for i, g in enumerate(agent.input_guardrails):
            declared = bindings.get(g.declared_type)
            if declared is None or fits(str, declared) or fits(list, declared):
                continue
            yield ctx.diag(
                "SW405",
                f"input guardrail {g.name!r} of agent {name!r} declares its input as "
                f"{show_type(declared)}, but a run's input is a str or a list of items",
                where(g.location, f"{base}.input_guardrails[{i}]"),
                help="annotate the guardrail's third parameter as str | list[Any]",
            )


_DATA = {"input": "ToolInputGuardrailData", "output": "ToolOutputGuardrailData"}
_ACCEPTS = {"input": ("ToolInputGuardrailData",),
            "output": ("ToolOutputGuardrailData", "ToolInputGuardrailData")}
"""The data classes (stepswitch's, or the Agents SDK's of the same name) a guardrail's
parameter may declare: an output guardrail's data is an input guardrail's too."""


def _class_name(tp: Any) -> str | None:
    return tp.__name__ if isinstance(tp, type) else None


def _anything(tp: Any) -> bool:
    return tp is None or tp is object or tp is Any or getattr(tp, "_name", None) == "Any"


def tool_guardrail_types(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW408 and SW409: each tool guardrail takes one argument, sits in the list of its
    kind, and declares types its data and its verdict fit."""
    bindings = ctx.graph.bindings
    seen: set[str] = set()  # a tool shared by agents is reported once
    for agent in ctx.index().agents:
        for i, tool in enumerate(agent.tools):
            if not (tool.input_guardrails or tool.output_guardrails) or tool.ref.path in seen:
                continue
            seen.add(tool.ref.path)
            for g in (*tool.input_guardrails, *tool.output_guardrails):
                loc = where(g.location, f"agents.{agent.name}.tools[{i}]")
                what = f"tool {g.kind} guardrail {g.name!r} of tool {tool.name!r}"
                data = _DATA[g.kind]
                if g.arity is not None and g.arity != 1:
                    yield ctx.diag(
                        "SW408",
                        f"{what} takes {g.arity} argument(s); a tool guardrail takes one, "
                        f"its {data}",
                        loc,
                        help=f"write it as def {g.name}(data: {data}) -> "
                        "ToolGuardrailFunctionOutput",
                    )
                if g.declared_kind is not None and g.declared_kind != g.kind:
                    # the fix is where it is listed: at the tool's declaration
                    yield ctx.diag(
                        "SW409",
                        f"{what} is a tool {g.declared_kind} guardrail, listed in "
                        f"tool_{g.kind}_guardrails: it would get the wrong data",
                        where(tool.location, f"agents.{agent.name}.tools[{i}]"),
                        help=f"move it to tool_{g.declared_kind}_guardrails=[...]",
                    )
                    continue
                declared = bindings.get(g.declared_type)
                name = _class_name(declared)
                if not _anything(declared) and name not in _ACCEPTS[g.kind]:
                    yield ctx.diag(
                        "SW409",
                        f"{what} declares its argument as {show_type(declared)}, but it is "
                        f"given a {data}",
                        loc,
                        help=f"annotate the parameter as ss.{data}",
                    )
                returns = bindings.get(g.returns)
                if not _anything(returns) and _class_name(returns) != (
                    "ToolGuardrailFunctionOutput"
                ):
                    yield ctx.diag(
                        "SW409",
                        f"{what} declares it returns {show_type(returns)}; a tool guardrail "
                        "returns a ToolGuardrailFunctionOutput",
                        loc,
                        help="return ss.ToolGuardrailFunctionOutput.allow(), "
                        ".reject_content(message) or .raise_exception()",
                    )


def _is_run_result(tp: Any) -> bool:
    return isinstance(tp, type) and tp.__name__.startswith("RunResult")


def extractor_types(ctx: Ctx) -> Iterator[Diagnostic]:
    bindings = ctx.graph.bindings
    for agent in ctx.index().agents:
        name = agent.name
        for i, t in enumerate(agent.agent_tools):
            if t.extractor_input_type is None:
                continue
            declared = bindings.get(t.extractor_input_type)
            if declared is None or fits(object, declared) or _is_run_result(declared):
                continue
            yield ctx.diag(
                "SW406",
                f"the output extractor of agent tool {t.tool_name!r} declares it takes "
                f"{show_type(declared)}, but it is given the nested run's RunResult",
                where(t.location, f"agents.{name}.agent_tools[{i}]"),
                help="take the RunResult and read .final_output from it",
            )


def context_types(ctx: Ctx) -> Iterator[Diagnostic]:
    graph = ctx.graph
    context = graph.bindings.get(graph.spec.context_type)
    if context is None:
        return
    shown_ctx = show_type(context)
    seen_tools: set[str] = set()

    def check(what: str, ref: Ref | None, loc: DiagnosticLocation) -> Iterator[Diagnostic]:
        declared = graph.bindings.get(ref)
        if declared is None or fits(context, declared):
            return
        yield ctx.diag(
            "SW407",
            f"{what} takes RunContext[{show_type(declared)}], but the workflow's "
            f"context_type is {shown_ctx}",
            loc,
            help=f"annotate it as RunContext[{shown_ctx}] (or a base class of it)",
        )

    for name in graph.agent_names():
        agent = graph.agent(name)
        base = f"agents.{name}"
        yield from check(f"the instructions function of agent {name!r}",
                         agent.instructions_context_type, where(agent.location, base))
        for i, tool in enumerate(agent.tools):
            if tool.ref.path not in seen_tools:
                seen_tools.add(tool.ref.path)
                yield from check(f"function tool {tool.name!r}", tool.context_type,
                                 where(tool.location, f"{base}.tools[{i}]"))
        for i, h in enumerate(agent.handoffs):
            yield from check(f"the on_handoff hook of the handoff {name!r} → {h.target!r}",
                             h.on_handoff_context_type, where(h.location, f"{base}.handoffs[{i}]"))
        for kind, guards in (("input", agent.input_guardrails),
                             ("output", agent.output_guardrails)):
            for i, g in enumerate(guards):
                yield from check(f"{kind} guardrail {g.name!r} of agent {name!r}",
                                 g.context_type,
                                 where(g.location, f"{base}.{kind}_guardrails[{i}]"))
    seen_steps: set[str] = set()
    for s in graph.spec.steps:  # a flow's steps get the same context object
        if s.name not in seen_steps:
            seen_steps.add(s.name)
            yield from check(f"step {s.name!r}", s.context_type,
                             where(s.location, f"steps.{s.name}"))


RULES = (strict_schemas, guardrail_types, tool_guardrail_types, extractor_types, context_types)
