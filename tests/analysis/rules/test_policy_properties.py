"""Properties of the SW8xx policies and the SW207 cost bound against the compiled machine.

On random workflows (Hypothesis): a policy check fails if and only if a brute-force,
breadth-first search over scripted runs of the compiled machine (every choice of
response, up to a bounded number of model calls, each pause approved) finds a run that
breaks the rule; and the counterexample the check prints, turned back into a script,
replays as such a run. On random scripted runs, the spend the run reports (priced as the
runtime prices it) never exceeds the static bound.

The oracle only watches what the runtime does: which agent each model call was for, what
it offered, and which tools ran (each tool records the model call it ran under). The one
piece of bookkeeping it keeps itself is the stack of nested runs, read from its own
responses (an agent-tool call opens a run, a final answer in a nested run closes it), so
``forbid(x, from_agent=f)`` can mean "while f's turns or what they started are running".
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import stepswitch as ss
from stepswitch.analysis._context import Ctx
from stepswitch.analysis.rules.cost import price_table, worst_case
from stepswitch.context import Usage
from stepswitch.runtime.model import ModelRequest, ModelResponse
from stepswitch.testing import ScriptedModel, ScriptExhausted, assistant_message, function_call

RAN: list[tuple[str, int]] = []
"""(what ran: a variant of ``t``, or ``u``; the number of model calls made by then)."""
MODEL: list[ScriptedModel] = []
"""The model of the run in progress (a tool reads how many calls it has made)."""


def _ran(what: str) -> str:
    RAN.append((what, len(MODEL[0].calls) if MODEL else 0))
    return what


@ss.function_tool(name="t")
def t_plain() -> str:
    """The guarded tool."""
    return _ran("plain")


@ss.function_tool(name="t", needs_approval=True)
def t_approved() -> str:
    """The guarded tool, behind approval."""
    return _ran("approved")


@ss.function_tool(name="t", max_uses=1)
def t_once() -> str:
    """The guarded tool, once per run."""
    return _ran("once")


@ss.function_tool(name="t", needs_approval=True, max_uses=1)
def t_once_approved() -> str:
    """The guarded tool, once per run, behind approval."""
    return _ran("once_approved")


@ss.function_tool(name="t", max_uses=2)
def t_twice() -> str:
    """The guarded tool, twice per run."""
    return _ran("twice")


@ss.function_tool
def u() -> str:
    """The prerequisite."""
    return _ran("u")


VARIANTS = {"plain": t_plain, "approved": t_approved, "once": t_once,
            "once_approved": t_once_approved, "twice": t_twice}
APPROVED = {"approved", "once_approved"}
BUDGETED = {"once", "once_approved", "twice"}

Shape = list[dict[str, Any]]


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    """2-4 agents; each hands off to and calls as tools only later ones (so every
    handoff chain ends), and offers some variant of ``t``, maybe ``u``."""
    n = draw(st.integers(2, 4))
    agents = []
    for i in range(n):
        later = list(range(i + 1, n))
        agents.append({
            "handoffs": draw(st.lists(st.sampled_from(later), unique=True, max_size=2))
            if later else [],
            "agent_tools": draw(st.lists(st.sampled_from(later), unique=True, max_size=1))
            if later else [],
            "t": draw(st.sampled_from([None, *VARIANTS])),
            "u": draw(st.booleans()),
            "parallel": draw(st.booleans()),
        })
    return agents


@st.composite
def cases(draw: st.DrawFn) -> tuple[Shape, tuple[Any, ...]]:
    shape = draw(shapes())
    k = draw(st.integers(0, len(shape) - 1))
    rule = draw(st.sampled_from([
        ("require_approval",), ("forbid_t",), ("forbid_agent", k), ("forbid_t_from", k),
        ("forbid_agent_from", draw(st.integers(0, len(shape) - 1)), k),
        ("only_after_agent", k), ("only_after_u",), ("max_calls", draw(st.integers(0, 1))),
    ]))
    return shape, rule


def _policy(rule: tuple[Any, ...]) -> ss.Policy:
    match rule:
        case ("require_approval",):
            return ss.require_approval("t")
        case ("forbid_t",):
            return ss.forbid("t")
        case ("forbid_agent", k):
            return ss.forbid(f"a{k}")
        case ("forbid_t_from", k):
            return ss.forbid("t", from_agent=f"a{k}")
        case ("forbid_agent_from", x, k):
            return ss.forbid(f"a{x}", from_agent=f"a{k}")
        case ("only_after_agent", k):
            return ss.only_after("t", f"a{k}")
        case ("only_after_u",):
            return ss.only_after("t", "u")
        case ("max_calls", n):
            return ss.max_calls("t", n)
    raise AssertionError(rule)


def _build(shape: Shape, policies: list[ss.Policy], *, max_tokens: list[int] | None = None,
           max_cost_usd: float | None = None, max_turns: int = 20) -> ss.Workflow:
    made: dict[int, ss.Agent] = {}
    for i in reversed(range(len(shape))):
        s = shape[i]
        tools: list[Any] = [made[j].as_tool(f"ask_a{j}", "Ask") for j in s["agent_tools"]]
        if s["t"] is not None:
            tools.append(VARIANTS[s["t"]])
        if s["u"]:
            tools.append(u)
        kw: dict[str, Any] = {}
        if not s["parallel"]:
            kw["parallel_tool_calls"] = False
        if max_tokens is not None:
            kw["max_tokens"] = max_tokens[i]
        made[i] = ss.Agent(f"a{i}", f"agent number {i}", tools=tools,
                           handoffs=[made[j] for j in s["handoffs"]],
                           model_settings=ss.ModelSettings(**kw))
    return ss.Workflow("w", made[0], [made[i] for i in range(len(shape))], max_turns=max_turns,
                       policies=policies, max_cost_usd=max_cost_usd, ignore=["SW102"])


# -- the oracle: play a script, watch the run ------------------------------------------


def _response(choice: str) -> Any:
    if choice == "<answer>":
        return assistant_message("done")
    if choice == "t*2":
        return [function_call("t", {}), function_call("t", {})]
    return [function_call(choice, {"input": "go"} if choice.startswith("ask_") else {})]


@dataclass
class Played:
    """What one scripted run did, up to where its script ran out."""

    calls: list[tuple[str, bool]] = field(default_factory=list)
    """Per model call: its agent, and whether it ran inside ``from_agent``'s reach."""
    ran: list[tuple[str, int]] = field(default_factory=list)
    open: bool = False
    """The run wanted another response (the script ran out)."""
    offered: tuple[str, ...] = ()
    parallel: bool = True
    stack: tuple[tuple[str, bool], ...] = ()


