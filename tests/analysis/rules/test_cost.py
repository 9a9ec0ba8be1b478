"""SW206-SW208: the worst-case cost of one run, computed by hand on small graphs."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import stepswitch as ss
from stepswitch.analysis.rules.cost import price_table
from tests._paths import ROOT


def _one(max_tokens: int | None = 100, model: str = "gpt-4.1", **kw: object) -> ss.Workflow:
    agent = ss.Agent("a", "instructions", model=model,
                     model_settings=ss.ModelSettings(max_tokens=max_tokens))
    return ss.Workflow("w", agent, [agent], max_turns=3, **kw)  # type: ignore[arg-type]


def test_shipped_table_is_dated_and_in_the_package() -> None:
    raw = json.loads((resources.files("stepswitch") / "prices.json").read_text("utf-8"))
    assert raw["read"][:2] == "20" and raw["models"]["gpt-4.1"] == {"input": 2.0,
                                                                      "output": 8.0}
    read, models = price_table({"mine": (1.0, 2.0)})
    assert read == raw["read"] and models["mine"] == (1.0, 2.0)


def test_bound_by_hand_and_the_ceiling() -> None:
    # 3 calls; input per call: "instructions" (12 bytes) + "[]" (no tools) = 14, plus the
    # earlier outputs: 3*14 + 100*(0+1+2) = 342 input tokens, 3*100 = 300 output tokens;
    # gpt-4.1 at $2 / $8 per 1M: (342*2 + 300*8) / 1e6 = $0.003084
    report = _one(max_cost_usd=1.0).check(select=["SW20"])
    (info,) = [d for d in report if d.code == "SW207"]
    assert info.message.startswith("worst case per run: $0.0031 and 642 tokens (3 model calls")
    assert "one token per UTF-8 byte" in info.message
    assert "SW206" not in report.codes()
    over = _one(max_cost_usd=0.003).check(select=["SW206"])
    (d,) = over.diagnostics
    assert "$0.0031 exceeds max_cost_usd=0.003" in d.message and "agent 'a'" in d.message
    tokens = _one(max_total_tokens=641).check(select=["SW206"])
    assert "642 tokens exceed max_total_tokens=641" in tokens.diagnostics[0].message
    assert _one(max_total_tokens=642).check(select=["SW206"]).ok


def test_costliest_path_runs_through_a_handoff() -> None:
    cheap = ss.ModelSettings(max_tokens=10)
    big = ss.Agent("big", "x" * 1000, model="gpt-4.1", model_settings=cheap)
    front = ss.Agent("front", "f", model="gpt-4.1-nano", model_settings=cheap,
                     handoffs=[big])
    d = ss.Workflow("w", front, [front, big], max_turns=2, max_cost_usd=0.0001).check(
        select=["SW206"]).diagnostics[0]
    assert [s.message for s in d.trace] == ["agent 'front'", "hands off to 'big' "
                                            "(transfer_to_big)"]


def test_unbounded_output_and_unpriced_models_warn() -> None:
    assert "sets no max_tokens" in _one(None, max_cost_usd=1.0).check(
        select=["SW208"]).diagnostics[0].message
    unpriced = _one(model="my-model", max_cost_usd=1.0)
    assert "does not list" in unpriced.check(select=["SW208"]).diagnostics[0].message
    priced = unpriced.check(prices={"my-model": (1.0, 1.0)})
    assert "SW208" not in priced.codes() and "SW207" in priced.codes()
    # the bound says where its prices came from: the project's table, not the shipped
    # table's date (which it said for a model the shipped table does not even list)
    (bound,) = [d for d in priced.diagnostics if d.code == "SW207"]
    assert "prices from [tool.stepswitch.prices])" in bound.message, bound.message
    shipped = _one(model="gpt-4.1", max_cost_usd=1.0).check(select=["SW207"])
    assert "prices read 20" in shipped.diagnostics[0].message
    # a price the project nearly named: the typo is pointed at, not only the gap
    typo = unpriced.check(select=["SW208"], prices={"my-modle": (1.0, 1.0)})
    assert ("which the price table does not list ([tool.stepswitch.prices] has "
            "'my-modle': a typo?)") in typo.diagnostics[0].message


def _auditing(parallel: bool | None, **kw: object) -> ss.Workflow:
    settings = ss.ModelSettings(max_tokens=500, parallel_tool_calls=parallel)
    auditor = ss.Agent("auditor", "audit", model="gpt-4.1-mini", model_settings=settings)
    billing = ss.Agent("billing", "bill", model="gpt-4.1-mini", model_settings=settings,
                       tools=[auditor.as_tool("audit", "Audit a charge")])
    return ss.Workflow("w", billing, [billing, auditor], max_turns=6,
                       **kw)  # type: ignore[arg-type]


def test_a_ceiling_over_an_agent_tool_called_in_parallel_is_not_proved() -> None:
    """The bound counts one call of each agent tool per response; a model may call one
    twenty times in a response, each a nested run, and spend past a "proved" ceiling."""
    report = _auditing(None, max_cost_usd=0.25).check(select=["SW20"])
    (warning,) = [d for d in report if d.code == "SW208"]
    assert warning.message == (
        "no cost bound: agent 'billing' may call agent tool 'audit' several times in one "
        "response, each a nested run, and the bound counts one")
    assert "parallel_tool_calls=False" in (warning.help or "")
    assert "SW207" not in report.codes()  # no figure that reads as a proof
    calls = _auditing(None, max_model_calls=1000).check(select=["SW204"])
    (error,) = calls.diagnostics
    assert error.message.startswith("max_model_calls=1000 is not proved: agent 'billing' "
                                    "may call agent tool 'audit' several times")
    # one tool call per response: the bound holds, and both ceilings are proved
    sequential = _auditing(False, max_cost_usd=0.25, max_model_calls=1000).check(
        select=["SW20"])
    assert {"SW204", "SW206", "SW208"}.isdisjoint(sequential.codes())
    assert "SW207" in sequential.codes()


def test_an_inline_prices_table_error_names_its_line(tmp_path: Path) -> None:
    import pytest

    from stepswitch.errors import UserError
    from stepswitch.policies import prices_from_pyproject

    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.stepswitch]\n'
        'prices = { "fine" = { input = 1, output = 2 }, "bad" = { input = "x", output = 2 } }\n')
    with pytest.raises(UserError, match=r"pyproject.toml:5: \[tool.stepswitch.prices\] 'bad'"):
        prices_from_pyproject(tmp_path)


def test_pyproject_prices_reach_check(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch.prices]\n"my-model" = { input = 1000.0, output = 1000.0 }\n')
    (tmp_path / "app.py").write_text(
        "import stepswitch as ss\n"
        "a = ss.Agent('a', 'i', model='my-model', model_settings=ss.ModelSettings("
        "max_tokens=100))\n"
        "app = ss.Workflow('app', a, [a], max_turns=3, max_cost_usd=0.5)\n")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "stepswitch", "check", "app.py:app"],
                         cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 1, out.stderr
    assert "SW206" in out.stdout


def test_show_prints_the_bound_and_each_policys_verdict(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "import stepswitch as ss\n"
        "@ss.function_tool\n"
        "def pay(n: int) -> str:\n"
        "    '''Pay.'''\n"
        "    return 'p'\n"
        "a = ss.Agent('a', 'i', model='gpt-4.1', tools=[pay], model_settings=ss.ModelSettings("
        "max_tokens=100))\n"
        "app = ss.Workflow('app', a, [a], max_turns=3, max_cost_usd=1.0, policies=["
        "ss.forbid('pay'), ss.forbid('a', from_agent='a')])\n")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "stepswitch", "show", "app.py:app"],
                         cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "    forbid('pay'): SW803 (error)" in out.stdout
    assert "cost: SW207 worst case per run: $" in out.stdout


def test_a_flows_agent_node_calling_an_agent_tool_in_parallel_leaves_its_limit_unproved() -> None:
    def flow(parallel: bool | None) -> ss.Workflow:
        settings = ss.ModelSettings(max_tokens=100, parallel_tool_calls=parallel)
        helper = ss.Agent("helper", "help", model="gpt-4.1", model_settings=settings)
        first = ss.Agent("first", "go", model="gpt-4.1", model_settings=settings)
        second = ss.Agent("second", "write", model="gpt-4.1", model_settings=settings,
                          tools=[helper.as_tool("ask", "Ask the helper")])
        return ss.Workflow("f", first, flow=[ss.then(first, second), ss.then(second, ss.END)],
                           max_turns=2, max_model_calls=1000, max_cost_usd=5.0)

    report = flow(None).check(select=["SW20"])
    assert "SW204" in report.codes() and "SW208" in report.codes()
    assert any("agent 'second' may call agent tool 'ask'" in d.message for d in report)
    assert {"SW204", "SW208"}.isdisjoint(flow(False).check(select=["SW20"]).codes())
