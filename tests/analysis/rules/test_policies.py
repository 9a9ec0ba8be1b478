"""SW8xx: policies proved over handoff chains, nested agent tools and flows, with the
shortest counterexample run (the property test against brute force over scripted runs
is tests/analysis/rules/test_policy_properties.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import stepswitch as ss
from stepswitch.cli.formats import github, json_lines, sarif, text
from stepswitch.errors import UserError
from stepswitch.policies import policies_from_pyproject
from tests._paths import ROOT

ONCE = ss.ModelSettings(parallel_tool_calls=False)


@ss.function_tool
def wire_money(amount: int) -> str:
    """Wire money out."""
    return f"wired {amount}"


@ss.function_tool(needs_approval=True)
def refund(order_id: int) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


@ss.function_tool
def verify(order_id: int) -> str:
    """Verify the customer."""
    return "ok"


def _codes(wf: ss.Workflow) -> dict[str, Any]:
    return {d.code: d for d in wf.check(select=["SW8"])}


def _trace(d: Any) -> list[str]:
    return [s.message for s in d.trace]


def test_approval_holds_when_every_declaration_needs_it() -> None:
    back = ss.Agent("back", "b", tools=[refund])
    front = ss.Agent("front", "f", handoffs=[back], tools=[back.as_tool("ask_back", "Ask")])
    wf = ss.Workflow("w", front, [front, back], policies=[ss.require_approval(refund)])
    assert _codes(wf) == {}


def test_approval_fails_through_a_nested_agent_tools_handoff() -> None:
    # the entry offers the tool only with approval; an agent tool's nested run hands off
    # to an agent that offers the same tool name without it
    @ss.function_tool(name="refund")
    def quiet_refund(order_id: int) -> str:
        """Refund an order."""
        return "done"

    deep = ss.Agent("deep", "d", tools=[quiet_refund])
    helper = ss.Agent("helper", "h", handoffs=[deep])
    front = ss.Agent("front", "f", tools=[refund, helper.as_tool("research", "Research")])
    wf = ss.Workflow("w", front, [front, helper, deep], policies=[ss.require_approval("refund")])
    d = _codes(wf)["SW801"]
    assert d.severity == "error"
    assert _trace(d) == ["agent 'front'", "calls agent tool research (a nested run of 'helper')",
                         "hands off to 'deep' (transfer_to_deep)", "calls refund"]
    assert d.trace[-1].location.path == "agents.deep.tools[0]"
    assert d.location.file.endswith("test_policies.py")
    assert not wf.check().ok


def test_forbid_from_an_agent_and_the_shortest_of_two_paths() -> None:
    danger = ss.Agent("danger", "x", tools=[wire_money])
    mid = ss.Agent("mid", "m", handoffs=[danger])
    public = ss.Agent("public", "p", handoffs=[mid])
    admin = ss.Agent("admin", "a", handoffs=[public, danger])
    wf = ss.Workflow("w", admin, [admin, public, mid, danger], policies=[
        ss.forbid(wire_money), ss.forbid("admin", from_agent=public)])
    found = _codes(wf)
    assert _trace(found["SW803"]) == ["agent 'admin'", "hands off to 'danger' "
                                      "(transfer_to_danger)", "calls wire_money"]
    # public never gets back to admin: that forbid holds
    assert len([d for d in wf.check(select=["SW803"])]) == 1
    wf2 = ss.Workflow("w", admin, [admin, public, mid, danger],
                      policies=[ss.forbid("danger", from_agent="public")])
    assert _trace(_codes(wf2)["SW803"]) == [
        "agent 'admin'", "hands off to 'public' (transfer_to_public)",
        "hands off to 'mid' (transfer_to_mid)", "hands off to 'danger' (transfer_to_danger)"]


def test_forbid_from_an_agent_that_calls_the_tool_itself_ends_with_the_call() -> None:
    # the property test's first catch: the path ends at from_agent, and the trace used to
    # stop there, without the call that breaks the rule
    front = ss.Agent("front", "f", tools=[wire_money])
    wf = ss.Workflow("w", front, [front], policies=[ss.forbid(wire_money, from_agent=front)])
    assert _trace(_codes(wf)["SW803"]) == ["agent 'front'", "calls wire_money"]


def test_only_after_holds_only_when_every_path_passes_first() -> None:
    pay = ss.Agent("pay", "p", tools=[wire_money])
    checker = ss.Agent("checker", "c", tools=[verify], handoffs=[pay])
    front = ss.Agent("front", "f", handoffs=[checker])
    ok = ss.Workflow("w", front, [front, checker, pay],
                     policies=[ss.only_after(wire_money, checker)])
    assert _codes(ok) == {}
    shortcut = ss.Agent("front", "f", handoffs=[checker, pay])
    bad = ss.Workflow("w", shortcut, [shortcut, checker, pay],
                      policies=[ss.only_after(wire_money, "checker")])
    assert _trace(_codes(bad)["SW805"]) == ["agent 'front'", "hands off to 'pay' "
                                            "(transfer_to_pay)", "calls wire_money"]
    # a tool as the prerequisite: the model may always call wire_money first
    tool_first = ss.Workflow("w", front, [front, checker, pay],
                             policies=[ss.only_after(wire_money, verify)])
    assert "SW805" in _codes(tool_first)


def test_max_calls_counts_turns_parallel_calls_and_nested_runs() -> None:
    def wf_for(**kw: Any) -> ss.Workflow:
        payer = ss.Agent("payer", "p", tools=[wire_money], **kw)
        return ss.Workflow("w", payer, [payer], max_turns=3,
                           policies=[ss.max_calls(wire_money, 1)])

    parallel = _codes(wf_for())["SW804"]
    assert "without bound" in parallel.message and "parallel" in parallel.message
    assert "up to 3 times" in _codes(wf_for(model_settings=ONCE))["SW804"].message
    assert _codes(wf_for(model_settings=ONCE, tool_use_behavior="stop_on_first_tool")) == {}
    # the stopping tool inside an agent tool's nested run, called on each of 3 outer turns
    payer = ss.Agent("payer", "p", tools=[wire_money], model_settings=ONCE,
                     tool_use_behavior="stop_on_first_tool")
    boss = ss.Agent("boss", "b", tools=[payer.as_tool("pay", "Pay")], model_settings=ONCE)
    nested = ss.Workflow("w", boss, [boss, payer], max_turns=3,
                         policies=[ss.max_calls(wire_money, 2)])
    d = _codes(nested)["SW804"]
    assert "up to 3 times" in d.message
    assert _trace(d) == ["agent 'boss'", "calls agent tool pay (a nested run of 'payer')",
                         "calls wire_money"]
    assert _codes(ss.Workflow("w", boss, [boss, payer], max_turns=3,
                              policies=[ss.max_calls(wire_money, 3)])) == {}


def test_max_calls_holds_by_the_tools_run_budget_through_handoffs_and_nested_runs() -> None:
    @ss.function_tool(name="refund", max_uses=1)
    def budgeted(order_id: int) -> str:
        """Refund an order, once per run."""
        return "r"

    @ss.function_tool(name="refund", max_uses=2)
    def twice(order_id: int) -> str:
        """Refund an order, twice per run."""
        return "r"

    def wf(back_tool: Any, n: int) -> ss.Workflow:
        # parallel calls, a handoff cycle and a nested run: without the budget, unbounded
        deep = ss.Agent("deep", "d", tools=[back_tool])
        back = ss.Agent("back", "b", tools=[budgeted], handoffs=["front"])
        front = ss.Agent("front", "f", handoffs=[ss.handoff(back, max_uses=3)],
                         tools=[deep.as_tool("ask_deep", "Ask")])
        return ss.Workflow("w", front, [front, back, deep], max_turns=10,
                           policies=[ss.max_calls("refund", n)])

    assert _codes(wf(budgeted, 1)) == {}
    # one declaration allows two: the largest budget is the bound
    d = _codes(wf(twice, 1))["SW804"]
    assert "up to 2 times" in d.message and "max_uses=2" in d.message
    assert _codes(wf(twice, 2)) == {}
    # one declaration without a budget: the budgets prove nothing
    d = _codes(wf(refund, 5))["SW804"]
    assert "without bound" in d.message
    assert "function_tool(max_uses=N)" in (d.help or "")


def test_a_bad_run_budget_is_a_located_user_error() -> None:
    with pytest.raises(UserError, match=r"function_tool at .*test_policies.py:\d+: max_uses: "
                       r"expected a positive int"):
        @ss.function_tool(max_uses=0)
        def nope() -> str:
            """Never."""
            return ""
    with pytest.raises(UserError, match="max_uses"):
        ss.function_tool(max_uses=True)(lambda: "")


def test_diff_a_removed_run_budget_is_safety_and_its_policy_newly_fails() -> None:
    from stepswitch.review.diff import diff_specs

    def spec(max_uses: int | None) -> Any:
        @ss.function_tool(name="refund", max_uses=max_uses)
        def pay(order_id: int) -> str:
            """Refund."""
            return "r"

        a = ss.Agent("a", "a", tools=[pay])
        return ss.Workflow("w", a, [a], policies=[ss.max_calls("refund", 1)]).to_spec()

    changes = diff_specs(spec(1), spec(None), bound=None).of("safety")
    assert {c.path for c in changes} == {"agents.a.tools.refund.max_uses", "workflow.policies"}
    assert any("run budget (max_uses) of tool 'refund' of agent 'a' removed" in c.message
               for c in changes)
    assert any("max_calls('refund', 1) newly fails (SW804)" in c.message for c in changes)
    lowered = diff_specs(spec(None), spec(1), bound=None)
    assert not lowered.of("safety")


class Verdict(BaseModel):
    refund: bool


def is_refund(v: Verdict) -> bool:
    return v.refund


@ss.step
def classify(v: Verdict) -> Verdict:
    return v


def test_flow_branch_decided_by_code_is_undecided_and_a_route_on_agent_output_fails() -> None:
    judge = ss.Agent("judge", "j", output_type=Verdict)
    payer = ss.Agent("payer", "p", tools=[wire_money])
    by_code = ss.Workflow("w", judge, flow=[
        ss.then(judge, classify),
        ss.branch(classify, when=is_refund, then=payer, otherwise=ss.END),
        ss.then(payer, ss.END),
    ], policies=[ss.forbid(wire_money)])
    d = _codes(by_code)["SW806"]
    assert d.severity == "warning" and "is_refund" in d.message
    assert _trace(d)[-1] == "calls wire_money"
    by_model = ss.Workflow("w", judge, flow=[
        ss.route(judge, on="refund", cases={True: payer, False: ss.END}),
        ss.then(payer, ss.END),
    ], policies=[ss.forbid(wire_money)])
    d = _codes(by_model)["SW803"]
    assert _trace(d) == ["flow node 'judge'", "flow: route refund == True to payer",
                         "flow node 'payer' runs its agent", "calls wire_money"]


def test_callable_approval_is_undecided_not_silent() -> None:
    async def big(ctx: Any, args: Any) -> bool:
        return True

    @ss.function_tool(needs_approval=big)
    def maybe_refund(order_id: int) -> str:
        """Refund, maybe approved."""
        return "r"

    a = ss.Agent("a", "a", tools=[maybe_refund])
    d = _codes(ss.Workflow("w", a, [a], policies=[ss.require_approval(maybe_refund)]))["SW806"]
    assert "callable decides per call" in d.message


def test_unknown_names_are_reported_with_a_suggestion() -> None:
    a = ss.Agent("a", "a", tools=[refund])
    d = _codes(ss.Workflow("w", a, [a], policies=[ss.max_calls("refnd", 1)]))["SW807"]
    assert "did you mean 'refund'" in d.message


def test_bad_declarations_are_located_user_errors() -> None:
    with pytest.raises(UserError, match=r"max_calls\(\.\.\.\) at .*test_policies.py:\d+: n"):
        ss.max_calls(refund, -1)
    a = ss.Agent("a", "a")
    with pytest.raises(UserError, match=r"policies\[0\]: expected a policy"):
        ss.Workflow("w", a, [a], policies=["require_approval"])  # type: ignore[list-item]


def test_every_format_carries_the_counterexample() -> None:
    danger = ss.Agent("danger", "x", tools=[wire_money])
    front = ss.Agent("front", "f", handoffs=[danger])
    report = ss.Workflow("w", front, [front, danger], policies=[ss.forbid(wire_money)]).check(
        select=["SW803"])
    checked = [("w", report)]
    shown = text(checked)
    assert "counterexample:" in shown and "3. calls wire_money" in shown
    record = json.loads(json_lines(checked).splitlines()[0])
    assert [s["message"] for s in record["trace"]][-1] == "calls wire_money"
    assert record["trace"][-1]["path"] == "agents.danger.tools[0]"
    log = json.loads(sarif(checked))
    flow = log["runs"][0]["results"][0]["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["message"]["text"] for s in flow] == [
        "agent 'front'", "hands off to 'danger' (transfer_to_danger)", "calls wire_money"]
    assert "counterexample:%0A1. agent 'front'" in github(checked)


PYPROJECT = """
[project]
name = "demo"