def play(machine: ss.StateMachine, shape: Shape, script: list[str],
         from_agent: str | None) -> Played:
    """Run ``script`` (one choice per model call), approving every pause."""
    RAN.clear()
    model = ScriptedModel([_response(c) for c in script])
    MODEL[:] = [model]
    given: Any = "go"
    out = Played()
    try:
        while True:
            result = machine.run_sync(given, model=model)
            if not result.interruptions:
                break
            state = result.to_state()
            for item in result.interruptions:
                state.approve(item)
            given = state
    except ScriptExhausted:
        out.open = True
    except ss.StepswitchError:
        pass
    finally:
        MODEL.clear()
    out.ran = list(RAN)
    # the stack of runs: an agent-tool call opens one, a nested final answer closes it
    stack: list[list[Any]] = [["a0", False]]
    calls = model.calls
    for k, call in enumerate(calls):
        stack[-1][0] = call.agent
        if call.agent == from_agent:
            stack[-1][1] = True
        out.calls.append((call.agent, bool(stack[-1][1])))
        if k >= len(script):
            break
        choice = script[k]
        if choice.startswith("ask_"):
            stack.append([choice[4:], stack[-1][1]])
        elif choice == "<answer>" and len(stack) > 1:
            stack.pop()
    if out.open:
        last = calls[-1]
        out.offered = last.tools
        out.parallel = last.settings.parallel_tool_calls is not False
        out.stack = tuple((a, bool(x)) for a, x in stack)
    return out


