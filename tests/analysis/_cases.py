"""One failing and one passing workflow per diagnostic code.

``CASES[code] = (failing, passing)``: ``failing()`` builds a workflow on which the
analyzer reports ``code``; ``passing()`` the nearest workflow on which it does not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

import stepswitch as ss

Build = Callable[[], ss.Workflow]

FORCED = ss.ModelSettings(tool_choice="required")


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look an order up."""
    return str(order_id)


@ss.function_tool(name="lookup")
def lookup_again(order_id: int) -> str:
    """Look an order up, again."""
    return str(order_id)


@ss.function_tool
def undocumented(order_id: int) -> str:
    return str(order_id)


@ss.function_tool(description="Look an order up.")
def described(order_id: int) -> str:
    return str(order_id)


@ss.function_tool
def misdocumented(order_id: int) -> str:
    """Look an order up.

    Args:
        ordr_id: The order's number.
    """
    return str(order_id)


@ss.function_tool(name="look up")
def bad_name(order_id: int) -> str:
    """A name the API rejects."""
    return str(order_id)


@ss.function_tool(needs_approval=True)
def refund_order(order_id: int) -> str:
    """Refund an order."""
    return str(order_id)


@ss.function_tool
def tag(labels: dict[str, str]) -> str:
    """Tag with open keys."""
    return str(labels)


class Label(BaseModel):
    key: str
    value: str


@ss.function_tool
def tag_ok(labels: list[Label]) -> str:
    """Tag with named fields."""
    return str(labels)


class Tally(BaseModel):
    counts: dict[str, int]


class Count(BaseModel):
    word: str
    count: int


class Counts(BaseModel):
    counts: list[Count]


class Findings(BaseModel):
    summary: str


class Draft(BaseModel):
    text: str


@dataclass
class Account:
    user_id: int


@dataclass
class Shop:
    shop_id: int


@ss.output_guardrail
def findings_guard(ctx: Any, agent: Any, output: Findings) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)


@ss.input_guardrail
def int_input_guard(ctx: Any, agent: Any, data: int) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)


@ss.input_guardrail
def str_input_guard(ctx: Any, agent: Any, data: str) -> ss.GuardrailFunctionOutput:
    return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)


@ss.function_tool
def shop_balance(ctx: ss.RunContext[Shop]) -> str:
    """A tool written for another context type."""
    return str(ctx.context.shop_id)


@ss.function_tool
def account_balance(ctx: ss.RunContext[Account]) -> str:
    """A tool written for the workflow's context type."""
    return str(ctx.context.user_id)


def summary_of_findings(findings: Findings) -> str:
    return findings.summary


def summary_of_result(result: Any) -> str:
    return str(result)


def log_reason(ctx: Any, data: Any) -> None:
    return None


def _three_args(ctx: Any, agent: Any, data: Any) -> ss.ToolGuardrailFunctionOutput:
    return ss.ToolGuardrailFunctionOutput.allow()


@ss.tool_input_guardrail
def allow_input(data: ss.ToolInputGuardrailData) -> ss.ToolGuardrailFunctionOutput:
    return ss.ToolGuardrailFunctionOutput.allow()


@ss.tool_output_guardrail
def redact_output(data: ss.ToolOutputGuardrailData) -> ss.ToolGuardrailFunctionOutput:
    return ss.ToolGuardrailFunctionOutput.allow()


def _guarded(*, inputs: list[Any], outputs: list[Any] = []) -> ss.FunctionTool:  # noqa: B006
    def look_up(order_id: int) -> str:
        """Look an order up."""
        return str(order_id)

    return ss.function_tool(tool_input_guardrails=inputs, tool_output_guardrails=outputs)(
        look_up)


def is_admin(ctx: Any, agent: Any) -> bool:
    return bool(getattr(ctx.context, "admin", False))


def _gated_lookup(gated: bool) -> ss.FunctionTool:
    def look_up(order_id: int) -> str:
        """Look an order up."""
        return str(order_id)

    return ss.function_tool(is_enabled=is_admin if gated else True)(look_up)


