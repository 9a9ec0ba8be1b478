"""Random workflows whose nested agent-tool runs hand off and pause: the generated
runner and the interpreter agree, and both pause.

Each workflow is a stack of levels. The entry calls the first agent of level 1 as a
tool; inside every level, control passes down a random chain of handoffs; the last
agent of a level either calls the next level as a tool or, at the bottom, calls a
tool that needs approval. Random extras: an approval on an agent tool itself, a
second (plain or gated) call beside the nested one, messages before a handoff, the
entry's tool-use behaviour, budgets on handoffs. The script walks that path, so the
run must pause; then a random approve/reject per interruption and a resume, all
compared between the interpreter and the generated module (issue 10: the generated
runner used to drop an approval asked for after a handoff inside a nested run).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import stepswitch as ss
from stepswitch.compiler.lower import lower
from stepswitch.testing import assistant_message, function_call
from tests.conformance.harness import run_all
from tests.differential import parts
from tests.differential.twin import generated_twin, mixed

ScriptStep = list[Any]


@st.composite
def nested_pauses(draw: st.DrawFn) -> tuple[ss.StateMachine, list[ScriptStep]]:
    depth = draw(st.integers(1, 3))
    chains = [draw(st.integers(0, 2)) for _ in range(depth)]
    # names[level] = the agents of that level, in handoff order (level 0: the entry)
    names = [["entry"]] + [[f"l{lv}_{i}" for i in range(n + 1)] for lv, n in
                           enumerate(chains, start=1)]
    gated_tool = [draw(st.integers(0, 4)) == 0 for _ in range(depth)]
    agents: dict[str, ss.Agent] = {}
    script: list[ScriptStep] = []
    for level in range(depth, -1, -1):  # build bottom-up: handoffs refer by object
        members = names[level]
        for i in range(len(members) - 1, -1, -1):
            name = members[i]
            tools: list[Any] = [parts.echo]
            handoffs: list[Any] = []
            if i + 1 < len(members):
                handoffs.append(ss.handoff(agents[members[i + 1]],
                                           max_uses=draw(st.sampled_from([None, 1]))))
            elif level < depth:
                below = names[level + 1][0]
                tools.append(ss.agent_tool(below, f"ask_{below}", f"Ask {below}",
                                           needs_approval=gated_tool[level]))
            else:
                tools.append(parts.approve_me)
            if level == 0 and draw(st.booleans()):
                tools.append(parts.approve_me)
            behavior: Literal["run_llm_again", "stop_on_first_tool"] = "run_llm_again"
            if level == 0:
                behavior = draw(st.sampled_from(["run_llm_again", "stop_on_first_tool"]))
            agents[name] = ss.Agent(name=name, instructions=f"You are {name}.", tools=tools,
                                    handoffs=handoffs, tool_use_behavior=behavior)
    # the script walks the path: down every level's handoff chain, then down a level
    for level in range(depth + 1):
        members = names[level]
        for i, name in enumerate(members):
            step: ScriptStep = []
            if draw(st.integers(0, 3)) == 0:
                step.append(assistant_message("thinking"))
            if i + 1 < len(members):
                step.append(function_call(f"transfer_to_{members[i + 1]}", {}))
            elif level < depth:
                below = names[level + 1][0]
                step.append(function_call(f"ask_{below}", {"input": "go on"}))
                extra = draw(st.sampled_from(["none", "echo", "approve"]))
                has_approve = any(t is parts.approve_me for t in agents[name].tools)
                if extra == "echo":
                    step.append(function_call("echo", {"text": "beside"}))
                elif extra == "approve" and has_approve:
                    step.append(function_call("approve_me", {"order_id": level}))
            else:
                step.append(function_call("approve_me", {"order_id": 7}))
            script.append(step)
    # after the resume: every run still open answers (innermost first), with spares
    script += [[assistant_message(f"done {k}")] for k in range(sum(chains) + depth + 6)]
    order = [a for level in names for a in level]
    wf = ss.Workflow(name="nested", entry=agents["entry"],
                     agents=[agents[n] for n in order], max_turns=20, max_depth=4)
    built = wf.build()
    return ss.StateMachine(lower(built.spec), built.bindings.objects), script


EXAMPLES = int(os.environ.get("DIFF_EXAMPLES", "60"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_nested_runs_that_hand_off_and_pause_run_identically(data: st.DataObject) -> None:
    machine, script = data.draw(nested_pauses())
    _, by_path = generated_twin(machine)
    assert by_path
    entry = machine.ir.states[0]
    assert entry.facts.can_pause, "the entry's nested run can pause: its facts must say so"
    generated_sync = data.draw(st.booleans())
    out = run_all(mixed(machine, generated_sync=generated_sync), "start", script)
    assert out.result is not None, out.error
    remaining = script
    rounds = 0
    # pause, decide at random, resume, until the run ends (a gated agent tool pauses
    # before its nested run starts, so a run can pause more than once)
    while out.result is not None and out.result.interruptions:
        rounds += 1
        assert rounds <= 4
        names = {i.name for i in out.result.interruptions}
        assert names & {"approve_me"} or any(n.startswith("ask_") for n in names)
        state = out.result.to_state()
        for item in out.result.interruptions:
            if data.draw(st.booleans()):
                state.approve(item)
            else:
                state.reject(item)
        remaining = remaining[len(out.model.calls):]
        generated_sync = not generated_sync
        out = run_all(mixed(machine, generated_sync=generated_sync), state, remaining)
    assert rounds >= 1
    event(f"pauses: {rounds}; ended: {'error' if out.result is None else 'final'}")
