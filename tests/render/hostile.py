"""A workflow whose every user string tries to break DOT, Mermaid or HTML.

Names are DOT and Mermaid keywords, or carry quotes, backslashes, brackets, pipes,
line breaks, ``<``/``>``/``&``, entity look-alikes, comment markers and unicode.
"""

from __future__ import annotations

from pydantic import BaseModel

import stepswitch as ss

HOSTILE_NAMES: tuple[str, ...] = (
    "graph",
    "end",
    "subgraph",
    "style",
    "click",
    "class",
    "node",
    "edge",
    "digraph",
    'say "hi"',
    "back\\slash \\N \\l \\n",
    "br[ack]{et}(s) <b>&amp; tags</b>",
    "pi|pe; semi --> arrow",
    "two\nlines",
    "ünïcødé ✓ 日本語",
    "%% not a comment #35; not an entity `md`",
)


class Out(BaseModel):
    text: str


@ss.function_tool(name='tool "quoted" <x> & |y|')
def odd_tool(x: int) -> str:
    """Does odd things."""
    return str(x)


@ss.function_tool(name="end", needs_approval=True)
def approve_end(x: int) -> str:
    """Needs a human."""
    return str(x)


@ss.input_guardrail(name='guard "in" \\ <g>')
def guard_in(ctx: ss.RunContext[None], agent: ss.Agent, text: str) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)


def _agents(*, dangling: bool = True) -> list[ss.Agent]:
    names = HOSTILE_NAMES
    agents: list[ss.Agent] = []
    for i, name in enumerate(names):
        nxt = names[(i + 1) % len(names)]
        handoffs: list[ss.Agent | ss.Handoff | str] = [
            ss.handoff(nxt, max_uses=1, tool_name=f"go {i} \"{nxt}\"")
        ]
        tools: list[ss.FunctionTool | ss.AgentTool] = []
        if i % 3 == 0:
            tools.append(ss.agent_tool(names[(i + 2) % len(names)], f"ask|{i}|[x]"))
        if i % 4 == 0:
            tools.append(odd_tool)
        if i % 5 == 0:
            tools.append(approve_end)
        agents.append(
            ss.Agent(
                name=name,
                instructions="x",
                tools=tools,
                handoffs=handoffs,
                output_type=Out if i % 2 else None,
                input_guardrails=[guard_in] if i == 0 else [],
            )
        )
    if dangling:
        agents[-1].handoffs.append("nobody \"here\" <end>")
    return agents


hostile = ss.Workflow(name='hostile "wf" <&> \\ end', entry="graph", agents=_agents())

# Lowering refuses a target that names no agent, so the machine view gets this one.
hostile_closed = ss.Workflow(
    name='hostile "wf" <&> \\ end', entry="graph", agents=_agents(dangling=False)
)
