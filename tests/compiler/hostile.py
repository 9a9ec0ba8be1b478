"""A workflow whose every user string tries to break out of a generated module.

Names, instructions, descriptions, schema text and tool names hold quotes, triple
quotes, backslashes, newlines, jinja2 syntax, code that would record its own
execution in ``EXECUTED`` and unicode (wide, combining, bidi overrides, line
separators, NUL). A generated runner must import without running any of it and run
exactly like the interpreter.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

import stepswitch as ss

EXECUTED: list[str] = []
"""Anything that runs text from this module's strings appends here."""

_RUN = '__import__("tests.compiler.hostile").compiler.hostile.EXECUTED.append("ran")'
NASTY = (
    "it's \"quoted\" ''' triple ''' \"\"\" triple \"\"\" \\ back\\slash \\n not-newline\n"
    "real newline\r\n{{ 1 + 1 }} {% for x in y %}{% endfor %} {# note #} "
    + _RUN
    + "\n# a comment?\n\"\"\"; "
    + _RUN
    + "; x = '''\n"
    "漢字テキスト ünïcödé e\u0301 \u202eevil\u202c \u2028sep\u2029 \x00nul \x0bvt \t tab "
    + "x" * 150
)
"""Every trick at once; long enough that a literal must be split over lines."""

TOOL_NAME = "look'up\"{{x}}\\"
AGENT_A = 'tri"age\n{% raw %}' + "'''"
AGENT_B = "ref\\und {{ x }} \u202e" + '"""'


class Verdict(BaseModel):
    """A verdict. \"\"\" {{ y }} \\ '''"""

    text: str = Field(description=NASTY)


@ss.function_tool(name=TOOL_NAME, description=NASTY)
def lookup(query: str) -> str:
    """Unused: the description above wins."""
    return f"found {query}"


@ss.function_tool(name="stop'here", description="'''\"\"\"")
def stop_here(note: str) -> str:
    """Stops the run (listed in StopAtTools)."""
    return f"stopped: {note}"


b = ss.Agent(name=AGENT_B, instructions=NASTY, output_type=Verdict)
a = ss.Agent(
    name=AGENT_A,
    instructions=NASTY,
    tools=[lookup, stop_here],
    handoffs=[ss.handoff(b, tool_name="hand\"off'", description=NASTY, max_uses=1)],
    tool_use_behavior=ss.StopAtTools([TOOL_NAME + "-not-a-tool", "stop'here"]),
)
hostile = ss.Workflow(name=NASTY, entry=a, agents=[a, b], max_turns=8)


def machine() -> ss.StateMachine:
    """The machine, lowered without the analyzer (which rightly rejects these names)."""
    from stepswitch.compiler.lower import lower

    built = hostile.build()
    return ss.StateMachine(lower(built.spec), built.bindings.objects)
