"""``from_sdk``: an OpenAI Agents SDK app read into a stepswitch ``Workflow``.

The reader walks an ``agents.Agent`` and every agent it reaches through handoffs and
agent tools, and declares the same workflow in our DSL: function tools keep their
schemas and run the user's own functions; guardrails, instructions, ``on_handoff``
hooks and ``tool_use_behavior`` functions are the user's too. Hosted tools become
stepswitch's hosted tools of the same names, sent to the Responses API as declared.
Declaration sites point at the user's SDK code. What stepswitch cannot run (computer and
shell tools, MCP servers with settings it does not carry) becomes an opaque named tool,
reported by SW601, never dropped; every other SDK attribute is carried or, set to other
than its default, recorded on the workflow and reported by SW610
(:mod:`stepswitch.interop.sdk_fields` lists each one).

Private SDK attributes are read only in :mod:`stepswitch.interop._sdk_private`.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import os
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch._names import function_style
from stepswitch._site import Site, caller_site, function_site
from stepswitch.dsl.agent import Agent, AgentTool, Handoff, StopAtTools, ToolUseBehavior
from stepswitch.dsl.guardrails import InputGuardrail, OutputGuardrail
from stepswitch.dsl.hosted import (
    HostedTool,
)
from stepswitch.dsl.notes import NotCarried
from stepswitch.dsl.tool_guardrails import ToolInputGuardrail, ToolOutputGuardrail
from stepswitch.dsl.tools import FunctionTool, call_misfit, ctx_agent_misfit
from stepswitch.dsl.workflow import Workflow
from stepswitch.errors import UserError
from stepswitch.interop import _sdk_private as private
from stepswitch.interop import sdk_objects as _sdk_objects
from stepswitch.interop._sdk_callables import sdk_filter, tool_use_function
from stepswitch.interop._sdk_parts import (
    HOSTED,
    SDKNotCarriedWarning,
    fields_of,
    function_tool,
    hook_misfit,
    hosted_tool,
    instructions_of,
    note,
    opaque,
    settings_of,
)
from stepswitch.interop._sdk_walk import is_sdk_agent, sdk_roots
from stepswitch.interop._sites import SourceSites, modules_holding, sites_in
from stepswitch.interop.sdk_fields import lost_settings
from stepswitch.settings import ModelSettings

__all__ = [
    "SDKNotCarriedWarning",
    "converted",
    "from_sdk",
    "from_sdk_run",
    "is_sdk_agent",
    "sdk_roots",
]

_SDK_MAX_TURNS = 10
"""The SDK's ``DEFAULT_MAX_TURNS``: a run's budget, and an ``as_tool`` run's."""


def from_sdk(
    agent: Any,
    *,
    name: str | None = None,
    max_turns: int | None = _SDK_MAX_TURNS,
    max_depth: int = 8,
    context_type: Any = None,
    handoff_max_uses: int | None = None,
) -> Workflow:
    """The workflow an OpenAI Agents SDK agent describes, with ``agent`` as its entry.

    Every agent reached through handoffs and agent tools is included. ``max_turns``
    defaults to the SDK's 10; ``context_type`` to the ``Ctx`` of ``Agent[Ctx](...)``.
    Raises ``UserError`` (one line, naming the object and its file:line) for what cannot
    be read: not an SDK agent, an unsupported SDK version, an ``as_tool`` cycle, a tool
    that fails when read.

    The SDK has no handoff budgets, so an app whose handoffs form a cycle (triage and a
    specialist that hands back) fails ``check`` with SW201; ``handoff_max_uses=N`` gives
    every handoff of the app that budget, as ``ss.handoff(..., max_uses=N)`` would.
    """
    site = caller_site()
    private.check_version()
    if not is_sdk_agent(agent):
        raise UserError(
            f"from_sdk at {site}: expected an OpenAI Agents SDK agent (agents.Agent), got "
            f"{type(agent).__name__} {_short(agent)}"
        )
    if context_type is None:  # Agent[Account](...) keeps Account on the instance
        args = typing.get_args(getattr(agent, "__orig_class__", None))
        context_type = args[0] if args and isinstance(args[0], type) else None
    if handoff_max_uses is not None and (
        isinstance(handoff_max_uses, bool) or not isinstance(handoff_max_uses, int)
        or handoff_max_uses < 1
    ):
        raise UserError(f"from_sdk at {site}: handoff_max_uses: expected a positive int, got "
                        f"{handoff_max_uses!r}")
    reader = _Reader(site, handoff_max_uses)
    reader.source_files = list(_SOURCE_FILES.get() or ())
    entry = reader.read(agent)
    workflow = Workflow(
        name or agent.name,
        entry=entry,
        agents=list(reader.converted.values()),
        max_turns=max_turns,
        max_depth=max_depth,
        context_type=context_type,
    )
    workflow.site = entry.site  # workflow-level findings point at the entry agent
    workflow.not_carried = reader.notes
    return workflow