def wf(entry: ss.Agent | str | None, *agents: ss.Agent, **kw: Any) -> ss.Workflow:
    return ss.Workflow("case", entry, list(agents), **kw)


def a(name: str = "a", **kw: Any) -> ss.Agent:
    return ss.Agent(name, "instructions", **kw)


def _sw203_fail() -> ss.Workflow:
    helper = a("helper")
    return wf(a("main", tools=[helper.as_tool("help", "Ask the helper")]), helper)


def _sw204(limit: int) -> Build:
    def build() -> ss.Workflow:
        helper = a("helper")
        # one tool call per response: otherwise the limit is not proved (SW204 too)
        main = a("main", tools=[helper.as_tool("help", "Ask the helper")],
                 model_settings=ss.ModelSettings(parallel_tool_calls=False))
        return wf(main, helper, max_model_calls=limit)

    return build


def _chain(max_turns: int) -> Build:
    def build() -> ss.Workflow:
        c = a("c")
        b = a("b", handoffs=[c], model_settings=FORCED)
        first = a("first", handoffs=[b], model_settings=FORCED)
        return wf(first, b, c, max_turns=max_turns)

    return build


def _cycle(budget: int | None) -> Build:
    def build() -> ss.Workflow:
        refund = a("refund", handoffs=[ss.handoff("triage", max_uses=budget)])
        return wf(a("triage", handoffs=[refund]), refund)

    return build


def _recursion(depth: int | None) -> Build:
    def build() -> ss.Workflow:
        critic = a("critic", tools=[ss.agent_tool("planner", "plan", "Plan")])
        planner = a("planner", tools=[critic.as_tool("critique", "Critique", max_depth=depth)])
        return wf(planner, critic)

    return build


# -- flows ------------------------------------------------------------------------------


class Outline(BaseModel):
    text: str


class Verdict(BaseModel):
    score: Literal["pass", "needs_improvement"]
    note: str


class Plan(BaseModel):
    searches: list[str]
    summary: str


@ss.step
def check_outline(outline: Outline) -> Verdict:
    return Verdict(score="pass", note=outline.text)


@ss.step
def read_text(text: str) -> Outline:
    return Outline(text=text)


@ss.step
def shout(text: str) -> str:
    return text.upper()


@ss.step
def join_all(parts: list[str]) -> str:
    return "\n".join(parts)


@ss.step
def plan_of(text: str) -> Plan:
    return Plan(searches=text.split(), summary=text)


def passed(verdict: Verdict) -> bool:
    return verdict.score == "pass"


def fwf(entry: Any, *edges: Any, **kw: Any) -> ss.Workflow:
    return ss.Workflow("flow-case", entry, flow=list(edges), **kw)


def _judge(budget: int | None) -> Build:
    def build() -> ss.Workflow:
        writer = a("writer", output_type=Outline)
        return fwf(writer, ss.then(writer, check_outline),
                   ss.route(check_outline, on="score", max_uses=budget,
                            cases={"pass": ss.END, "needs_improvement": writer}))

    return build


def _nested_step() -> ss.Workflow:
    @ss.step
    def local(text: str) -> str:
        return text

    return fwf(local, ss.then(local, ss.END))


def first_line(result: Any) -> str:
    """An agent tool's output extractor a generated runner can import."""
    return str(result.final_output).splitlines()[0]


def _sw711(nested: bool) -> Build:
    def build() -> ss.Workflow:
        def local_first_line(result: Any) -> str:
            return str(result.final_output).splitlines()[0]

        writer = a("writer")
        extractor = local_first_line if nested else first_line
        boss = a("boss", tools=[writer.as_tool("write", "Write it",
                                               custom_output_extractor=extractor)])
        return wf(boss, writer)

    return build


