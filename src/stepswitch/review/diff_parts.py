"""The per-agent parts of ``diff_specs``: function tools, handoffs, agent tools and
guardrails, each matched by name (renames by function or target). Not API.
"""

from __future__ import annotations

from stepswitch._names import default_handoff_tool_name
from stepswitch.graph.spec import (
    AgentSpec,
    AgentToolSpec,
    GuardrailSpec,
    HandoffSpec,
    ToolSpec,
)
from stepswitch.review._diff_base import (
    _AGENT_TOOL_FIELDS,
    _GUARDRAIL_FIELDS,
    _HANDOFF_FIELDS,
    _TOOL_FIELDS,
    Subject,
    _Base,
    _first_of_each,
    _match,
    _ref,
    _schema_delta,
    _texts,
    _untitled,
)

__all__ = ["_Parts"]


class _Parts(_Base):
    """Comparisons of the elements inside an agent."""

    # -- function tools ------------------------------------------------------------------

    def tools(self, agent: str, ba: AgentSpec, ha: AgentSpec) -> None:
        base = _first_of_each(ba.tools, lambda t: t.name)
        head = _first_of_each(ha.tools, lambda t: t.name)
        p = f"agents.{agent}.tools"
        renamed = _match(
            [n for n in base if n not in head], [n for n in head if n not in base],
            lambda n: base[n].ref.path, lambda n: head[n].ref.path,
        )
        for name, tool in base.items():
            if name in head:
                continue
            if name in renamed:
                new = renamed[name]
                self.add("state", "renamed", f"{p}.{new}",
                         f"tool {name!r} of agent {agent!r} renamed to {new!r}: saved states "
                         "with calls to it cannot resume", tool.location, head[new].location,
                         ("tool", agent, new))
                self.tool(agent, tool, head[new])
            else:
                self.add("state", "removed", f"{p}.{name}",
                         f"tool {name!r} of agent {agent!r} removed: saved states with calls "
                         "to it cannot resume", tool.location, None, ("tool", agent, name))
                self.gate_removed(f"{p}.{name}", f"tool {name!r} of agent {agent!r}",
                                  tool.needs_approval, tool.location, ("tool", agent, name),
                                  ref=tool.ref.path)
        new_names = set(renamed.values())
        for name, tool in head.items():
            if name in base:
                self.tool(agent, base[name], tool)
            elif name not in new_names:
                extra = " (needs approval)" if tool.needs_approval != "never" else ""
                self.add("structure", "added", f"{p}.{name}",
                         f"tool {name!r} added to agent {agent!r}{extra}", None, tool.location,
                         ("tool", agent, name))
        self.order(p, f"tools of agent {agent!r}", list(base), list(head), renamed,
                   ba.location, ha.location, agent)

    def tool(self, agent: str, b: ToolSpec, h: ToolSpec) -> None:
        if b == h:
            return
        p = f"agents.{agent}.tools.{h.name}"
        bl, hl = b.location, h.location
        me: Subject = ("tool", agent, h.name)
        what = f"tool {h.name!r} of agent {agent!r}"
        if b.description != h.description:
            self.add("model", "changed", f"{p}.description",
                     f"description of {what} changed: "
                     f"{_texts(b.description, h.description)}", bl, hl, me)
        if _untitled(b.parameters, b.name != h.name) != _untitled(h.parameters, b.name != h.name):
            self.add("model", "changed", f"{p}.parameters",
                     f"parameters of {what}: {_schema_delta(b.parameters, h.parameters)}",
                     bl, hl, me)
        if b.strict != h.strict:
            self.add("model", "changed", f"{p}.strict",
                     f"{what} sends its schema {'strict' if h.strict else 'non-strict'} now",
                     bl, hl, me)
        self.approval(p, what, b.needs_approval, h.needs_approval, bl, hl, me)
        if b.ref.path != h.ref.path:
            self.add("structure", "changed", f"{p}.ref",
                     f"{what} runs another function: {b.ref.path} → {h.ref.path}", bl, hl, me)
        elif b.ref != h.ref:
            self.add("cosmetic", "changed", f"{p}.ref",
                     f"{what}: display name or importability of its function changed",
                     bl, hl, me)
        if b.mcp_server != h.mcp_server:
            self.add("structure", "changed", f"{p}.mcp_server",
                     f"{what} is {_served(b.mcp_server)} → {_served(h.mcp_server)}",
                     bl, hl, me)
        if b.is_async != h.is_async:
            self.add("structure", "changed", f"{p}.is_async",
                     f"{what} is {'async' if h.is_async else 'sync'} now", bl, hl, me)
        if _ref(b.context_type) != _ref(h.context_type):
            self.add("structure", "changed", f"{p}.context_type",
                     f"context type of {what}: {_ref(b.context_type)} → "
                     f"{_ref(h.context_type)}", bl, hl, me)
        if b.failure_mode != h.failure_mode:
            self.add("structure", "changed", f"{p}.failure_mode",
                     f"failure mode of {what}: {b.failure_mode} → {h.failure_mode}", bl, hl, me)
        self.gate(p, what, b.is_enabled, h.is_enabled, bl, hl, me)
        for kind in ("input", "output"):
            before = [g.name for g in getattr(b, f"{kind}_guardrails")]
            after = [g.name for g in getattr(h, f"{kind}_guardrails")]
            if before != after:
                self.add("safety", "changed", f"{p}.{kind}_guardrails",
                         f"tool {kind} guardrails of {what}: {before or 'none'} → "
                         f"{after or 'none'}", bl, hl, me)
        self.limit(f"{p}.max_uses", f"run budget (max_uses) of {what}", b.max_uses,
                   h.max_uses, bl, hl, me)
        self.unknown_fields(b, h, _TOOL_FIELDS, p, bl, hl, me)

    # -- handoffs ------------------------------------------------------------------------

    def handoffs(self, agent: str, ba: AgentSpec, ha: AgentSpec) -> None:
        # A renamed agent renames the handoffs to it; match them through the rename.
        base = _first_of_each(ba.handoffs, lambda e: self.handoff_key(e))
        head = _first_of_each(ha.handoffs, lambda e: e.tool_name)
        p = f"agents.{agent}.handoffs"
        renamed = _match(
            [n for n in base if n not in head], [n for n in head if n not in base],
            lambda n: self.renamed.get(base[n].target, base[n].target),
            lambda n: head[n].target,
        )
        for key, edge in base.items():
            if key in head:
                continue
            if key in renamed:
                new = renamed[key]
                self.add("state", "renamed", f"{p}.{new}",
                         f"handoff tool {edge.tool_name!r} of agent {agent!r} renamed to "
                         f"{new!r}: saved states with calls to it cannot resume",
                         edge.location, head[new].location, ("edge", agent, new))
                self.handoff(agent, edge, head[new])
            else:
                self.add("state", "removed", f"{p}.{edge.tool_name}",
                         f"handoff {agent!r} → {edge.target!r} ({edge.tool_name}) removed: "
                         "saved states with calls to it cannot resume", edge.location, None,
                         ("edge", agent, edge.tool_name))
        new_names = set(renamed.values())
        for key, edge in head.items():
            if key in base:
                self.handoff(agent, base[key], edge)
            elif key not in new_names:
                budget = "" if edge.max_uses is None else f", max_uses={edge.max_uses}"
                self.add("structure", "added", f"{p}.{key}",
                         f"handoff {agent!r} → {edge.target!r} ({key}{budget}) added", None,
                         edge.location, ("edge", agent, key))
        self.order(p, f"handoffs of agent {agent!r}", list(base), list(head), renamed,
                   ba.location, ha.location, agent)

    def handoff_key(self, edge: HandoffSpec) -> str:
        """The head-side tool name this base handoff would have under the agent renames."""
        new = self.renamed.get(edge.target)
        if new is not None and edge.tool_name == default_handoff_tool_name(edge.target):
            return default_handoff_tool_name(new)
        return edge.tool_name

    def handoff(self, agent: str, b: HandoffSpec, h: HandoffSpec) -> None:
        p = f"agents.{agent}.handoffs.{h.tool_name}"
        bl, hl = b.location, h.location
        me: Subject = ("edge", agent, h.tool_name)
        what = f"handoff {agent!r} → {h.target!r}"
        if self.renamed.get(b.target, b.target) != h.target:
            self.add("state", "changed", f"{p}.target",
                     f"handoff tool {h.tool_name!r} of agent {agent!r} now leads to "
                     f"{h.target!r} instead of {b.target!r}: running durable runs and saved "
                     "states take the other path", bl, hl, me)
        if b.description != h.description:
            self.add("model", "changed", f"{p}.description",
                     f"description of {what} changed: "
                     f"{_texts(b.description, h.description)}", bl, hl, me)
        if b.input_schema != h.input_schema:
            self.add("model", "changed", f"{p}.input_schema",
                     f"input of {what}: {_schema_delta(b.input_schema, h.input_schema)}",
                     bl, hl, me)
        elif _ref(b.input_type) != _ref(h.input_type):
            self.add("structure", "changed", f"{p}.input_type",
                     f"input type of {what}: {_ref(b.input_type)} → {_ref(h.input_type)}",
                     bl, hl, me)
        self.limit(f"{p}.max_uses", f"max_uses of {what}", b.max_uses, h.max_uses, bl, hl, me)
        if _ref(b.input_filter) != _ref(h.input_filter):
            self.add("model", "changed", f"{p}.input_filter",
                     f"input filter of {what} (the history the next agent's model sees): "
                     f"{_ref(b.input_filter)} → {_ref(h.input_filter)}", bl, hl, me)
        if _ref(b.on_handoff) != _ref(h.on_handoff) or _ref(b.on_handoff_context_type) != _ref(
            h.on_handoff_context_type
        ):
            self.add("structure", "changed", f"{p}.on_handoff",
                     f"on_handoff hook of {what}: {_ref(b.on_handoff)} → {_ref(h.on_handoff)}",
                     bl, hl, me)
        self.gate(p, what, b.is_enabled, h.is_enabled, bl, hl, me)
        self.unknown_fields(b, h, _HANDOFF_FIELDS, p, bl, hl, me)

    # -- agent tools ---------------------------------------------------------------------

    def agent_tools(self, agent: str, ba: AgentSpec, ha: AgentSpec) -> None:
        base = _first_of_each(ba.agent_tools, lambda e: e.tool_name)
        head = _first_of_each(ha.agent_tools, lambda e: e.tool_name)
        p = f"agents.{agent}.agent_tools"
        renamed = _match(
            [n for n in base if n not in head], [n for n in head if n not in base],
            lambda n: self.renamed.get(base[n].target, base[n].target),
            lambda n: head[n].target,
        )
        for name, edge in base.items():
            if name in head:
                continue
            if name in renamed:
                new = renamed[name]
                self.add("state", "renamed", f"{p}.{new}",
                         f"agent tool {name!r} of agent {agent!r} renamed to {new!r}: saved "
                         "states with calls to it cannot resume", edge.location,
                         head[new].location, ("edge", agent, new))
                self.agent_tool(agent, edge, head[new])
            else:
                self.add("state", "removed", f"{p}.{name}",
                         f"agent tool {name!r} ({agent!r} calls {edge.target!r}) removed: "
                         "saved states with calls to it cannot resume", edge.location, None,
                         ("edge", agent, name))
                self.gate_removed(f"{p}.{name}", f"agent tool {name!r} of agent {agent!r}",
                                  edge.needs_approval, edge.location, ("edge", agent, name),
                                  target=edge.target)
        new_names = set(renamed.values())
        for name, edge in head.items():
            if name in base:
                self.agent_tool(agent, base[name], edge)
            elif name not in new_names:
                self.add("structure", "added", f"{p}.{name}",
                         f"agent tool {name!r} ({agent!r} calls {edge.target!r}) added", None,
                         edge.location, ("edge", agent, name))
        self.order(p, f"agent tools of agent {agent!r}", list(base), list(head), renamed,
                   ba.location, ha.location, agent)

    def agent_tool(self, agent: str, b: AgentToolSpec, h: AgentToolSpec) -> None:
        p = f"agents.{agent}.agent_tools.{h.tool_name}"
        bl, hl = b.location, h.location
        me: Subject = ("edge", agent, h.tool_name)
        what = f"agent tool {h.tool_name!r} of agent {agent!r}"
        if self.renamed.get(b.target, b.target) != h.target:
            self.add("state", "changed", f"{p}.target",
                     f"{what} runs {h.target!r} instead of {b.target!r}: paused nested runs "
                     "in saved states cannot resume", bl, hl, me)
        if b.description != h.description:
            self.add("model", "changed", f"{p}.description",
                     f"description of {what} changed: "
                     f"{_texts(b.description, h.description)}", bl, hl, me)
        if b.parameters != h.parameters:
            self.add("model", "changed", f"{p}.parameters",
                     f"parameters of {what}: {_schema_delta(b.parameters, h.parameters)}",
                     bl, hl, me)
        elif _ref(b.parameters_type) != _ref(h.parameters_type):
            self.add("structure", "changed", f"{p}.parameters_type",
                     f"parameters type of {what}: {_ref(b.parameters_type)} → "
                     f"{_ref(h.parameters_type)}", bl, hl, me)
        self.limit(f"{p}.max_turns", f"max_turns of {what}", b.max_turns, h.max_turns,
                   bl, hl, me)
        self.limit(f"{p}.max_depth", f"max_depth of {what}", b.max_depth, h.max_depth,
                   bl, hl, me)
        self.approval(p, what, b.needs_approval, h.needs_approval, bl, hl, me)
        if _ref(b.output_extractor) != _ref(h.output_extractor):
            self.add("structure", "changed", f"{p}.output_extractor",
                     f"output extractor of {what}: {_ref(b.output_extractor)} → "
                     f"{_ref(h.output_extractor)}", bl, hl, me)
        self.gate(p, what, b.is_enabled, h.is_enabled, bl, hl, me)
        self.unknown_fields(b, h, _AGENT_TOOL_FIELDS, p, bl, hl, me)

    # -- guardrails ----------------------------------------------------------------------

    def guardrails(self, agent: str, kind: str, ba: AgentSpec, ha: AgentSpec) -> None:
        field = f"{kind}_guardrails"
        base = _first_of_each(getattr(ba, field), lambda g: g.name)
        head = _first_of_each(getattr(ha, field), lambda g: g.name)
        p = f"agents.{agent}.{field}"
        for name, g in base.items():
            if name not in head:
                self.add("safety", "removed", f"{p}.{name}",
                         f"{kind} guardrail {name!r} of agent {agent!r} removed", g.location,
                         None, ("guardrail", agent, name))
        for name, g in head.items():
            before = base.get(name)
            if before is None:
                self.add("structure", "added", f"{p}.{name}",
                         f"{kind} guardrail {name!r} added to agent {agent!r}", None,
                         g.location, ("guardrail", agent, name))
            else:
                self.guardrail(agent, kind, before, g)
        self.order(p, f"{kind} guardrails of agent {agent!r}", list(base), list(head), {},
                   ba.location, ha.location, agent)

    def guardrail(self, agent: str, kind: str, b: GuardrailSpec, h: GuardrailSpec) -> None:
        p = f"agents.{agent}.{kind}_guardrails.{h.name}"
        bl, hl = b.location, h.location
        me: Subject = ("guardrail", agent, h.name)
        what = f"{kind} guardrail {h.name!r} of agent {agent!r}"
        if b.ref.path != h.ref.path:
            self.add("safety", "changed", f"{p}.ref",
                     f"{what} runs another function: {b.ref.path} → {h.ref.path}", bl, hl, me)
        if b.run_in_parallel != h.run_in_parallel:
            if h.run_in_parallel:
                self.add("safety", "changed", f"{p}.run_in_parallel",
                         f"{what} runs in parallel with the model now: the model is called "
                         "before it decides", bl, hl, me)
            else:
                self.add("structure", "changed", f"{p}.run_in_parallel",
                         f"{what} runs before the model now", bl, hl, me)
        if _ref(b.declared_type) != _ref(h.declared_type) or _ref(b.context_type) != _ref(
            h.context_type
        ):
            self.add("structure", "changed", f"{p}.declared_type",
                     f"declared types of {what} changed", bl, hl, me)
        self.unknown_fields(b, h, _GUARDRAIL_FIELDS, p, bl, hl, me)


def _served(server: str | None) -> str:
    return "a function tool" if server is None else f"a tool of MCP server {server!r}"