_SOURCE_FILES: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "stepswitch_sdk_source_files", default=None)
"""Files ``from_sdk`` looks for agent declarations in first (set by ``from_sdk_run``)."""


def from_sdk_run(agent: Any, *, name: str, run: Any) -> Workflow:
    """The workflow of the run a function TARGET started (``run`` is the
    :class:`~stepswitch.targets.call.Reached` it stopped at): ``from_sdk(agent)`` with the
    run's ``max_turns`` and its context's type, and every other run argument that is
    set recorded as not carried (SW610, located at the call)."""
    options = dict(run.options)
    max_turns = options.get("max_turns", _SDK_MAX_TURNS)
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        max_turns = _SDK_MAX_TURNS
    context = options.get("context")
    context_type = None if context is None else type(context)
    file, _, line = run.where.rpartition(":")
    sources = [f for f in (getattr(run, "source", ""), os.path.abspath(file) if file else "")
               if f]
    token = _SOURCE_FILES.set(sources)
    try:
        workflow = from_sdk(agent, name=name, max_turns=max_turns, context_type=context_type)
    finally:
        _SOURCE_FILES.reset(token)
    site = Site(file, int(line)) if file and line.isdigit() else workflow.site
    hooks = options.get("hooks")
    if hooks is not None and (misfit := hook_misfit(hooks, f"given to {run.how}(...) at {site}")):
        raise UserError(misfit)  # reported as well as warned: the SDK's run would fail on it
    values = {k: v for k, v in options.items()
              if k not in ("context", "max_turns", "session")}
    for attribute, detail in lost_settings("Runner.run", values):
        workflow.not_carried.append(
            note(attribute, f"the run {run.how}(...)", detail, "", site))
    return workflow


_CONVERTED: dict[tuple[int, str], tuple[Any, Any]] = {}
"""(id of the SDK object, kind) -> (the SDK object, kept alive; what it became)."""