def broke(rule: tuple[Any, ...], p: Played) -> bool:
    """Whether the run broke the rule (up to where it got)."""
    t_runs = [(what, k) for what, k in p.ran if what != "u"]
    match rule:
        case ("require_approval",):
            return any(what not in APPROVED for what, _ in t_runs)
        case ("forbid_t",):
            return bool(t_runs)
        case ("forbid_agent", k):
            return any(agent == f"a{k}" for agent, _ in p.calls)
        case ("forbid_t_from", _):
            return any(p.calls[k - 1][1] for _, k in t_runs)
        case ("forbid_agent_from", x, _):
            return any(agent == f"a{x}" and inside for agent, inside in p.calls)
        case ("only_after_agent", k):
            return any(all(agent != f"a{k}" for agent, _ in p.calls[:at]) for _, at in t_runs)
        case ("only_after_u",):
            first_u = next((i for i, (what, _) in enumerate(p.ran) if what == "u"), None)
            return any(first_u is None or i < first_u for i, (what, _) in enumerate(p.ran)
                       if what != "u")
        case ("max_calls", n):
            return bool(len(t_runs) > n)
    raise AssertionError(rule)


def _from_agent(rule: tuple[Any, ...]) -> str | None:
    return f"a{rule[-1]}" if rule[0] in ("forbid_t_from", "forbid_agent_from") else None


def search(machine: ss.StateMachine, shape: Shape, rule: tuple[Any, ...], depth: int,
           ) -> list[str] | None:
    """Breadth-first over every script of at most ``depth`` responses: the shortest one
    whose run breaks the rule, or None. Scripts that lead to the same place (the stack
    of runs and what ran so far) are explored once."""
    from_agent = _from_agent(rule)
    seen: set[Any] = set()
    queue: deque[list[str]] = deque([[]])
    while queue:
        script = queue.popleft()
        p = play(machine, shape, script, from_agent)
        if broke(rule, p):
            return script
        if not p.open or len(script) >= depth:
            continue
        t_runs = sum(1 for what, _ in p.ran if what != "u")
        budgeted = sum(1 for what, _ in p.ran if what in BUDGETED)
        key = (p.stack, min(t_runs, 3), budgeted, any(w == "u" for w, _ in p.ran),
               frozenset(a for a, _ in p.calls), p.offered)
        if key in seen:
            continue
        seen.add(key)
        choices = [*p.offered, "<answer>"]
        if p.parallel and "t" in p.offered:
            choices.append("t*2")
        queue.extend([*script, c] for c in choices)
    return None


_STEP: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"hands off to '.+' \((\S+)\)$"), lambda m: m.group(1)),
    (re.compile(r"calls agent tool (\S+) \(a nested run"), lambda m: m.group(1)),
]


def replay_script(trace: list[str], rule: tuple[Any, ...], shape: Shape) -> list[str]:
    """The counterexample as a script: each handoff and agent tool of the path, then the
    guarded call (for ``max_calls``, made ``n + 1`` times: at once when the agent calls
    tools in parallel, one response each otherwise)."""
    script: list[str] = []
    agent = 0
    for message in trace[1:]:
        for pattern, name in _STEP:
            m = pattern.search(message)
            if m:
                script.append(name(m))
                agent = int(script[-1].rsplit("_a", 1)[-1])
                break
        else:
            if message.startswith("calls t"):
                if rule[0] == "max_calls":
                    n = rule[1]
                    if shape[agent]["parallel"] and n == 1:
                        script.append("t*2")
                    else:
                        script.extend(["t"] * (n + 1))
                else:
                    script.append("t")
    return script


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_a_policy_fails_iff_a_scripted_run_breaks_it_and_its_counterexample_does(
    case: tuple[Shape, tuple[Any, ...]],
) -> None:
    shape, rule = case
    report = _build(shape, [_policy(rule)]).check(select=["SW8"])
    codes = {d.code for d in report.diagnostics}
    if "SW807" in codes:  # it names no tool of the workflow: SW807 says it checks nothing
        assert all(s["t"] is None for s in shape) or (
            rule == ("only_after_u",) and not any(s["u"] for s in shape)), report
        return
    machine = _build(shape, []).compile()
    run = search(machine, shape, rule, depth=6)
    assert "SW806" not in codes  # nothing in these workflows is decided by code
    failing = [d for d in report.diagnostics if d.severity == "error"]
    event(f"{rule[0]} {'fails' if failing else 'holds'}")
    assert bool(failing) == (run is not None), (shape, rule, report.diagnostics, run)
    if failing:
        (d,) = failing
        trace = [s.message for s in d.trace]
        script = replay_script(trace, rule, shape)
        replayed = play(machine, shape, script, _from_agent(rule))
        assert broke(rule, replayed), (shape, rule, trace, script, replayed)
        if rule[0] != "max_calls":  # the path to the violation is a shortest one
            assert len(script) <= len(run or ()), (trace, run)