CASES: dict[str, tuple[Build, Build]] = {
    "SW101": (lambda: wf(None, a()), lambda: wf("a", a())),
    "SW102": (lambda: wf("nobody", a()), lambda: wf("a", a())),
    "SW103": (lambda: wf("a", a(handoffs=["nobody"])), lambda: wf("a", a(handoffs=[a("b")]))),
    "SW104": (
        lambda: wf("a", a(tools=[ss.agent_tool("nobody", "ask", "Ask")])),
        lambda: wf("a", a(tools=[a("b").as_tool("ask", "Ask")])),
    ),
    "SW105": (lambda: wf("a", a(), a()), lambda: wf("a", a(), a("b"))),
    "SW106": (
        lambda: wf("x", a("x", handoffs=[a("Billing Agent")]), a("billing-agent")),
        lambda: wf("x", a("x", handoffs=[a("Billing Agent"), a("shipping")])),
    ),
    "SW107": (lambda: wf("a", a(), a("b")), lambda: wf("a", a(handoffs=[a("b")]))),
    "SW108": (
        lambda: wf("a", a(tools=[lookup], model_settings=ss.ModelSettings(tool_choice="look"))),
        lambda: wf("a", a(tools=[lookup], model_settings=ss.ModelSettings(tool_choice="lookup"))),
    ),
    "SW109": (lambda: wf("a", a(ignore=["SW17"])), lambda: wf("a", a(ignore=["SW107"]))),
    "SW201": (_cycle(None), _cycle(2)),
    "SW202": (_recursion(None), _recursion(2)),
    "SW203": (_sw203_fail, lambda: wf(None, a())),
    "SW204": (_sw204(50), _sw204(110)),
    "SW205": (_chain(2), _chain(3)),
    "SW301": (lambda: wf("a", a(tools=[bad_name])), lambda: wf("a", a(tools=[lookup]))),
    "SW302": (
        lambda: wf("a", a(tools=[lookup, lookup_again])),
        lambda: wf("a", a(tools=[lookup])),
    ),
    "SW303": (
        lambda: wf("a", a(tools=[lookup], tool_use_behavior=ss.StopAtTools(["look"]))),
        lambda: wf("a", a(tools=[lookup], tool_use_behavior=ss.StopAtTools(["lookup"]))),
    ),
    "SW304": (lambda: wf("a", a(tools=[undocumented])), lambda: wf("a", a(tools=[described]))),
    "SW305": (lambda: wf("a", a(tools=[misdocumented])), lambda: wf("a", a(tools=[lookup]))),
    "SW401": (lambda: wf("a", a(output_type=Tally)), lambda: wf("a", a(output_type=Counts))),
    "SW402": (lambda: wf("a", a(tools=[tag])), lambda: wf("a", a(tools=[tag_ok]))),
    "SW403": (
        lambda: wf("a", a(handoffs=[ss.handoff(a("b"), input_type=dict[str, int],
                                               on_handoff=log_reason)])),
        lambda: wf("a", a(handoffs=[ss.handoff(a("b"), input_type=Findings,
                                               on_handoff=log_reason)])),
    ),
    "SW404": (
        lambda: wf("a", a(tools=[a("b").as_tool("ask", "Ask", parameters=dict[str, str])])),
        lambda: wf("a", a(tools=[a("b").as_tool("ask", "Ask", parameters=Findings)])),
    ),
    "SW405": (
        lambda: wf("a", a(output_type=Draft, output_guardrails=[findings_guard],
                          input_guardrails=[int_input_guard])),
        lambda: wf("a", a(output_type=Findings, output_guardrails=[findings_guard],
                          input_guardrails=[str_input_guard])),
    ),
    "SW406": (
        lambda: wf("a", a(tools=[a("b").as_tool("ask", "Ask",
                                                output_extractor=summary_of_findings)])),
        lambda: wf("a", a(tools=[a("b").as_tool("ask", "Ask",
                                                output_extractor=summary_of_result)])),
    ),
    "SW407": (
        lambda: wf("a", a(tools=[shop_balance]), context_type=Account),
        lambda: wf("a", a(tools=[account_balance]), context_type=Account),
    ),
    "SW408": (
        lambda: wf("a", a(tools=[_guarded(inputs=[ss.ToolInputGuardrail(_three_args)])])),
        lambda: wf("a", a(tools=[_guarded(inputs=[allow_input])])),
    ),
    "SW409": (
        lambda: wf("a", a(tools=[_guarded(inputs=[redact_output])])),
        lambda: wf("a", a(tools=[_guarded(inputs=[allow_input], outputs=[redact_output])])),
    ),
    "SW501": (lambda: wf("a", a(tools=[refund_order])), lambda: wf("a", a(tools=[lookup]))),
    "SW603": (lambda: _sdk_filtered(sdk_filter=True), lambda: _sdk_filtered(sdk_filter=False)),
    "SW621": (
        lambda: wf("a", a(handoffs=[ss.handoff(a("b"), is_enabled=is_admin)])),
        lambda: wf("a", a(handoffs=[ss.handoff(a("b"), is_enabled=True)])),
    ),
    "SW622": (
        lambda: wf("a", a(tools=[_gated_lookup(True)], model_settings=FORCED)),
        lambda: wf("a", a(tools=[_gated_lookup(False)], model_settings=FORCED)),
    ),
    "SW602": (
        lambda: wf(a("a", handoffs=[a("b", input_guardrails=[str_input_guard])])),
        lambda: wf(a("a", tools=[a("b", input_guardrails=[str_input_guard]).as_tool()])),
    ),
    "SW701": (
        lambda: fwf(read_text, ss.then(read_text, "nobody"), ss.then("nobody", ss.END)),
        lambda: fwf(read_text, ss.then(read_text, check_outline),
                    ss.then(check_outline, ss.END)),
    ),
    "SW702": (
        lambda: fwf(read_text, ss.then(read_text, shout), ss.then(shout, ss.END)),
        lambda: fwf(read_text, ss.then(read_text, check_outline),
                    ss.then(check_outline, ss.END)),
    ),
    "SW703": (
        lambda: fwf(read_text, ss.then(read_text, check_outline),
                    ss.route(check_outline, on="score", cases={"pass": ss.END})),
        lambda: fwf(read_text, ss.then(read_text, check_outline),
                    ss.route(check_outline, on="score",
                             cases={"pass": ss.END, "needs_improvement": ss.END})),
    ),
    "SW704": (
        lambda: fwf(read_text, ss.then(read_text, check_outline),
                    ss.route(check_outline, on="grade", cases={"pass": ss.END})),
        lambda: fwf(read_text, ss.then(read_text, check_outline),
                    ss.route(check_outline, on="score",
                             cases={"pass": ss.END, "needs_improvement": ss.END})),
    ),
    "SW705": (_judge(None), _judge(3)),
    "SW706": (
        lambda: fwf(plan_of, ss.fan_out(plan_of, over="searches", each=shout, then=join_all),
                    ss.then(join_all, ss.END)),
        lambda: fwf(plan_of, ss.fan_out(plan_of, over="searches", each=shout, then=join_all,
                                        max_items=5),
                    ss.then(join_all, ss.END)),
    ),
    "SW707": (
        lambda: fwf(shout, ss.then(shout, ss.END), ss.then(read_text, ss.END)),
        lambda: fwf(shout, ss.then(shout, ss.END)),
    ),
    "SW708": (
        lambda: fwf(read_text, ss.then(read_text, check_outline)),
        lambda: fwf(read_text, ss.then(read_text, check_outline),
                    ss.then(check_outline, ss.END)),
    ),
    "SW709": (
        _nested_step,
        lambda: fwf(read_text, ss.then(read_text, check_outline),
                    ss.branch(check_outline, when=passed, then=ss.END, otherwise=ss.END)),
    ),
    "SW710": (
        lambda: fwf(shout, ss.then(shout, ss.END), ss.then(shout, ss.END)),
        lambda: fwf(shout, ss.then(shout, ss.END)),
    ),
    "SW711": (_sw711(nested=True), _sw711(nested=False)),
}


