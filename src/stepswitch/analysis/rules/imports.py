"""SW711: the objects of agents (and of flow steps' types) a generated runner could not
import by path — what ``stepswitch compile`` refuses, reported by ``check`` too.

SW709 reports a flow's steps and predicates; this rule reports every other object the
machine's IR names (``MachineIR.refs()``): instructions functions, models, output types,
tool-use functions, guardrails, function tools, handoff input types, hooks and filters,
agent tools' parameter types and output extractors, and the input and output types of
flow steps. ``Ref.importable`` (set when the spec is built) says which have no import
path: lambdas, objects defined inside functions, objects of ``__main__``, generic
aliases, and a second object at a path another object already has. Whether an import
path really leads back to the same object is left to ``compile`` (it needs an import).
"""

from __future__ import annotations

from collections.abc import Iterator

from stepswitch.analysis._context import Ctx, agent_path, where
from stepswitch.analysis.diagnostic import Diagnostic
from stepswitch.analysis.rules.flow import _nested  # what SW709 reports
from stepswitch.graph.spec import Location, Ref

__all__ = ["RULES", "imported_refs"]


def imported_refs(ctx: Ctx) -> Iterator[tuple[Ref, str, Location, str]]:
    """Each ref a generated runner imports that SW709 does not cover: the ref, what it
    is (``tool 'x'``), where it is declared and its spec path. Mirrors
    ``MachineIR.refs()``; a test holds the two together."""
    spec = ctx.graph.spec
    for agent in spec.agents:
        at = agent_path(agent.name)
        loc = agent.location
        if agent.instructions_fn is not None:
            yield agent.instructions_fn, "instructions function", loc, f"{at}.instructions"
        if agent.model_ref is not None:
            yield agent.model_ref, "model", loc, f"{at}.model"
        if agent.output_type is not None:
            yield agent.output_type.ref, "output type", loc, f"{at}.output_type"
        if agent.tool_use_behavior.ref is not None:
            yield agent.tool_use_behavior.ref, "tool_use_behavior", loc, \
                f"{at}.tool_use_behavior"
        for kind, guards in (("input", agent.input_guardrails),
                             ("output", agent.output_guardrails)):
            for i, g in enumerate(guards):
                yield g.ref, f"{kind} guardrail {g.name!r}", g.location, \
                    f"{at}.{kind}_guardrails[{i}]"
        if agent.hooks is not None:
            yield agent.hooks, "hooks", loc, at
        for i, t in enumerate(agent.tools):
            if t.opaque is None:  # a tool stepswitch cannot run at all is SW601's
                yield t.ref, f"tool {t.name!r}", t.location, f"{at}.tools[{i}]"
            if isinstance(t.is_enabled, Ref):
                yield t.is_enabled, f"tool {t.name!r} is_enabled", t.location, f"{at}.tools[{i}]"
            for tg in (*t.input_guardrails, *t.output_guardrails):
                yield tg.ref, f"tool {t.name!r} tool {tg.kind} guardrail {tg.name!r}", \
                    tg.location, f"{at}.tools[{i}]"
        for i, h in enumerate(agent.handoffs):
            path = f"{at}.handoffs[{i}]"
            if isinstance(h.is_enabled, Ref):
                yield h.is_enabled, f"handoff {h.tool_name!r} is_enabled", h.location, path
            for ref, what in ((h.input_type, "input type"), (h.on_handoff, "on_handoff"),
                              (h.input_filter, "input_filter")):
                if ref is not None:
                    yield ref, f"handoff {h.tool_name!r} {what}", h.location, path
        for i, a in enumerate(agent.agent_tools):
            path = f"{at}.agent_tools[{i}]"
            if isinstance(a.is_enabled, Ref):
                yield a.is_enabled, f"agent tool {a.tool_name!r} is_enabled", a.location, path
            for ref, what in ((a.output_extractor, "output extractor"),
                              (a.parameters_type, "parameters type")):
                if ref is not None:
                    yield ref, f"agent tool {a.tool_name!r} {what}", a.location, path
    if spec.flow is not None:
        for k, edge in enumerate(spec.flow):
            ref = edge.predicate
            if ref is not None and not _nested(ref):
                yield ref, f"branch from {edge.source!r}: predicate", edge.location, f"flow[{k}]"
        for s in spec.steps:
            if not _nested(s.ref):
                yield s.ref, f"step {s.name!r}", s.location, f"steps.{s.name}"
            for ref, what in ((s.input_type, "input type"), (s.output_type, "output type")):
                # a type with no path at all (list[Outline]) is kept as JSON, not imported
                if not ref.path.startswith("<object>"):
                    yield ref, f"step {s.name!r} {what}", s.location, f"steps.{s.name}"


def not_importable(ctx: Ctx) -> Iterator[Diagnostic]:
    """SW711: objects of the workflow a generated runner cannot import by path."""
    seen: set[tuple[str, str]] = set()
    for ref, what, location, path in imported_refs(ctx):
        if ref.importable or (ref.path, path) in seen:
            continue
        seen.add((ref.path, path))
        owner = path.split(".", 2)[1] if path.startswith("agents.") else None
        whose = f"agent {owner!r} " if owner is not None else ""
        label = repr(ref.display or ref.path)
        named = "" if label in what else f" {label}"  # step 's', not step 's' 's'
        yield ctx.diag(
            "SW711",
            f"{whose}{what}{named} ({ref.path}) {_why(ref)}, so a "
            "generated runner (stepswitch compile) cannot import it",
            where(location, path),
            help=_help(ref),
        )


def _why(ref: Ref) -> str:
    module, _, qualname = ref.path.partition(":")
    if module.startswith("<"):
        return ("has no import path (an object made where it is passed, such as "
                "hooks=AuditHooks(), or a generic alias such as list[int])")
    if qualname.startswith("<mcp "):
        return "is a tool of an MCP server that no module-level name holds"
    if "#" in qualname:
        return "shares its import path with another object of the workflow"
    if module == "__main__":
        return "is defined in __main__ (the script being run)"
    if "<lambda>" in qualname:
        return "is a lambda"
    return "is defined inside a function"


def _help(ref: Ref) -> str:
    if ref.path.partition(":")[2].startswith("<mcp "):
        return ("assign the server to a module-level name (files = ss.MCPServerStdio(...)); "
                "a generated runner imports its tools as module:files.tools.NAME")
    if ref.path.startswith("<"):
        return ("assign the object to a module-level name (audit = AuditHooks()) and pass "
                "that, or declare a named type at module level; only `stepswitch compile` "
                "needs it")
    if ref.path.startswith("__main__:"):
        return "move it into a module the runner can import"
    return "define it with def or class at module level, under its own name"


RULES = (not_importable,)
