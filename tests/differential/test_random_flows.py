"""Random flows (steps and agents joined by then, branch and route edges, budgeted
loops) with random scripted transcripts: the generated runner, with its explicit exit
functions, and the interpreter agree on items, outputs, last nodes, pauses and errors.

Flows are lowered without the analyzer, so unsound ones (dead ends, spent budgets) run
too and must fail identically. Runs that pause are resumed after a random decision.
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
from tests.differential import flow_parts, parts
from tests.differential.twin import generated_twin, mixed


@st.composite
def flows(draw: st.DrawFn) -> ss.StateMachine:
    n = draw(st.integers(1, 5))
    nodes: list[Any] = []
    for i in range(n):
        if draw(st.integers(0, 2)) == 0:
            tools = [parts.approve_me] if draw(st.booleans()) else []
            nodes.append(ss.Agent(f"agent{i}", f"You are node {i}.", tools=tools,
                                  output_type=flow_parts.Num))
        else:
            step = flow_parts.STEPS[draw(st.sampled_from(sorted(flow_parts.STEPS)))]
            if step in nodes:
                continue  # one node per step object
            nodes.append(step)
    edges = []
    for i, node in enumerate(nodes):
        # mostly forward (or END); now and then back, through a budgeted edge
        forward: list[Any] = [*nodes[i + 1:], ss.END, ss.END]
        targets = [*nodes, ss.END] if draw(st.integers(0, 3)) == 0 else forward
        kind = draw(st.sampled_from(["then", "then", "branch", "route"]))
        budget = draw(st.sampled_from([1, 2]))  # an unbudgeted loop of steps never ends
        if kind == "then":
            edges.append(ss.then(node, draw(st.sampled_from(targets)), max_uses=budget))
        elif kind == "branch":
            edges.append(ss.branch(node, when=draw(st.sampled_from(flow_parts.PREDICATES)),
                                   then=draw(st.sampled_from(targets)),
                                   otherwise=draw(st.sampled_from(targets)), max_uses=budget))
        else:
            cases = {tag: draw(st.sampled_from(targets)) for tag in "abc"}
            edges.append(ss.route(node, on="tag", cases=cases, max_uses=budget))
    wf = ss.Workflow("random_flow", nodes[0], flow=edges, max_turns=draw(st.integers(2, 4)))
    built = wf.build()
    return ss.StateMachine(lower(built.spec), built.bindings.objects)


@st.composite
def scripts(draw: st.DrawFn) -> list[list[Any]]:
    steps: list[list[Any]] = []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["num", "num", "num", "approve", "approve", "bad"]))
        if kind == "num":
            value = draw(st.integers(0, 9))
            tag = draw(st.sampled_from("abc"))
            steps.append([assistant_message(f'{{"value": {value}, "tag": "{tag}"}}')])
        elif kind == "approve":
            steps.append([function_call("approve_me", {"order_id": 7})])
        else:
            steps.append([assistant_message(draw(st.sampled_from(["not json", "done"])))])
    return steps + [[assistant_message('{"value": 4, "tag": "b"}')]] * 12


EXAMPLES = int(os.environ.get("DIFF_EXAMPLES", "60"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_flows_run_identically_on_generated_code(data: st.DataObject) -> None:
    machine = data.draw(flows())
    _, by_path = generated_twin(machine)
    assert by_path
    script = data.draw(scripts())
    generated_sync = data.draw(st.booleans())
    start = '{"value": 1, "tag": "b"}'
    out = run_all(mixed(machine, generated_sync=generated_sync), start, script)
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
    if out.result is None:
        return f"error {type(out.error).__name__}"
    return "interrupted" if out.result.interruptions else "final"