def _sdk_only_messages(data: Any) -> Any:
    """An input filter written for the SDK's items (its ``HandoffInputData``)."""
    return data.clone(pre_handoff_items=())


def _sdk_filtered(*, sdk_filter: bool) -> ss.Workflow:
    """An SDK handoff with an input filter written for the SDK's items (SW603), or with
    none. (The SDK's own ``remove_all_tools`` is read as stepswitch's: no SW603.)"""
    import agents

    from stepswitch.interop.sdk import from_sdk

    billing = agents.Agent(name="billing")
    flt = _sdk_only_messages if sdk_filter else None
    return from_sdk(agents.Agent(name="front", handoffs=[
        agents.handoff(billing, input_filter=flt)]))


# -- SW8xx policies: each fails through a handoff or a nested agent tool, not at the entry
ONCE = ss.ModelSettings(parallel_tool_calls=False)


def _behind_handoff(tool: Any, **kw: Any) -> tuple[ss.Agent, ss.Agent]:
    back = a("back", tools=[tool], **kw)
    return a("front", handoffs=[back]), back


def _policy(tool: Any, policy: Callable[[], Any], **kw: Any) -> Build:
    def build() -> ss.Workflow:
        front, back = _behind_handoff(tool, **kw)
        return wf(front, front, back, policies=[policy()])
    return build