def converted(sdk_obj: Any, kind: str = "", site: Site | None = None) -> Any:
    """What an SDK tool, guardrail (``kind=""``), ``tool_use_behavior`` function
    (``"tool_use"``), handoff input filter (``"input_filter"``) or MCP server (``"mcp"``,
    located at ``site``; None when stepswitch cannot carry it) becomes: made once per
    object, so a generated runner importing it by path gets the object the machine runs."""
    key = (id(sdk_obj), kind)
    hit = _CONVERTED.get(key)
    if hit is not None:
        return hit[1]
    result: Any
    if kind == "mcp":
        from stepswitch.mcp._sdk import read_sdk_server

        result = read_sdk_server(sdk_obj, site or _sdk_objects.site_of(sdk_obj))
        if result is not None:  # its tools import through the SDK server's name
            result.import_path = lambda: _sdk_objects.path_of(sdk_obj, "mcp")
        _CONVERTED[key] = (sdk_obj, result)
        return result
    if kind == "tool_use":
        result = tool_use_function(sdk_obj)
    elif kind == "input_filter":
        ours = _OWN_FILTERS.get((getattr(sdk_obj, "__module__", ""),
                                 getattr(sdk_obj, "__qualname__", "")))
        if ours is not None:  # one stepswitch runs as it is: kept under its own name
            from stepswitch.runtime import handoffs

            result = getattr(handoffs, ours)
            _CONVERTED[key] = (sdk_obj, result)
            return result
        result = sdk_filter(sdk_obj)
    elif type(sdk_obj).__name__ in ("ToolInputGuardrail", "ToolOutputGuardrail"):
        tool_cls = (ToolOutputGuardrail if type(sdk_obj).__name__ == "ToolOutputGuardrail"
                    else ToolInputGuardrail)
        fn = sdk_obj.guardrail_function
        result = tool_cls(fn, name=sdk_obj.get_name() if hasattr(sdk_obj, "get_name")
                          else sdk_obj.name, site=function_site(fn))
    elif hasattr(sdk_obj, "guardrail_function"):
        cls = OutputGuardrail if type(sdk_obj).__name__ == "OutputGuardrail" else InputGuardrail
        fn = sdk_obj.guardrail_function
        name = sdk_obj.get_name() if hasattr(sdk_obj, "get_name") else sdk_obj.name
        result = cls(fn, name=name, run_in_parallel=bool(getattr(sdk_obj, "run_in_parallel",
                                                                 False)),
                     site=function_site(fn))
    else:
        result = function_tool(sdk_obj)
        # each guardrail converted once, so a runner imports the object the machine runs
        result.tool_input_guardrails = [
            converted(g) for g in getattr(sdk_obj, "tool_input_guardrails", None) or ()]
        result.tool_output_guardrails = [
            converted(g) for g in getattr(sdk_obj, "tool_output_guardrails", None) or ()]
    path = _sdk_objects.path_of(sdk_obj, kind)
    if path is not None:
        result.__module__, result.__qualname__ = path
    _CONVERTED[key] = (sdk_obj, result)
    return result


_OWN_FILTERS = {
    ("agents.extensions.handoff_filters", "remove_all_tools"): "remove_all_tools",
}
"""The SDK's own input filters stepswitch has for its items, by module and name."""


def _short(obj: object) -> str:
    text = repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


# -- the reader ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Edge:
    kind: str  # "handoff" | "agent_tool"
    sdk: Any  # the SDK's Handoff / FunctionTool / Agent as listed
    target: Any  # the SDK agent it reaches (None: by name only)


