"""Hypothesis: random workflows (unicode and punctuation in names, random edges,
cycles, self-handoffs, missing targets, budgets, forced tool calls, junk in ignore
lists): ``check()`` never raises, and every diagnostic has a registered code, its
registered severity, a location and a path into the spec."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stepswitch as ss
from stepswitch.analysis import CODES
from stepswitch.dsl.agent import ToolUseBehavior
from tests.analysis._cases import lookup, refund_order

names = st.text(
    alphabet=st.sampled_from(list("abcAB_- .:/é日💥[]()'\"\\%,\n")), min_size=1, max_size=12
).filter(lambda s: s.strip() != "")


@st.composite
def workflows(draw: st.DrawFn) -> ss.Workflow:
    pool = draw(st.lists(names, min_size=1, max_size=8))
    targets = st.one_of(st.sampled_from(pool), names)  # names may match no agent
    agents = []
    for name in pool:
        handoffs: list[Any] = []
        for target in draw(st.lists(targets, max_size=3)):
            budget = draw(st.one_of(st.none(), st.integers(1, 3)))
            tool_name = draw(st.one_of(st.none(), names))
            handoffs.append(ss.handoff(target, max_uses=budget, tool_name=tool_name))
        tools: list[Any] = draw(st.lists(st.sampled_from([lookup, refund_order]), max_size=2))
        for target in draw(st.lists(targets, max_size=2)):
            tools.append(ss.agent_tool(
                target, draw(st.one_of(st.none(), names)), "call it",
                max_turns=draw(st.one_of(st.none(), st.integers(1, 5))),
                max_depth=draw(st.one_of(st.none(), st.integers(1, 3))),
                needs_approval=draw(st.booleans()),
            ))
        choice = draw(st.sampled_from([None, "auto", "required", "none", "lookup", "nope"]))
        behavior: ToolUseBehavior = draw(st.sampled_from(
            ["run_llm_again", "stop_on_first_tool", ss.StopAtTools(["lookup"])]))
        agents.append(ss.Agent(
            name, "instructions", tools=tools, handoffs=handoffs,
            model_settings=ss.ModelSettings(
                tool_choice=choice, parallel_tool_calls=draw(st.one_of(st.none(), st.booleans()))
            ),
            tool_use_behavior=behavior,
            ignore=draw(st.lists(st.sampled_from(["SW1", "SW201", "XX", "SW0", ""]), max_size=2)),
        ))
    entry = draw(st.one_of(st.none(), st.sampled_from(agents), st.sampled_from(pool), names))
    return ss.Workflow(
        "random", entry, agents,
        max_turns=draw(st.one_of(st.none(), st.integers(1, 20))),
        max_depth=draw(st.integers(1, 4)),
        max_model_calls=draw(st.one_of(st.none(), st.integers(1, 500))),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workflows())
def test_check_never_raises_and_every_diagnostic_is_registered_and_located(
    wf: ss.Workflow,
) -> None:
    report = wf.check()
    agent_names = {a.name for a in wf.to_spec().agents}
    for d in report.diagnostics:
        assert d.code in CODES and d.severity == CODES[d.code].severity
        assert d.location.file and d.location.line >= 1 and d.location.column >= 1
        path = d.location.path
        assert path == "workflow" or path.startswith("agents."), path
        if path.startswith("agents."):
            assert any(path == f"agents.{n}" or path.startswith(f"agents.{n}.")
                       for n in agent_names), path
        assert d.format_line().startswith(f"{d.location.file}:{d.location.line}:")
    keys = [d.sort_key() for d in report.diagnostics]
    assert keys == sorted(keys)
    assert report.ok == (not report.errors)
    if report.model_call_bound is not None:
        assert report.model_call_bound >= (wf.max_turns or 0)