async def _approve_large(ctx: Any, args: Any) -> bool:
    return True


@ss.function_tool(needs_approval=_approve_large)
def per_call_refund(order_id: int) -> str:
    """Refund an order; a callable decides per call whether a human approves."""
    return str(order_id)


def _unreachable_guarded() -> ss.Workflow:
    _, back = _behind_handoff(lookup)
    return wf(a("front"), a("front"), back,
              policies=[ss.require_guardrail("lookup", "no_pii")])


def _lookup_before_refund() -> ss.Workflow:
    back = a("back", tools=[lookup])
    front = a("front", tools=[refund_order], handoffs=[back])
    return wf(front, front, back, policies=[ss.only_after("lookup", "refund_order")])


CASES.update({
    "SW801": (_policy(lookup, lambda: ss.require_approval("lookup")),
              _policy(refund_order, lambda: ss.require_approval("refund_order"))),
    "SW802": (_policy(lookup, lambda: ss.require_guardrail("lookup", "no_pii")),
              _unreachable_guarded),
    "SW803": (_policy(lookup, lambda: ss.forbid("back")),
              _policy(lookup, lambda: ss.forbid("front", from_agent="back"))),
    "SW804": (_policy(lookup, lambda: ss.max_calls("lookup", 1), model_settings=ONCE),
              _policy(lookup, lambda: ss.max_calls("lookup", 1), model_settings=ONCE,
                      tool_use_behavior="stop_on_first_tool")),
    "SW805": (_lookup_before_refund,
              _policy(lookup, lambda: ss.only_after("lookup", "back"))),
    "SW806": (lambda: wf("a", a(tools=[per_call_refund]),
                         policies=[ss.require_approval("per_call_refund")]),
              lambda: wf("a", a(tools=[refund_order]),
                         policies=[ss.require_approval("refund_order")])),
    "SW807": (lambda: wf("a", a(tools=[refund_order]),
                         policies=[ss.require_approval("refund_ordr")]),
              lambda: wf("a", a(tools=[refund_order]),
                         policies=[ss.require_approval("refund_order")])),
})


# -- SW206-SW208 cost ceilings
CAPPED = ss.ModelSettings(max_tokens=1000)


def _priced(ceiling: float, **settings: Any) -> Build:
    def build() -> ss.Workflow:
        agent = a(model="gpt-4.1", model_settings=ss.ModelSettings(**settings))
        return wf(agent, agent, max_turns=3, max_cost_usd=ceiling)
    return build


CASES.update({
    "SW206": (_priced(0.01, max_tokens=1000), _priced(1.0, max_tokens=1000)),
    "SW207": (_priced(1.0, max_tokens=1000), lambda: wf("a", a(model_settings=CAPPED))),
    "SW208": (_priced(1.0), _priced(1.0, max_tokens=1000)),
})


from tests.analysis._mcp_cases import MCP_CASES  # noqa: E402 -- the SW9xx cases, apart

CASES.update(MCP_CASES)

from tests.analysis._hosted_cases import HOSTED_CASES  # noqa: E402 -- SW601, SW610-SW616

CASES.update(HOSTED_CASES)
from tests.analysis._agents_api_cases import AGENTS_API_CASES  # noqa: E402 -- SW650-SW654

CASES.update(AGENTS_API_CASES)