[tool.stepswitch]
policies = [
  { rule = "require_approval", tool = "wire_money" },
  { rule = "max_calls", tool = "wire_money", n = 1 },
]
"""

APP = """
import stepswitch as ss

@ss.function_tool
def wire_money(amount: int) -> str:
    '''Wire money.'''
    return "w"

front = ss.Agent("front", "f", tools=[wire_money])
app = ss.Workflow("app", front, [front])
"""


def test_pyproject_policies_apply_to_check(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "app.py").write_text(APP)
    found = policies_from_pyproject(tmp_path)
    assert [p.rule for p in found] == ["require_approval", "max_calls"]
    assert [p.line for p in found] == [7, 8]  # each entry's own line, not `policies = [`
    out = subprocess.run([sys.executable, "-m", "stepswitch", "check", "app.py:app",
                          "--select", "SW8"], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": f"{ROOT / 'src'}", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 1, out.stderr
    assert "SW801" in out.stdout and "SW804" in out.stdout
    assert "pyproject.toml:7:1: SW801" in out.stdout
    # render --highlight and show read the same rules
    env = {"PYTHONPATH": f"{ROOT / 'src'}", "PATH": "/usr/bin:/bin"}
    drawn = subprocess.run([sys.executable, "-m", "stepswitch", "render", "app.py:app",
                            "--highlight", "SW801", "-f", "mermaid"], cwd=tmp_path,
                           capture_output=True, text=True, env=env)
    assert drawn.returncode == 0, drawn.stderr
    assert "tool: wire_money [SW801]" in drawn.stdout
    shown = subprocess.run([sys.executable, "-m", "stepswitch", "show", "app.py:app"],
                           cwd=tmp_path, capture_output=True, text=True, env=env)
    assert "    require_approval('wire_money'): SW801 (error)" in shown.stdout, shown.stderr
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.replace('n = 1', 'n = "one"'))
    bad = subprocess.run([sys.executable, "-m", "stepswitch", "check", "app.py:app"],
                         cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": f"{ROOT / 'src'}", "PATH": "/usr/bin:/bin"})
    assert bad.returncode == 2
    assert "pyproject.toml:8: [tool.stepswitch] policies[1]: max_calls: n" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_each_pyproject_policy_is_located_at_its_own_entry(tmp_path: Path) -> None:
    """Entries of an array of tables, and inline tables with a string holding a brace
    and a comment between them, each at their own line."""
    (tmp_path / "pyproject.toml").write_text(
        "[tool.stepswitch]\n"
        "[[tool.stepswitch.policies]]\n"
        'rule = "require_approval"\ntool = "a"\n'
        "[[tool.stepswitch.policies]]\n"
        'rule = "max_calls"\ntool = "b"\nn = 2\n')
    assert [p.line for p in policies_from_pyproject(tmp_path)] == [2, 5]
    (tmp_path / "pyproject.toml").write_text(
        "[tool.stepswitch]\n"
        "policies = [\n"
        '  { rule = "require_approval", tool = "{odd}" },  # a } in a comment\n'
        "\n"
        '  { rule = "max_calls", tool = "b", n = 2 },\n'
        "]\n")
    assert [p.line for p in policies_from_pyproject(tmp_path)] == [3, 5]


def test_a_pyproject_rule_given_twice_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.stepswitch]\n"
        "policies = [\n"
        '  { rule = "max_calls", tool = "b", n = 2 },\n'
        '  { rule = "max_calls", tool = "b", n = 3 },\n'  # another rule: kept
        '  { rule = "max_calls", tool = "b", n = 2 },\n'
        "]\n")
    with pytest.raises(UserError) as info:
        policies_from_pyproject(tmp_path)
    assert str(info.value).endswith("pyproject.toml:5: [tool.stepswitch] policies[2] repeats "
                                    "policies[0] (line 3): drop one")


def test_diff_reports_a_removed_or_newly_failing_policy_as_safety() -> None:
    from stepswitch.review.diff import diff_specs

    def spec(tools: list[Any], policies: list[Any]) -> Any:
        back = ss.Agent("back", "b", tools=tools)
        front = ss.Agent("front", "f", handoffs=[back])
        return ss.Workflow("w", front, [front, back], policies=policies).to_spec()

    approved = ss.require_approval("refund")
    base = spec([refund], [approved])
    removed = diff_specs(base, spec([refund], []), bound=None)
    assert [(c.category, c.message) for c in removed.of("safety")] == [
        ("safety", "policy require_approval('refund') removed: it is no longer proved")]

    @ss.function_tool(name="refund")
    def ungated(order_id: int) -> str:
        """Refund an order."""
        return "r"

    fails = diff_specs(base, spec([ungated], [approved]), bound=None)
    assert any(c.message == "policy require_approval('refund') newly fails (SW801)"
               for c in fails.of("safety"))
    added = diff_specs(spec([refund], []), base, bound=None)
    assert not added.of("safety") and any("added" in c.message for c in added.of("structure"))


def test_render_highlight_lights_only_the_counterexample_path(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "import stepswitch as ss\n"
        "@ss.function_tool\n"
        "def pay(n: int) -> str:\n"
        "    '''Pay.'''\n"
        "    return 'p'\n"
        "back = ss.Agent('back', 'b', tools=[pay])\n"
        "mid = ss.Agent('mid', 'm', handoffs=[back])\n"
        "other = ss.Agent('other', 'o')\n"
        "front = ss.Agent('front', 'f', handoffs=[mid, other])\n"
        "app = ss.Workflow('app', front, [front, mid, back, other], "
        "policies=[ss.forbid(pay)])\n")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}

    def render(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "stepswitch", "render", "app.py:app",
                               "--highlight", code, "-f", "mermaid"], cwd=tmp_path,
                              capture_output=True, text=True, env=env)

    out = render("SW803")
    assert out.returncode == 0, out.stderr
    assert '|"transfer_to_mid [SW803]"|' in out.stdout
    assert '|"transfer_to_back [SW803]"|' in out.stdout
    assert '|"transfer_to_other"|' in out.stdout  # off the path: not lit
    assert "tool: pay [SW803]" in out.stdout
    missing = render("SW801")
    assert missing.returncode == 2 and "no SW801 finding" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_diff_proves_pyproject_policies_on_both_sides(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str],
                                                      ) -> None:
    # an SDK-style app declares no policies of its own: the team's pyproject rules are
    # what a pull request must keep, and diff says when one newly fails
    from tests.cli.conftest import run_main

    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [{ rule = "require_approval", tool = "wire_money" }]\n')
    for name, approval in (("base", True), ("head", False)):
        (tmp_path / f"{name}.py").write_text(
            "import stepswitch as ss\n"
            f"@ss.function_tool(needs_approval={approval})\n"
            "def wire_money(amount: int) -> str:\n    '''Wire money.'''\n    return 'w'\n"
            "a = ss.Agent('a', 'a', tools=[wire_money])\napp = ss.Workflow('app', a, [a])\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["diff", "base.py:app", "head.py:app", "--fail-on", "safety"],
                              capsys)
    assert code == 1, err
    assert "policy require_approval('wire_money') newly fails (SW801)" in out


def test_a_wrong_price_names_its_line(tmp_path: Path) -> None:
    from stepswitch.errors import UserError
    from stepswitch.policies import prices_from_pyproject

    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch.prices]\n"fine" = { input = 1, output = 2 }\n'
        '"my-model" = { input = "cheap", output = 2 }\n')
    with pytest.raises(UserError, match=r"pyproject.toml:3: \[tool.stepswitch.prices\] "
                                        r"'my-model'"):
        prices_from_pyproject(tmp_path)


def test_a_pyproject_policy_scoped_to_workflows_checks_only_those(tmp_path: Path) -> None:
    """A project of several workflows: a rule about a tool one of them has got an SW807
    in every other; `workflows = [...]` keeps it to the ones it is about."""
    (tmp_path / "app.py").write_text(APP + (
        "other = ss.Agent('other', 'o')\n"
        "elsewhere = ss.Workflow('elsewhere', other, [other])\n"))
    env = {"PYTHONPATH": f"{ROOT / 'src'}", "PATH": "/usr/bin:/bin"}

    def check() -> str:
        out = subprocess.run([sys.executable, "-m", "stepswitch", "check", "--no-cache",
                              "app.py"], cwd=tmp_path, capture_output=True, text=True,
                             env=env)
        assert out.returncode in (0, 1), out.stderr
        return out.stdout

    rule = '{ rule = "require_approval", tool = "wire_money"%s }'
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.stepswitch]\npolicies = [{rule % ''}]\n")
    unscoped = check()
    assert "SW801" in unscoped and "names no tool of workflow 'elsewhere'" in unscoped
    only_app = rule % ', workflows = ["app"]'
    (tmp_path / "pyproject.toml").write_text(f"[tool.stepswitch]\npolicies = [{only_app}]\n")
    scoped = check()
    assert "SW801" in scoped and "SW807" not in scoped, scoped
    assert [p.workflows for p in policies_from_pyproject(tmp_path)] == [("app",)]
    assert policies_from_pyproject(tmp_path, workflow="elsewhere") == ()
    not_a_list = rule % ', workflows = "app"'
    (tmp_path / "pyproject.toml").write_text(f"[tool.stepswitch]\npolicies = [{not_a_list}]\n")
    with pytest.raises(UserError, match="workflows: expected a list of workflow names"):
        policies_from_pyproject(tmp_path)


def test_run_and_compile_refuse_what_a_pyproject_policy_forbids(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check` lists the pyproject's findings; the commands that run or write the
    workflow refuse them too, before any model call or file."""
    from tests.cli.conftest import run_main

    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [{ rule = "forbid", tool_or_agent = "wire_money" }]\n')
    (tmp_path / "forbidden_app.py").write_text(APP)  # a name no other test imports
    (tmp_path / "script.json").write_text(json.dumps([{"type": "message", "text": "hi"}]))
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(["check", "--no-cache", "forbidden_app.py:app"], capsys)
    assert code == 1
    for argv in (["run", "forbidden_app.py:app", "--input", "hi",
                  "--model", "scripted:script.json"],
                 ["compile", "forbidden_app.py:app", "-o", "runner.py"]):
        code, out, err = run_main(argv, capsys)
        assert code == 1, (argv, out, err)
        assert "SW803" in err and "wire_money" in err, err
    assert not (tmp_path / "runner.py").exists()
    # scoped to another workflow, it does not hold this one back
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [{ rule = "forbid", tool_or_agent = "wire_money", '
        'workflows = ["other"] }]\n')
    code, _, err = run_main(["compile", "forbidden_app.py:app", "-o", "runner.py"], capsys)
    assert code == 0, err
    assert (tmp_path / "runner.py").exists()


@pytest.mark.parametrize(("body", "where", "said"), [
    ('polices = [{ rule = "forbid", tool_or_agent = "wire_money" }]', 2,
     "unknown setting 'polices' (it takes policies and prices); did you mean 'policies'?"),
    ('[tool.stepswitch.price]\n"gpt-x" = { input = 1, output = 2 }', 2,
     "unknown setting 'price' (it takes policies and prices); did you mean 'prices'?"),
    ("max_cost_usd = 3", 2, "unknown setting 'max_cost_usd' (it takes policies and prices)"),
])
def test_a_misspelt_pyproject_setting_is_a_located_error(
        tmp_path: Path, body: str, where: int, said: str) -> None:
    """A setting stepswitch does not read would otherwise prove nothing, silently."""
    (tmp_path / "pyproject.toml").write_text(f"[tool.stepswitch]\n{body}\n")
    (tmp_path / "app.py").write_text(APP)
    out = subprocess.run([sys.executable, "-m", "stepswitch", "check", "--no-cache",
                          "app.py:app"], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": f"{ROOT / 'src'}", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 2, out
    assert f"pyproject.toml:{where}: [tool.stepswitch]: {said}" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_scope_naming_no_checked_workflow_is_noted_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [\n'
        '  { rule = "forbid", tool_or_agent = "wire_money", workflows = ["app"] },\n'
        '  { rule = "forbid", tool_or_agent = "wire_money", workflows = ["ap"] },\n]\n')
    (tmp_path / "app.py").write_text(APP)
    out = subprocess.run([sys.executable, "-m", "stepswitch", "check", "--no-cache",
                          "app.py:app"], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": f"{ROOT / 'src'}", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 1 and "SW803" in out.stdout  # the rule scoped right holds
    assert ("note: pyproject.toml:4: forbid applies to workflows ['ap'], none of which this "
            "check read (checked: app)") in out.stderr, out.stderr
    assert "pyproject.toml:3" not in out.stderr


def test_a_project_pyproject_the_check_does_not_read_is_noted(tmp_path: Path) -> None:
    """Run from above the project, the check reads no pyproject (from the working
    directory up), so the project's rules do not hold: it says so, not a silent pass."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "app.py").write_text(APP)
    (proj / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [{ rule = "forbid", tool_or_agent = "wire_money" }]\n')
    env = {"PYTHONPATH": f"{ROOT / 'src'}", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "stepswitch", "check", "--no-cache",
                          "proj/app.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "passed" in out.stdout
    assert ("note: proj/pyproject.toml has [tool.stepswitch] settings this check did not "
            "read: they are read from the working directory up (run it from proj)") in out.stderr
    inside = subprocess.run([sys.executable, "-m", "stepswitch", "check", "--no-cache",
                             "app.py"], cwd=proj, capture_output=True, text=True, env=env)
    assert inside.returncode == 1 and "SW803" in inside.stdout
    assert "did not read" not in inside.stderr