# -- cost: what a run reports never exceeds the static bound ---------------------------


class Reporting:
    """A scripted model whose every response reports the usage the bound allows at most
    for it: ``max_tokens`` out, and in, one token per UTF-8 byte of what the request
    sends (instructions, tool and output schemas) plus every earlier output of the run
    (tool results and the run's input are what the bound leaves out, and are empty here)."""

    def __init__(self, choose: Callable[[ModelRequest], str]) -> None:
        self.choose = choose
        self.model = "gpt-4.1"
        self.out_so_far = 0
        self.spent = 0.0
        self.calls = 0
        self.tokens_in = 0
        self.bases: list[int] = []
        self.outputs: list[int] = []

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        tools = [[d.name, d.description, d.parameters] for d in request.tools]
        schema = request.output_schema.schema if request.output_schema else None
        base = len((request.instructions or "").encode()) + len(
            json.dumps(tools, separators=(",", ":")).encode())
        if schema is not None:
            base += len(json.dumps(schema, separators=(",", ":")).encode())
        out = request.settings.max_tokens or 0
        self.bases.append(base)
        self.outputs.append(out)
        tokens_in = base + self.out_so_far
        self.tokens_in += tokens_in
        self.out_so_far += out
        p_in, p_out = price_table()[1][self.model]
        self.spent += (tokens_in * p_in + out * p_out) / 1_000_000
        pick = self.choose(request)
        item = assistant_message("done") if pick == "<answer>" else function_call(
            pick, {"input": "go"} if pick.startswith("ask_") else {}, call_id=f"c{self.calls}")
        return ModelResponse(output=(item,),
                             usage=Usage(1, tokens_in, out, tokens_in + out))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes(), st.lists(st.integers(1, 500), min_size=4, max_size=4), st.data())
def test_a_runs_reported_spend_never_exceeds_the_static_bound(
    shape: Shape, max_tokens: list[int], data: st.DataObject,
) -> None:
    for s in shape:  # the bound leaves tool results out: no tool here returns any
        s["t"], s["u"] = None, False
    wf = _build(shape, [], max_tokens=max_tokens, max_cost_usd=1e12, max_turns=4)
    report = wf.check()
    assert report.model_call_bound is not None
    bound = worst_case(Ctx(wf.graph(), None), report.model_call_bound)
    assert bound is not None and not isinstance(bound, list)

    def choose(request: ModelRequest) -> str:
        names = [d.name for d in request.tools]
        return data.draw(st.sampled_from([*names, "<answer>"]), label=request.agent)

    model = Reporting(choose)
    # the runtime prices the same usage: a ceiling at the bound never stops a run (a
    # nested run past its max_turns is an error output; the top one past its, an error)
    with contextlib.suppress(ss.MaxTurnsExceeded):
        wf.compile().run_sync("", model=model,
                              run_config=ss.RunConfig(max_cost_usd=bound.usd * (1 + 1e-9)))
    # each part of the bound holds call by call, and so does the whole
    assert model.calls <= bound.calls == report.model_call_bound
    assert max(model.bases) <= bound.base_tokens, (model.bases, bound)
    assert max(model.outputs) <= bound.max_output
    assert model.tokens_in <= bound.input_tokens and sum(model.outputs) <= bound.output_tokens
    assert model.spent <= bound.usd * (1 + 1e-9), (model.spent, bound)
