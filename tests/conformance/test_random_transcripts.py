"""Hypothesis: random scripted transcripts against random small workflows.

Whatever the model says (valid calls, invalid arguments, unknown tools, handoffs,
agent tools, approvals, messages), a run ends with a result or a documented error,
never another exception, and the three surfaces agree on everything observable.
Interrupted runs are decided at random, saved, loaded and resumed.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.testing import ScriptExhausted, assistant_message, function_call
from tests.conformance.harness import run_all


class Answer(BaseModel):
    value: int


def _tool(name: str, approval: bool) -> ss.FunctionTool:
    def tool(n: int) -> str:
        if n < 0:
            raise ValueError("negative")
        return f"{name}:{n}"

    tool.__name__ = tool.__qualname__ = name
    return ss.function_tool(needs_approval=approval)(tool)


@st.composite
def workflows(draw: st.DrawFn) -> tuple[ss.StateMachine, list[str], dict[str, list[str]]]:
    count = draw(st.integers(1, 3))
    names = [f"a{i}" for i in range(count)]
    agents = []
    offered: dict[str, list[str]] = {}
    for i, name in enumerate(names):
        tools: list[Any] = [_tool(f"t{i}", draw(st.booleans()))]
        handoffs: list[Any] = []
        others = [n for n in names if n != name]
        for other in others:
            if draw(st.booleans()):
                handoffs.append(ss.handoff(other, max_uses=draw(st.sampled_from([None, 1, 2]))))
        if len(others) > 0 and draw(st.booleans()):
            tools.append(ss.agent_tool(draw(st.sampled_from(others)), f"ask{i}", "Ask.",
                                       max_turns=3))
        typed = draw(st.booleans())
        agents.append(ss.Agent(name, tools=tools, handoffs=handoffs,
                               output_type=Answer if typed else None))
        offered[name] = [f"t{i}"] + [f"transfer_to_{h.target}" for h in handoffs]
        offered[name] += [f"ask{i}"] if len(tools) > 1 else []
    # The analyzer refuses some of these graphs (unbudgeted cycles, unbounded recursion,
    # budgets too small); the runtime must stay safe on them anyway: opt out.
    machine = ss.Workflow("random", entry=agents[0], agents=agents,
                          max_turns=draw(st.integers(1, 6)), max_depth=2,
                          ignore=["SW201", "SW202", "SW205"]).compile()
    return machine, names, offered


def _items(draw: st.DrawFn, all_tools: list[str]) -> list[Any]:
    item = st.one_of(
        st.builds(lambda n, v: function_call(n, {"n": v}), st.sampled_from(all_tools),
                  st.integers(-1, 3)),
        st.builds(lambda n: function_call(n, {"input": "q"}), st.sampled_from(all_tools)),
        st.builds(lambda n, raw: function_call(n, raw), st.sampled_from(all_tools),
                  st.sampled_from(["{oops", "[1]", "", '{"n": "x"}'])),
        st.just(function_call("hallucinated", {})),
        st.builds(assistant_message, st.sampled_from(["plain", '{"value": 3}', "{bad"])),
    )
    return draw(st.lists(item, max_size=3))


# The differential replay (tests/differential/test_conformance_replay.py) runs fewer:
# its generated-code comparison has random workflows of its own (tests/differential).
EXAMPLES = int(os.environ.get("CONFORMANCE_EXAMPLES", "40"))


# No shrinking phase: one example runs three surfaces and several resumes, so shrinking
# a failure can take minutes; the failing example is printed as drawn.
@settings(max_examples=EXAMPLES, deadline=None,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_transcripts_end_cleanly_and_surfaces_agree(data: st.DataObject) -> None:
    machine, names, offered = data.draw(workflows())
    all_tools = sorted({t for ts in offered.values() for t in ts})
    script = [
        [replace(item, call_id=f"s{step}_{j}") if item.type == "function_call" else item
         for j, item in enumerate(data.draw(st.composite(lambda d: _items(d, all_tools))()))]
        for step in range(8)
    ]  # unique call ids across resumes, which restart the scripted model
    config = ss.RunConfig(unknown_tool=data.draw(st.sampled_from(["raise", "return_error"])))

    out = run_all(machine, "go", script, run_config=config)
    used = len(out.model.calls)
    for _ in range(3):  # decide and resume interrupted runs
        if out.error is not None:
            break
        result = out.result
        if not result.interruptions:
            break
        state = ss.RunState.from_json(result.to_state().to_json())
        for pending in state.interruptions:
            if data.draw(st.booleans()):
                state.approve(pending)
            else:
                state.reject(pending)
        out = run_all(machine, state, script[used:], run_config=config)
        used += len(out.model.calls)

    if out.error is not None:
        documented = (ss.ModelBehaviorError, ss.MaxTurnsExceeded, ScriptExhausted)
        assert isinstance(out.error, documented), repr(out.error)
        data_ = getattr(out.error, "run_data", None)
        if isinstance(out.error, ss.StepswitchError):
            assert data_ is not None and data_.last_agent in names
    else:
        result = out.result
        assert result.last_agent in names
        if result.interruptions:
            assert result.final_output is None
        elif result.final_output is not None and isinstance(result.final_output, Answer):
            assert json.loads(result.final_output.model_dump_json())["value"] == 3
        # every call the model made got exactly one output, unless still pending
        calls = [i.call_id for i in result.new_items
                 if i.type in ("tool_call_item", "handoff_call_item")]
        outputs = [i.call_id for i in result.new_items
                   if i.type in ("tool_call_output_item", "handoff_output_item")]
        assert len(outputs) == len(set(outputs))
        pending_ids = {i.call_id for i in result.interruptions}
        if not result.interruptions:
            assert sorted(calls) == sorted(outputs)
        else:
            assert set(outputs) <= set(calls) | pending_ids
