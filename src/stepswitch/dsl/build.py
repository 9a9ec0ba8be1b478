"""Build: DSL objects → frozen ``WorkflowSpec`` plus the live objects it names.

The DSL's last stage, in the DSL's room: it reads the declaration objects, and what it
returns (:class:`~stepswitch.graph.bindings.BuiltWorkflow`) is plain data that the
graph, the analyzer, the renderers and lowering read without the DSL.

One pass over the declared agents. Tool specs are built once per tool object and
shared by every agent that lists it, so a 10,000-agent workflow that reuses a few
tools costs a few schema derivations, not 10,000.
"""

from __future__ import annotations

import inspect
import typing
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import ValidationError

from stepswitch._gc import gc_paused
from stepswitch._hints import resolved_hints
from stepswitch._names import default_handoff_tool_name, function_style
from stepswitch._site import Site, display_path
from stepswitch.dsl.agent import Agent, AgentTool, Handoff, StopAtTools
from stepswitch.dsl.flow import FlowEdge, Step, node_name
from stepswitch.dsl.guardrails import InputGuardrail, OutputGuardrail
from stepswitch.dsl.hosted import HostedTool
from stepswitch.dsl.servers import ToolServer
from stepswitch.dsl.tools import FunctionTool, approval_mode, context_param_type
from stepswitch.dsl.workflow import Workflow
from stepswitch.errors import UserError
from stepswitch.graph.bindings import Bindings, BuiltWorkflow
from stepswitch.graph.spec import (
    AGENT_TOOL_INPUT_SCHEMA,
    AgentName,
    AgentSpec,
    AgentToolSpec,
    FlowCaseSpec,
    FlowEdgeSpec,
    GuardrailSpec,
    HandoffSpec,
    HostedToolSpec,
    Location,
    MCPServerSpec,
    NotCarriedSpec,
    OutputTypeSpec,
    Ref,
    SchemaProblemSpec,
    StepSpec,
    ToolGuardrailSpec,
    ToolSpec,
    ToolUseBehaviorSpec,
    WorkflowSpec,
)
from stepswitch.policies import as_spec
from stepswitch.schema import (
    SchemaProblem,
    StrictSchema,
    json_schema_of,
    output_schema_of,
    strictify,
    unschematizable,
)
from stepswitch.settings import ModelSettings

_RUN_LLM_AGAIN = ToolUseBehaviorSpec()

__all__ = ["agents_of", "build"]

def build(wf: Workflow) -> BuiltWorkflow:
    """Snapshot a ``Workflow`` and every agent it reaches into a frozen spec."""
    with gc_paused():
        return _Builder().build(wf)


def agents_of(wf: Workflow) -> Iterator[Agent]:
    """The agents ``wf`` takes part with, each once, in the order ``build`` reads them:
    the listed ones, then every agent reached through object references (each
    checked again as it is now: a builder is mutable)."""
    seen: set[int] = set()
    queue: deque[Agent] = deque()
    start = list(wf.agents)
    if isinstance(wf.entry, Agent):
        start.append(wf.entry)
    for edge in wf.flow or ():
        start.extend(n for n in edge.nodes() if isinstance(n, Agent))
    for agent in start:
        if id(agent) not in seen:
            seen.add(id(agent))
            queue.append(agent)
    while queue:
        agent = queue.popleft()
        agent._recheck()
        yield agent
        for target in _object_targets(agent):
            if id(target) not in seen:
                seen.add(id(target))
                queue.append(target)


