"""Random workflows with random scripted transcripts: the generated runner and the
interpreter agree on items, outputs, last agents, interruptions and errors.

Workflows are lowered without the analyzer on purpose: unsound graphs (unbudgeted
cycles, agents that cannot end) must still run identically. Runs that pause are
resumed after a random approve/reject, with the rest of the script.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import stepswitch as ss
from stepswitch.compiler.lower import lower
from stepswitch.testing import assistant_message, function_call
from tests.conformance.harness import run_all
from tests.differential import parts
from tests.differential.twin import generated_twin, mixed


@st.composite
def workflows(draw: st.DrawFn) -> ss.StateMachine:
    n = draw(st.integers(1, 4))
    names = [f"a{i}" for i in range(n)]
    agents = []
    for name in names:
        tools: list[Any] = [parts.TOOLS[t] for t in draw(
            st.lists(st.sampled_from(sorted(parts.TOOLS)), unique=True, max_size=3))]
        if draw(st.integers(0, 3)) == 0 and parts.approve_me not in tools:
            tools.append(parts.approve_me)  # pauses are the interesting part
        for target in draw(st.lists(st.sampled_from(names), unique=True, max_size=2)):
            tools.append(ss.agent_tool(target, f"ask_{target}", f"Ask {target}",
                                       max_turns=draw(st.sampled_from([None, 2, 4])),
                                       needs_approval=draw(st.integers(0, 4)) == 0))
        handoffs = [
            ss.handoff(target, max_uses=draw(st.sampled_from([None, 1, 2])))
            for target in draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
            if target != name
        ]
        tool_names = [getattr(t, "name", None) or getattr(t, "tool_name", "") for t in tools]
        behavior = draw(st.sampled_from(
            ["run_llm_again", "stop_on_first_tool", "stop_at", "function"]))
        if behavior == "stop_at":
            listed = draw(st.lists(st.sampled_from([*tool_names, "nope"]), max_size=2))
            behavior_value: Any = ss.StopAtTools(listed)
        elif behavior == "function":
            behavior_value = parts.stop_on_stop
        else:
            behavior_value = behavior
        agents.append(ss.Agent(
            name=name,
            instructions=f"You are {name}.",
            tools=tools,
            handoffs=handoffs,
            output_type=draw(st.sampled_from([None, parts.Answer])),
            tool_use_behavior=behavior_value,
        ))
    wf = ss.Workflow(name="random", entry=agents[0], agents=agents,
                     max_turns=draw(st.integers(2, 8)), max_depth=2)
    built = wf.build()
    return ss.StateMachine(lower(built.spec), built.bindings.objects)


def _call_names(machine: ss.StateMachine) -> list[str]:
    """Every tool name, the entry's twice as often (other agents' names often miss)."""
    entry = [t.name for t in machine.ir.states[0].tools]
    return entry + sorted({t.name for s in machine.ir.states for t in s.tools})


@st.composite
def scripts(draw: st.DrawFn, names: list[str]) -> list[list[Any]]:
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        outputs: list[Any] = []
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["call", "call", "message", "json"]))
            if kind == "message":
                outputs.append(assistant_message(draw(st.sampled_from(["done", "", "stop"]))))
            elif kind == "json":
                texts = ['{"value": 3}', '{"value": 3}', '{"value": "x"}', "not json"]
                outputs.append(assistant_message(draw(st.sampled_from(texts))))
            else:
                name = draw(st.sampled_from(names)) if names else "unknown_tool"
                if draw(st.integers(0, 9)) == 0:
                    name = "unknown_tool"  # a structural error, now and then
                good = parts.GOOD_ARGS.get(name, {"input": "q"} if name.startswith("ask_") else {})
                choices: list[dict[str, Any] | str] = [good, good, {}, "{bad json"]
                args = draw(st.sampled_from(choices))
                outputs.append(function_call(name, args))
        steps.append(outputs)
    # Then final messages (valid text and valid Answer JSON): each ends the run it
    # reaches, so the script never runs dry (nesting is at most 2 deep).
    return steps + [[assistant_message('{"value": 1}')]] * 4


EXAMPLES = int(os.environ.get("DIFF_EXAMPLES", "100"))  # more for a long local run


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_workflows_run_identically_on_generated_code(data: st.DataObject) -> None:
    machine = data.draw(workflows())
    _, by_path = generated_twin(machine)
    assert by_path  # every part imports by path: the full codegen path is exercised
    script = data.draw(scripts(_call_names(machine)))
    generated_sync = data.draw(st.booleans())
    out = run_all(mixed(machine, generated_sync=generated_sync), "start", script)
    event(_ending(out))
    if out.result is None or not out.result.interruptions:
        return
    state = out.result.to_state()
    for item in out.result.interruptions:
        if data.draw(st.booleans()):
            state.approve(item)
        else:
            state.reject(item)
    rest = script[len(out.model.calls):]
    resumed = run_all(mixed(machine, generated_sync=not generated_sync), state, rest)
    event(f"resumed: {_ending(resumed)}")


def _ending(out: Any) -> str:
    """How a run ended, for ``--hypothesis-show-statistics``."""
    if out.result is None:
        return f"error {type(out.error).__name__}"
    if out.result.interruptions:
        return "interrupted"
    handoffs = sum(1 for i in out.result.new_items if i.type == "handoff_output_item")
    return f"final ({'with' if handoffs else 'no'} handoff)"