class _Reader:
    def __init__(self, site: Site, handoff_max_uses: int | None = None) -> None:
        self.site = site
        self.handoff_max_uses = handoff_max_uses
        self.sdk_agents: dict[int, Any] = {}
        self.edges: dict[int, list[_Edge]] = {}
        self.converted: dict[int, Agent] = {}
        self.tools: dict[int, FunctionTool] = {}
        self.sites: dict[int, Site] = {}
        self.settings: dict[int, tuple[Any, ModelSettings | None]] = {}
        self.template: Agent | None = None
        self.notes: list[NotCarried] = []
        self._noted: set[tuple[int, str]] = set()
        self.source_files: list[str] = []
        """Files to find agents' ``Agent(name=...)`` lines in first (a function
        TARGET's own file: agents built inside it are in no module's namespace)."""

    # walk ------------------------------------------------------------------------------

    def read(self, root: Any) -> Agent:
        order = self._discover(root)
        self._locate(order)
        self._no_agent_tool_cycle(order)
        for agent in order:
            self.converted[id(agent)] = self._shell(agent)
        for agent in order:
            self._fill(agent)
        return self.converted[id(root)]

    def _discover(self, root: Any) -> list[Any]:
        order: list[Any] = []
        queue = [root]
        self.sdk_agents[id(root)] = root
        while queue:
            agent = queue.pop(0)
            order.append(agent)
            edges = self._edges_of(agent)
            self.edges[id(agent)] = edges
            for edge in edges:
                target = edge.target
                if target is not None and id(target) not in self.sdk_agents:
                    self.sdk_agents[id(target)] = target
                    queue.append(target)
        return order

    def _edges_of(self, agent: Any) -> list[_Edge]:
        edges: list[_Edge] = []
        for h in agent.handoffs:
            if is_sdk_agent(h):
                edges.append(_Edge("handoff", h, h))
                continue
            if not hasattr(h, "tool_name"):
                raise self._error(agent, f"handoffs: {_short(h)} is not an agent or a handoff")
            try:
                target = private.handoff_target(h)
            except UserError:
                target = None  # a hand-made Handoff: refer to its agent by name
            edges.append(_Edge("handoff", h, target))
        for t in agent.tools:
            if type(t).__name__ != "FunctionTool":
                continue
            try:
                target = private.agent_tool_target(t)
            except UserError as exc:
                raise self._error(agent, str(exc)) from None
            except Exception as exc:
                raise self._tool_error(agent, t, exc) from None
            if target is not None:
                if not is_sdk_agent(target):
                    raise self._error(agent, f"agent tool {t.name!r} wraps {_short(target)}, "
                                             "not an agents.Agent")
                edges.append(_Edge("agent_tool", t, target))
        return edges

    def _no_agent_tool_cycle(self, order: list[Any]) -> None:
        state: dict[int, int] = {}  # 1: on the path, 2: done
        for start in order:
            if state.get(id(start)):
                continue
            stack: list[tuple[Any, Iterable[_Edge]]] = [(start, iter(self._tool_edges(start)))]
            path = [start]
            state[id(start)] = 1
            while stack:
                agent, it = stack[-1]
                edge = next(iter(it), None)
                if edge is None:
                    stack.pop()
                    path.pop()
                    state[id(agent)] = 2
                    continue
                target = edge.target
                mark = state.get(id(target))
                if mark == 1:
                    cycle = [*path[path.index(target):], target]
                    names = " -> ".join(a.name for a in cycle)
                    raise UserError(
                        f"agent {target.name!r} at {self.sites[id(target)]}: its agent tools "
                        f"call it again ({names}); from_sdk reads as_tool structures without "
                        "cycles: declare the recursion in stepswitch with "
                        "ss.agent_tool(name, max_depth=N)"
                    )
                if mark is None:
                    state[id(target)] = 1
                    path.append(target)
                    stack.append((target, iter(self._tool_edges(target))))

    def _tool_edges(self, agent: Any) -> list[_Edge]:
        return [e for e in self.edges[id(agent)] if e.kind == "agent_tool"]

    # sites -----------------------------------------------------------------------------

    def _locate(self, order: list[Any]) -> None:
        ids = {id(a) for a in order}
        files: list[str] = []
        parsed: dict[str, SourceSites] = {}
        for file, variable, value in modules_holding(ids):
            agent = self.sdk_agents.get(id(value))
            if file not in parsed:
                files.append(file)
                parsed[file] = sites_in(file)
            if agent is None:
                continue
            found = parsed[file].site_of(variable, agent.name)
            if found is not None and id(agent) not in self.sites:
                self.sites[id(agent)] = found
        for tool_fn_file in [*self.source_files, *self._tool_files(order)]:
            if tool_fn_file not in files:
                files.append(tool_fn_file)
        for agent in order:
            if id(agent) in self.sites:
                continue
            for file in files:
                found = sites_in(file).site_of(None, agent.name)
                if found is not None:
                    self.sites[id(agent)] = found
                    break
        claimed = set(self.sites.values())  # calls whose agents are held by a variable
        for agent in order:  # built with a computed name: the one call that can make it
            if id(agent) not in self.sites:
                computed = [sites_in(file).computed_sites(agent.name) for file in files]
                matched = [s for m, _ in computed for s in m if s not in claimed]
                anything = [s for _, a in computed for s in a if s not in claimed]
                candidates = matched or anything
                if len(candidates) == 1:
                    self.sites[id(agent)] = candidates[0]
        for agent in order:  # else where the agent that first reaches it is declared
            if id(agent) not in self.sites:
                parent = next((a for a in order if id(a) in self.sites and any(
                    e.target is agent for e in self.edges[id(a)])), None)
                self.sites[id(agent)] = self.sites[id(parent)] if parent else self.site

    def _tool_files(self, order: list[Any]) -> list[str]:
        files: list[str] = []
        agent_tools = {id(e.sdk) for a in order for e in self.edges[id(a)]}
        seen: set[int] = set()
        for agent in order:
            for t in agent.tools:
                if id(t) in seen or id(t) in agent_tools or type(t).__name__ != "FunctionTool":
                    continue
                seen.add(id(t))
                code = None
                try:
                    fn, _ = private.tool_function(t)
                    code = getattr(fn, "__code__", None)
                except Exception:
                    pass
                if code is not None and code.co_filename not in files:
                    files.append(code.co_filename)
        return files

    # errors ----------------------------------------------------------------------------

    def _error(self, agent: Any, message: str) -> UserError:
        where = self.sites.get(id(agent), self.site)
        return UserError(f"agent {agent.name!r} at {where}: {message}")

    def _tool_error(self, agent: Any, tool: Any, exc: BaseException) -> UserError:
        tool_name = getattr(tool, "name", None) or type(tool).__name__
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return self._error(
            agent, f"tool {tool_name!r} cannot be read: {type(exc).__name__}: {first}"
        )

    # conversion ------------------------------------------------------------------------

    def _shell(self, sdk: Any) -> Agent:
        """The agent without its tools and handoffs (filled once every agent exists).

        A copy of one validated template with the SDK's (already typed) values set: the
        DSL's per-field validation would cost most of the read for a large app."""
        if self.template is None:
            self.template = Agent("template")
        name = sdk.name
        if not isinstance(name, str) or not name:
            raise self._error(sdk, f"name: expected a non-empty string, got {name!r}")
        agent = copy.copy(self.template)
        agent.name = name
        agent.instructions = instructions_of(sdk.instructions)
        if callable(agent.instructions):
            misfit = ctx_agent_misfit(agent.instructions, "instructions")
            if misfit is not None:  # the SDK fails on it when the agent's turn comes
                raise self._error(sdk, misfit)
        agent.output_type = self._output_type(sdk)
        agent.model = sdk.model if isinstance(sdk.model, str) else None
        agent.model_settings = self._settings(sdk.model_settings)
        handoff_description = sdk.handoff_description
        agent.handoff_description = (
            handoff_description if isinstance(handoff_description, str) else None
        )
        agent.tool_use_behavior = self._tool_use(sdk)
        agent.tools = []
        agent.handoffs = []
        agent.input_guardrails = []
        agent.output_guardrails = []
        agent.ignore = []
        agent.mcp_servers = []
        if sdk.hooks is not None and (misfit := hook_misfit(sdk.hooks, f"of agent {name!r}")):
            raise UserError(misfit)  # the SDK fails on it when the hook's moment comes
        agent.hooks = sdk.hooks  # the SDK's AgentHooks: called with stepswitch's values
        agent.site = self.sites[id(sdk)]
        return agent

    def _settings(self, sdk_settings: Any) -> ModelSettings | None:
        """Settings converted once per SDK settings object (apps share one often)."""
        key = id(sdk_settings)
        if key not in self.settings:
            try:
                self.settings[key] = (sdk_settings, settings_of(sdk_settings))
            except UserError as exc:
                raise UserError(f"model_settings {_short(sdk_settings)}: "
                                f"{str(exc).split(': ', 1)[-1]}") from None
        return self.settings[key][1]

    # settings not carried ------------------------------------------------------------

    def _check(self, table: str, obj: Any, values: Mapping[str, Any], owner: str, path: str,
               site: Site) -> None:
        """Record each of ``values`` that ``table`` does not carry (once per object)."""
        for attribute, detail in lost_settings(table, values):
            key = (id(obj), attribute)
            if key not in self._noted:
                self._noted.add(key)
                self.notes.append(note(attribute, owner, detail, path, site))

    def _check_agent(self, sdk: Any, site: Site) -> None:
        owner, path = f"agent {sdk.name!r}", f"agents.{sdk.name}"
        values = fields_of(sdk)
        settings = values.pop("model_settings", None)
        self._check("Agent", sdk, values, owner, path, site)
        if settings is not None and dataclasses.is_dataclass(settings) and not (
            private.implicit_settings(sdk.model, settings)
        ):
            self._check("ModelSettings", settings, fields_of(settings), owner,
                        f"{path}.model_settings", site)

    # filling ---------------------------------------------------------------------------

    def _fill(self, sdk: Any) -> None:
        agent = self.converted[id(sdk)]
        site = agent.site
        self._check_agent(sdk, site)
        edges = {id(e.sdk): e for e in self.edges[id(sdk)]}
        tools: list[FunctionTool | AgentTool | HostedTool] = []
        for t in sdk.tools:
            edge = edges.get(id(t))
            try:
                if edge is not None:
                    tools.append(self._agent_tool(t, edge.target, site))
                elif type(t).__name__ in HOSTED:
                    tools.append(self._hosted(sdk, t, site))
                else:
                    tools.append(self._tool(t, site))
            except UserError as exc:
                raise self._error(sdk, str(exc)) from None
            except Exception as exc:
                raise self._tool_error(sdk, t, exc) from None
            made = tools[-1]
            where = getattr(made, "site", None) or site
            if isinstance(made, AgentTool):
                self._check("FunctionTool", t, fields_of(t), f"agent tool {t.name!r} of agent "
                            f"{sdk.name!r}", f"agents.{sdk.name}.agent_tools.{t.name}", where)
                self._check("Agent.as_tool", t, private.agent_tool_settings(t),
                            f"agent tool {t.name!r} of agent {sdk.name!r}",
                            f"agents.{sdk.name}.agent_tools.{t.name}", where)
            elif isinstance(made, FunctionTool) and made.opaque is None:
                self._check("FunctionTool", t, fields_of(t), f"tool {t.name!r} of agent "
                            f"{sdk.name!r}", f"agents.{sdk.name}.tools.{t.name}", where)
        for server in getattr(sdk, "mcp_servers", ()) or ():
            server_name = getattr(server, "name", None) or type(server).__name__
            owner = f"MCP server {server_name!r} of agent {sdk.name!r}"
            read = converted(server, "mcp", site)  # None: it sets what stepswitch drops
            self._check("MCPServer", server, private.mcp_server_settings(server), owner,
                        f"agents.{sdk.name}.mcp_servers.{server_name}", site)
            if read is not None:
                agent.mcp_servers.append(read)
                continue
            from stepswitch.mcp._sdk import why_unread  # why it stays opaque: SW601 says
            tools.append(opaque(f"mcp_{server_name}", f"MCP server {server_name!r} with "
                                f"{why_unread(server)}", site))
        handoffs: list[Agent | Handoff | str] = []
        for h in sdk.handoffs:
            if is_sdk_agent(h) and self.handoff_max_uses is None:
                handoffs.append(self.converted[id(h)])
                continue
            if is_sdk_agent(h):
                handoffs.append(Handoff(self.converted[id(h)], max_uses=self.handoff_max_uses,
                                        tool_name=None, description=None, input_type=None,
                                        on_handoff=None, input_filter=None, site=site))
                continue
            made_handoff = self._handoff(h, edges[id(h)].target, site)
            handoffs.append(made_handoff)
            self._check("Handoff", h, fields_of(h), f"handoff {h.tool_name!r} of agent "
                        f"{sdk.name!r}", f"agents.{sdk.name}.handoffs.{h.tool_name}",
                        made_handoff.site)
        agent.tools = tools
        agent.handoffs = handoffs
        agent.input_guardrails = [self._guardrail(sdk, "input_guardrails", i, g)
                                  for i, g in enumerate(sdk.input_guardrails)]
        agent.output_guardrails = [self._guardrail(sdk, "output_guardrails", i, g)
                                   for i, g in enumerate(sdk.output_guardrails)]

    def _tool(self, sdk_tool: Any, site: Site) -> FunctionTool:
        cached = self.tools.get(id(sdk_tool))
        if cached is not None:
            return cached
        if type(sdk_tool).__name__ != "FunctionTool":
            tool_name = getattr(sdk_tool, "name", None) or function_style(type(sdk_tool).__name__)
            kind = type(sdk_tool).__name__
            tool: FunctionTool = opaque(str(tool_name), f"{kind} {tool_name!r}", site)
        else:
            tool = converted(sdk_tool)
        self.tools[id(sdk_tool)] = tool
        return tool

    def _hosted(self, sdk: Any, sdk_tool: Any, site: Site) -> HostedTool:
        """An SDK hosted tool as stepswitch's of the same name, located at its agent."""
        kind = type(sdk_tool).__name__
        owner = f"hosted tool {getattr(sdk_tool, 'name', kind)!r} of agent {sdk.name!r}"
        path = f"agents.{sdk.name}.hosted_tools.{getattr(sdk_tool, 'name', kind)}"
        self._check(kind, sdk_tool, fields_of(sdk_tool), owner, path, site)
        made = hosted_tool(sdk_tool)
        made.site = site
        return made

    def _agent_tool(self, sdk_tool: Any, target: Any, site: Site) -> AgentTool:
        options = private.agent_tool_options(sdk_tool)
        return AgentTool(
            self.converted[id(target)],
            name=sdk_tool.name,
            description=sdk_tool.description,
            max_turns=options["max_turns"] or _SDK_MAX_TURNS,
            max_depth=None,
            needs_approval=sdk_tool.needs_approval,
            output_extractor=options["custom_output_extractor"],
            parameters=options["parameters"],
            site=site,
            is_enabled=getattr(sdk_tool, "is_enabled", True),
        )

    def _handoff(self, h: Any, target: Any, site: Site) -> Handoff:
        on_handoff, input_type = private.handoff_hook(h)
        flt = h.input_filter
        return Handoff(
            self.converted[id(target)] if target is not None else h.agent_name,
            max_uses=self.handoff_max_uses,
            tool_name=h.tool_name,
            description=h.tool_description,
            input_type=input_type,
            on_handoff=on_handoff,
            input_filter=converted(flt, "input_filter") if flt is not None else None,
            site=site,  # the SDK records no handoff's call: the agent listing it
            is_enabled=private.handoff_gate(h),
        )

    def _guardrail(self, sdk: Any, field_name: str, index: int, g: Any) -> Any:
        if not hasattr(g, "guardrail_function"):
            # the SDK takes it too, and fails on it once a run reaches the agent
            what = (f"function {getattr(g, '__name__', '?')!r}" if callable(g)
                    else f"{type(g).__name__} {_short(g)}")
            deco = "@input_guardrail" if field_name == "input_guardrails" else "@output_guardrail"
            raise self._error(sdk, f"{field_name}[{index}] is a plain {what}, not a guardrail: "
                                   f"decorate it with {deco} (the SDK fails on it at run time)")
        kind = field_name.split("_")[0]
        fn = g.guardrail_function
        misfit = call_misfit(fn, f"{kind} guardrail {getattr(fn, '__name__', '?')!r} at "
                             f"{function_site(fn)} ({field_name}[{index}] of agent {sdk.name!r})",
                             ("ctx", "agent", kind))
        if misfit is not None:  # the SDK calls it so, and fails when the agent runs
            raise UserError(misfit)
        return converted(g)

    def _output_type(self, sdk: Any) -> Any:
        tp = sdk.output_type
        if tp is None or isinstance(tp, type) or typing.get_origin(tp) is not None:
            return tp
        inner = getattr(tp, "output_type", None)
        if inner is not None:  # AgentOutputSchema(T, strict_json_schema=False)
            return inner
        raise self._error(sdk, f"output_type {_short(tp)} is a custom output schema; "
                               "give stepswitch the output type itself")

    def _tool_use(self, sdk: Any) -> ToolUseBehavior:
        behavior = sdk.tool_use_behavior
        if behavior in ("run_llm_again", "stop_on_first_tool"):
            return typing.cast(ToolUseBehavior, behavior)
        if isinstance(behavior, Mapping) and "stop_at_tool_names" in behavior:
            return StopAtTools(list(behavior["stop_at_tool_names"]))
        if callable(behavior):
            misfit = call_misfit(behavior, f"tool_use_behavior "
                                 f"{getattr(behavior, '__name__', '?')!r} at "
                                 f"{function_site(behavior)} (of agent {sdk.name!r})",
                                 ("context", "results"))
            if misfit is not None:  # the SDK calls it so after the agent's tools ran
                raise UserError(misfit)
            return typing.cast(ToolUseBehavior, converted(behavior, "tool_use"))
        raise self._error(sdk, f"tool_use_behavior {_short(behavior)} is not one stepswitch "
                               "reads")