class _Builder:
    def __init__(self) -> None:
        self.objects: dict[str, object] = {}
        self.ref_by_id: dict[int, Ref] = {}
        self.tool_specs: dict[int, ToolSpec] = {}
        self.locations: dict[Site, Location] = {}
        self.by_name: dict[str, Agent] = {}
        self.settings: dict[int, dict[str, Any]] = {}

    def build(self, wf: Workflow) -> BuiltWorkflow:
        wf._recheck()  # builders are mutable: what changed since the declaration is checked
        agents = list(agents_of(wf))
        for agent in agents:
            self.by_name.setdefault(agent.name, agent)
        entry = wf.entry.name if isinstance(wf.entry, Agent | Step) else wf.entry
        spec = WorkflowSpec(
            name=wf.name,
            entry=AgentName(entry) if entry is not None else None,
            agents=tuple(self._checked_agent(a) for a in agents),
            max_turns=wf.max_turns,
            max_depth=wf.max_depth,
            max_model_calls=wf.max_model_calls,
            context_type=self._type_ref(wf.context_type),
            ignore=tuple(wf.ignore),
            steps=self._steps(wf),
            flow=None if wf.flow is None else tuple(self._edge(e) for e in wf.flow),
            policies=tuple(as_spec(p) for p in getattr(wf, "policies", ())),
            max_cost_usd=getattr(wf, "max_cost_usd", None),
            max_total_tokens=getattr(wf, "max_total_tokens", None),
            not_carried=tuple(
                NotCarriedSpec(attribute=n.attribute, owner=n.owner, detail=n.detail,
                               path=n.path, location=self._location(n.site))
                for n in getattr(wf, "not_carried", ())
            ),
            location=self._location(wf.site),
        )
        return BuiltWorkflow(spec, Bindings(dict(self.objects)),
                             tuple(getattr(wf, "_nearby_steps", ())))

    # -- flows --------------------------------------------------------------------------

    def _steps(self, wf: Workflow) -> tuple[StepSpec, ...]:
        """Every step object the flow (or the entry) names, in order, each once."""
        found: list[Step] = []
        seen: set[int] = set()
        candidates: list[object] = [wf.entry]
        for edge in wf.flow or ():
            candidates.extend(edge.nodes())
        for node in candidates:
            if isinstance(node, Step) and id(node) not in seen:
                seen.add(id(node))
                found.append(node)
        return tuple(self._step(s) for s in found)

    def _step(self, step: Step) -> StepSpec:
        input_type = self._type_ref(step.input_type)
        output_type = self._type_ref(step.output_type)
        assert input_type is not None and output_type is not None
        return StepSpec(
            name=step.name,
            ref=self._ref(step),
            is_async=step.is_async,
            takes_context=step.takes_context,
            context_type=self._type_ref(step.context_type) if step.takes_context else None,
            input_type=input_type,
            output_type=output_type,
            location=self._location(step.site),
        )

    def _edge(self, edge: FlowEdge) -> FlowEdgeSpec:
        source = node_name(edge.source)
        assert source is not None
        return FlowEdgeSpec(
            kind=edge.kind,
            source=source,
            target=node_name(edge.target) if edge.target is not None else None,
            otherwise=node_name(edge.otherwise) if edge.otherwise is not None else None,
            predicate=self._ref(edge.when) if edge.when is not None else None,
            field=edge.field,
            cases=tuple(FlowCaseSpec(value=k, target=node_name(v))
                        for k, v in edge.cases.items()),
            each=node_name(edge.each) if edge.each is not None else None,
            max_items=edge.max_items,
            concurrency=edge.concurrency,
            max_uses=edge.max_uses,
            location=self._location(edge.site),
        )

    # -- agents -------------------------------------------------------------------------

    def _checked_agent(self, agent: Agent) -> AgentSpec:
        with _changed(f"Agent({agent.name!r})", agent.site):
            return self._agent(agent)

    def _agent(self, agent: Agent) -> AgentSpec:
        tools: list[ToolSpec] = []
        agent_tools: list[AgentToolSpec] = []
        mcp: tuple[MCPServerSpec, ...] = ()
        extra: list[FunctionTool] = []
        if agent.mcp_servers:  # their locked tools are the agent's tools too
            mcp, extra = _server_specs(agent, self._location)
        hosted: list[HostedToolSpec] = []
        for tool in [*agent.tools, *extra] if extra else agent.tools:
            if isinstance(tool, FunctionTool):
                tools.append(self._tool(tool))
            elif isinstance(tool, HostedTool):
                hosted.append(self._hosted(tool))
            else:
                agent_tools.append(self._agent_tool(tool))
        instructions = agent.instructions if isinstance(agent.instructions, str) else None
        instructions_fn = None
        instructions_ctx = None
        if callable(agent.instructions):
            instructions_fn = self._ref(agent.instructions)
            instructions_ctx = self._first_param_context(agent.instructions)
        model_name: str | None = None
        model_ref: Ref | None = None
        if isinstance(agent.model, str):
            model_name = agent.model
        elif agent.model is not None:
            model_ref = self._ref(agent.model)
            attr = getattr(agent.model, "model", None)
            model_name = attr if isinstance(attr, str) else None
        settings = self._settings(agent.model_settings)
        return AgentSpec(
            name=AgentName(agent.name),
            instructions=instructions,
            instructions_fn=instructions_fn,
            instructions_context_type=instructions_ctx,
            tools=tuple(tools),
            handoffs=tuple(self._handoff(h, agent.site) for h in agent.handoffs),
            agent_tools=tuple(agent_tools),
            output_type=self._output_type(agent.output_type),
            model=model_name,
            model_ref=model_ref,
            model_settings=settings,
            handoff_description=agent.handoff_description,
            input_guardrails=tuple(self._guardrail(g) for g in agent.input_guardrails),
            output_guardrails=tuple(self._guardrail(g) for g in agent.output_guardrails),
            tool_use_behavior=self._tool_use(agent.tool_use_behavior),
            ignore=tuple(agent.ignore),
            mcp_servers=mcp,
            hosted_tools=tuple(hosted),
            hooks=self._instance_ref(agent.hooks, agent.site) if agent.hooks is not None
            else None,
            location=self._location(agent.site),
        )

    def _hosted(self, tool: HostedTool) -> HostedToolSpec:
        with _changed(f"{type(tool).__name__}", tool.site):
            return HostedToolSpec(kind=tool.kind, name=tool.name, config=tool.config(),
                                  include=tool.include(), location=self._location(tool.site))

    def _settings(self, settings: ModelSettings | None) -> dict[str, Any]:
        key = id(settings)
        cached = self.settings.get(key)
        if cached is None:
            cached = (settings or ModelSettings()).model_dump(mode="json", exclude_none=True)
            self.settings[key] = cached
        return cached

    def _tool(self, tool: FunctionTool) -> ToolSpec:
        cached = self.tool_specs.get(id(tool))
        if cached is not None:
            return cached
        with _changed(f"function tool {tool.name!r}", tool.site):
            spec = self._tool_spec(tool)
        self.tool_specs[id(tool)] = spec
        return spec

    def _tool_spec(self, tool: FunctionTool) -> ToolSpec:
        if tool.uses_default_failure:
            failure = "default"
        elif tool.failure_error_function is None:
            failure = "raise"
        else:
            failure = "custom"
        return ToolSpec(
            name=tool.name,
            description=tool.description,
            parameters=tool.params_json_schema,
            strict=tool.strict,
            schema_problems=_problems(tool.schema_problems),
            needs_approval=approval_mode(tool.needs_approval),
            ref=self._ref(tool),
            is_async=tool.is_async,
            context_type=self._type_ref(tool.context_type) if tool.takes_context else None,
            failure_mode=failure,
            timeout=getattr(tool, "timeout", None),
            max_uses=getattr(tool, "max_uses", None),
            opaque=tool.opaque,
            unknown_doc_params=tool.unknown_doc_params,
            runs_agents=tool.runs_agents,
            namespace=tool.namespace,
            namespace_description=tool.namespace_description,
            defer_loading=tool.defer_loading,
            is_enabled=self._enabled(getattr(tool, "is_enabled", True)),
            input_guardrails=tuple(
                self._tool_guardrail(g, "input") for g in tool.tool_input_guardrails
            ) if tool.tool_input_guardrails else (),
            output_guardrails=tuple(
                self._tool_guardrail(g, "output") for g in tool.tool_output_guardrails
            ) if tool.tool_output_guardrails else (),
            mcp_server=_mcp_server_name(tool),
            location=self._location(tool.site),
        )

    def _tool_guardrail(self, g: Any, kind: Literal["input", "output"]) -> ToolGuardrailSpec:
        declared = getattr(g, "kind", None)
        return ToolGuardrailSpec(
            name=str(getattr(g, "name", "") or "tool_guardrail"),
            kind=kind,
            declared_kind=declared if declared in ("input", "output") else None,
            ref=self._ref(g),
            is_async=bool(getattr(g, "is_async", False)),
            arity=getattr(g, "arity", None),
            declared_type=self._type_ref(getattr(g, "declared_type", None)),
            returns=self._type_ref(getattr(g, "returns", None)),
            location=self._location(g.site),
        )

    def _enabled(self, value: Any) -> bool | Ref:
        """``is_enabled`` in the spec: a bool as it is, a function by reference."""
        if value is True or value is False:
            return bool(value)
        return self._ref(value)

    def _instance_ref(self, obj: object, site: Site) -> Ref:
        """A reference to an object that is an instance (a hooks object), by the
        module-level name it is bound to in its class's module or in the module that
        declared ``site`` (so a generated runner can import it); else as ``_ref``."""
        cached = self.ref_by_id.get(id(obj))
        if cached is not None:
            return cached
        for module in _modules_for(obj, site):
            for name, value in vars(module).items():
                if value is obj and not name.startswith("__"):
                    path = f"{module.__name__}:{name}"
                    if self.objects.get(path, obj) is not obj:
                        continue
                    ref = Ref(path=path, importable=module.__name__ != "__main__",
                              display=type(obj).__name__)
                    self.objects[path] = obj
                    self.ref_by_id[id(obj)] = ref
                    return ref
        return self._ref(obj)

    def _handoff(self, item: Agent | Handoff | str, owner_site: Site) -> HandoffSpec:
        # A bare agent or name in handoffs=[...] is located at its owner's declaration.
        if isinstance(item, Handoff):
            h = item
        else:
            h = Handoff(
                item,
                max_uses=None,
                tool_name=None,
                description=None,
                input_type=None,
                on_handoff=None,
                input_filter=None,
                site=owner_site,
            )
        target = h.target_name
        target_agent = h.target if isinstance(h.target, Agent) else self.by_name.get(target)
        description = h.description
        if description is None:
            extra = target_agent.handoff_description if target_agent is not None else None
            description = f"Handoff to the {target} agent to handle the request. {extra or ''}"
        input_schema: dict[str, Any] | None = None
        problems: tuple[SchemaProblemSpec, ...] = ()
        if h.input_type is not None:
            strict = _strict_for(h.input_type)
            input_schema, problems = strict.schema, _problems(strict.problems)
        return HandoffSpec(
            target=AgentName(target),
            tool_name=h.tool_name or default_handoff_tool_name(target),
            description=description,
            max_uses=h.max_uses,
            input_schema=input_schema,
            input_type=self._type_ref(h.input_type),
            schema_problems=problems,
            on_handoff=self._ref(h.on_handoff) if h.on_handoff is not None else None,
            on_handoff_context_type=self._first_param_context(h.on_handoff),
            input_filter=self._ref(h.input_filter) if h.input_filter is not None else None,
            is_enabled=self._enabled(h.is_enabled),
            location=self._location(h.site),
        )

    def _agent_tool(self, tool: AgentTool) -> AgentToolSpec:
        target = tool.target_name
        if tool.parameters is not None:
            strict = _strict_for(tool.parameters)
            params, problems = strict.schema, _problems(strict.problems)
        else:
            params, problems = dict(AGENT_TOOL_INPUT_SCHEMA), ()
        extractor_type = None
        if tool.output_extractor is not None:
            extractor_type = self._type_ref(_first_param_annotation(tool.output_extractor))
        return AgentToolSpec(
            target=AgentName(target),
            tool_name=tool.name or function_style(target),
            description=tool.description or "",
            parameters=params,
            parameters_type=self._type_ref(tool.parameters),
            schema_problems=problems,
            max_turns=tool.max_turns,
            max_depth=tool.max_depth,
            needs_approval=approval_mode(tool.needs_approval),
            output_extractor=(
                self._ref(tool.output_extractor) if tool.output_extractor is not None else None
            ),
            extractor_input_type=extractor_type,
            is_enabled=self._enabled(tool.is_enabled),
            location=self._location(tool.site),
        )

    def _guardrail(self, g: InputGuardrail | OutputGuardrail) -> GuardrailSpec:
        return GuardrailSpec(
            name=g.name,
            kind="input" if isinstance(g, InputGuardrail) else "output",
            ref=self._ref(g),
            run_in_parallel=g.run_in_parallel,
            declared_type=self._type_ref(g.declared_type),
            context_type=self._type_ref(g.context_type),
            location=self._location(g.site),
        )

    def _output_type(self, tp: Any) -> OutputTypeSpec | None:
        if tp is None or tp is str:
            return None
        strict, wrapped = output_schema_of(tp)
        ref = self._type_ref(tp)
        assert ref is not None
        return OutputTypeSpec(
            ref=ref,
            schema_=strict.schema,
            wrapped=wrapped,
            schema_problems=_problems(strict.problems),
        )

    def _tool_use(self, behavior: Any) -> ToolUseBehaviorSpec:
        if isinstance(behavior, StopAtTools):
            return ToolUseBehaviorSpec(kind="stop_at_tools", tool_names=behavior.stop_at_tool_names)
        if behavior == "stop_on_first_tool":
            return ToolUseBehaviorSpec(kind="stop_on_first_tool")
        if callable(behavior):
            return ToolUseBehaviorSpec(kind="function", ref=self._ref(behavior))
        return _RUN_LLM_AGAIN

    # -- references and locations ---------------------------------------------------------

    def _ref(self, obj: object) -> Ref:
        cached = self.ref_by_id.get(id(obj))
        if cached is not None:
            return cached
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        if isinstance(module, str) and isinstance(qualname, str) and not _is_alias(obj):
            path = f"{module}:{qualname}"
            importable = module != "__main__" and "<" not in qualname
            display = qualname.rsplit(".", 1)[-1]
        else:
            display = _type_display(obj) if _is_alias(obj) else type(obj).__name__
            path = f"<object>:{display}"
            importable = False
        if path in self.objects and self.objects[path] is not obj:
            n = 2
            while f"{path}#{n}" in self.objects:
                n += 1
            path, importable = f"{path}#{n}", False
        ref = Ref(path=path, importable=importable, display=display)
        self.objects[path] = obj
        self.ref_by_id[id(obj)] = ref
        return ref

    def _type_ref(self, tp: Any) -> Ref | None:
        if tp is None:
            return None
        return self._ref(tp)

    def _first_param_context(self, fn: Callable[..., Any] | None) -> Ref | None:
        if fn is None:
            return None
        return self._type_ref(context_param_type(_first_param_annotation(fn)))

    def _location(self, site: Site) -> Location:
        loc = self.locations.get(site)
        if loc is None:
            loc = Location(file=display_path(site.file), line=site.line)
            self.locations[site] = loc
        return loc


