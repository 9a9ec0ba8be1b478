"""RunConfig(max_cost_usd=): reported usage priced after each call; past the ceiling the
run stops with CostLimitExceeded and keeps the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.context import Usage
from stepswitch.errors import RunLimitError, UserError
from stepswitch.runtime.model import ModelResponse
from stepswitch.testing import ScriptedModel, assistant_message, function_call
from tests._paths import ROOT

SPENT: list[int] = []


@ss.function_tool
def work(n: int) -> str:
    """Do some work."""
    SPENT.append(n)
    return "done"


def _machine() -> ss.StateMachine:
    agent = ss.Agent("a", "Work.", tools=[work])
    return ss.Workflow("w", agent, [agent]).compile()


def _reply(item: object, tokens_in: int, tokens_out: int) -> ModelResponse:
    return ModelResponse(output=(item,), usage=Usage(1, tokens_in, tokens_out,  # type: ignore[arg-type]
                                                     tokens_in + tokens_out))


def test_stops_past_the_ceiling_and_keeps_the_run() -> None:
    SPENT.clear()
    # gpt-4.1: $2 in / $8 out per 1M. Call 1: 1000 in + 100 out = $0.0028; call 2 the same
    script = [_reply(function_call("work", {"n": 1}), 1000, 100),
              _reply(function_call("work", {"n": 2}), 1000, 100),
              _reply(assistant_message("ok"), 10, 10)]
    with pytest.raises(ss.CostLimitExceeded) as caught:
        _machine().run_sync("go", model=ScriptedModel(script, name="gpt-4.1"),
                            run_config=ss.RunConfig(max_cost_usd=0.005))
    exc = caught.value
    assert isinstance(exc, RunLimitError)
    assert exc.spent == pytest.approx(0.0056) and exc.limit == 0.005
    assert SPENT == [1]  # the second call's tools never ran
    assert exc.run_data is not None
    assert [i.type for i in exc.run_data.new_items][:2] == ["tool_call_item",
                                                            "tool_call_output_item"]


def test_under_the_ceiling_the_run_ends_normally() -> None:
    script = [_reply(function_call("work", {"n": 1}), 1000, 100),
              _reply(assistant_message("ok"), 10, 10)]
    result = _machine().run_sync("go", model=ScriptedModel(script, name="gpt-4.1"),
                                 run_config=ss.RunConfig(max_cost_usd=0.01))
    assert result.final_output == "ok"


def test_unpriced_model_and_bad_ceiling_are_user_errors() -> None:
    with pytest.raises(UserError, match="max_cost_usd must be a positive number"):
        ss.RunConfig(max_cost_usd=0)
    with pytest.raises(UserError, match="not in the price table"):
        _machine().run_sync("go", model=ScriptedModel([assistant_message("x")], name="nope"),
                            run_config=ss.RunConfig(max_cost_usd=1.0))


def test_cli_run_max_cost_stops_the_run(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "import stepswitch as ss\n"
        "from stepswitch.context import Usage\n"
        "from stepswitch.runtime.model import ModelResponse\n"
        "from stepswitch.testing import ScriptedModel, function_call, assistant_message\n"
        "@ss.function_tool\n"
        "def work(n: int) -> str:\n"
        "    '''Work.'''\n"
        "    return 'done'\n"
        "a = ss.Agent('a', 'Work.', tools=[work])\n"
        "app = ss.Workflow('app', a, [a])\n"
        "big = Usage(1, 100000, 10000, 110000)\n"
        "model = ScriptedModel([ModelResponse((function_call('work', {'n': 1}),), big),\n"
        "                       ModelResponse((assistant_message('ok'),), big)], "
        "name='gpt-4.1')\n")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "stepswitch", "run", "app.py:app", "--input",
                          "go", "--model", "app.py:model", "--max-cost", "0.2"], cwd=tmp_path,
                         capture_output=True, text=True, env=env)
    # $0.28 per call (100k in at $2/1M, 10k out at $8/1M): the first call passes 0.2
    assert out.returncode != 0, out.stdout
    assert "max_cost_usd" in out.stderr and "Traceback" not in out.stderr
    bad = subprocess.run([sys.executable, "-m", "stepswitch", "run", "app.py:app", "--input",
                          "go", "--max-cost", "-1"], cwd=tmp_path, capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and "--max-cost must be a positive" in bad.stderr


@ss.function_tool(needs_approval=True)
def gated(n: int) -> str:
    """Work, once a human says yes."""
    SPENT.append(n)
    return "done"


def test_the_spend_is_kept_across_a_pause_so_the_ceiling_holds_over_the_whole_run() -> None:
    SPENT.clear()
    agent = ss.Agent("a", "Work.", tools=[gated])
    machine = ss.Workflow("w", agent, [agent]).compile()
    config = ss.RunConfig(max_cost_usd=0.005)
    # $0.0028 before the pause; the state's JSON keeps it
    first = machine.run_sync("go", model=ScriptedModel(
        [_reply(function_call("gated", {"n": 1}), 1000, 100)], name="gpt-4.1"),
        run_config=config)
    state = first.to_state()
    assert state.spent_usd == pytest.approx(0.0028)
    state.approve(first.interruptions[0])
    loaded = ss.RunState.from_json(state.to_json())
    assert loaded.spent_usd == pytest.approx(0.0028)
    # another $0.0028 after the resume passes the ceiling: the run stops
    with pytest.raises(ss.CostLimitExceeded) as caught:
        machine.run_sync(loaded, model=ScriptedModel(
            [_reply(assistant_message("ok"), 1000, 100)], name="gpt-4.1"), run_config=config)
    assert caught.value.spent == pytest.approx(0.0056)
    assert SPENT == [1]


def test_prices_of_ones_own_price_a_model_the_shipped_table_lacks(tmp_path: Path) -> None:
    """RunConfig(prices=) prices a model over the shipped table, and `stepswitch run
    --max-cost` passes the project's [tool.stepswitch.prices], as `check` reads them
    for its bound (the ceiling ignored them and said to edit the installed package)."""
    script = [_reply(function_call("work", {"n": 1}), 1000, 100),
              _reply(function_call("work", {"n": 2}), 1000, 100),
              _reply(assistant_message("ok"), 10, 10)]
    config = ss.RunConfig(max_cost_usd=0.005, prices={"in-house": (2.0, 8.0)})
    with pytest.raises(ss.CostLimitExceeded) as caught:  # as gpt-4.1: $0.0028 a call
        _machine().run_sync("go", model=ScriptedModel(script, name="in-house"),
                            run_config=config)
    assert caught.value.spent == pytest.approx(0.0056)
    with pytest.raises(UserError, match=r"prices must be a mapping"):
        ss.RunConfig(max_cost_usd=1.0, prices={"m": (1.0,)})  # type: ignore[dict-item]
    (tmp_path / "app.py").write_text(
        "import stepswitch as ss\n"
        "from stepswitch.context import Usage\n"
        "from stepswitch.runtime.model import ModelResponse\n"
        "from stepswitch.testing import ScriptedModel, assistant_message\n"
        "a = ss.Agent('a', 'Work.')\n"
        "app = ss.Workflow('app', a, [a])\n"
        "model = ScriptedModel([ModelResponse((assistant_message('ok'),), "
        "Usage(1, 10, 10, 20))], name='in-house')\n")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-m", "stepswitch", "run", "app.py:app", "--input", "go",
            "--model", "app.py:model", "--max-cost", "1"]
    unpriced = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert unpriced.returncode == 2 and "[tool.stepswitch.prices]" in unpriced.stderr
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch.prices]\n"in-house" = { input = 2.0, output = 8.0 }\n')
    priced = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert priced.returncode == 0 and "ok" in priced.stdout, priced.stderr


def test_a_call_is_priced_under_the_model_its_agent_asks_for_and_refused_unsent_unpriced() -> None:
    """As `check` prices its bound: Agent(model="gpt-4.1") is priced as gpt-4.1 whatever
    model object answers (a scripted one in a test, a provider); a model with no price
    is refused before the call is made, not after it was paid for."""
    agent = ss.Agent("a", "Work.", model="gpt-4.1", tools=[work])
    machine = ss.Workflow("w", agent, [agent]).compile()
    script = [_reply(function_call("work", {"n": 1}), 1000, 100),
              _reply(assistant_message("ok"), 1000, 100)]
    with pytest.raises(ss.CostLimitExceeded) as caught:  # $0.0028 a call at gpt-4.1
        machine.run_sync("go", model=ScriptedModel(script, name="transcript"),
                         run_config=ss.RunConfig(max_cost_usd=0.005))
    assert caught.value.spent == pytest.approx(0.0056)
    model = ScriptedModel(script, name="transcript")
    with pytest.raises(UserError, match=r"the model 'transcript' is not in the price table.*"
                                        r"nothing was sent to it"):
        _machine().run_sync("go", model=model, run_config=ss.RunConfig(max_cost_usd=1.0))
    assert model.calls == []