@contextmanager
def _changed(what: str, site: Site) -> Iterator[None]:
    """A spec field that does not validate, though the declaration did: the object was
    changed afterwards (``tool.name = 3``). A located ``UserError``, never pydantic's
    error from deep in the build."""
    try:
        yield
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "a field"
        raise UserError(
            f"{what} (changed after its declaration) at {site}: {field}: {first['msg']}, "
            f"got {type(first.get('input')).__name__}"
        ) from None


def _modules_for(obj: object, site: Site) -> Iterator[Any]:
    """The modules where a module-level name may hold ``obj``: its class's, then the one
    whose file is ``site``'s."""
    import sys

    home = sys.modules.get(type(obj).__module__)
    if home is not None:
        yield home
    for module in list(sys.modules.values()):
        if module is not home and getattr(module, "__file__", None) == site.file:
            yield module


def _object_targets(agent: Agent) -> Iterator[Agent]:
    for h in agent.handoffs:
        if isinstance(h, Agent):
            yield h
        elif isinstance(h, Handoff) and isinstance(h.target, Agent):
            yield h.target
    for t in agent.tools:
        if isinstance(t, AgentTool) and isinstance(t.target, Agent):
            yield t.target


def _server_specs(
    agent: Agent, location: Callable[[Site], Location]
) -> tuple[tuple[MCPServerSpec, ...], list[FunctionTool]]:
    """Each server's spec, and the function tools its filter offers, in server order."""
    specs: list[MCPServerSpec] = []
    tools: list[FunctionTool] = []
    for server in agent.mcp_servers:
        if not isinstance(server, ToolServer):  # appended after the declaration
            raise UserError(
                f"Agent({agent.name!r}) at {agent.site} (changed after its declaration): "
                f"mcp_servers: expected ss.MCPServerStdio or ss.MCPServerStreamableHttp, "
                f"got {type(server).__name__} {server!r}"
            )
        spec, offered = server.to_spec(location)
        specs.append(spec)
        tools.extend(offered)
    return tuple(specs), tools


def _problems(problems: tuple[SchemaProblem, ...]) -> tuple[SchemaProblemSpec, ...]:
    return tuple(SchemaProblemSpec(rule=p.rule, path=p.path, message=p.message) for p in problems)


def _strict_for(tp: Any) -> StrictSchema:
    try:
        return strictify(json_schema_of(tp))
    except Exception as exc:
        return StrictSchema({}, (unschematizable(tp, exc),))


def _first_param_annotation(fn: Callable[..., Any]) -> Any:
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    if not params:
        return None
    return resolved_hints(fn).get(params[0])


def _mcp_server_name(tool: FunctionTool) -> str | None:
    server = getattr(tool, "mcp_server", None)  # set on the tools stepswitch.mcp makes
    name = getattr(server, "name", None)
    return name if isinstance(name, str) else None


def _is_alias(obj: object) -> bool:
    """Generic aliases (``list[int]``, ``Optional[X]``) have no importable qualname."""
    return typing.get_origin(obj) is not None


def _type_display(tp: object) -> str:
    text = repr(tp)
    return text.replace("typing.", "")
