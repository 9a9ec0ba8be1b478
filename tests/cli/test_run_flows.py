"""``stepswitch run`` on flows, where a new user met them (trial 2): a saved flow state
either resumes or says in one line why it cannot; an entry input that does not fit is
one line naming the entry, its type and each bad field; a flow of steps only needs no
model or API key."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.cli.main import main
from stepswitch.runtime.state_json import _digest
from tests._paths import ROOT
from tests.cli.conftest import run_main

APP = textwrap.dedent('''
    import os

    from pydantic import BaseModel

    import stepswitch as ss

    class Order(BaseModel):
        order_id: int
        qty: int

    @ss.step
    def price(o: Order) -> float:
        """Price it."""
        if os.environ.get("WAREHOUSE") == "offline":
            raise ValueError("warehouse offline")
        return o.qty * 9.5

    @ss.step
    def fmt(p: float) -> str:
        """Format it."""
        return f"${p:.2f}"

    pricing = ss.Workflow("pricing", price, flow=[ss.then(price, fmt), ss.then(fmt, ss.END)])

    @ss.step
    def bump(n: int) -> int:
        """One more."""
        return n + 1

    def small(n: int) -> bool:
        return n < 10

    counter = ss.Workflow("counter", bump, flow=[
        ss.branch(bump, when=small, then=bump, otherwise=ss.END, max_uses=2),
    ])

    @ss.step
    def shout(s: str) -> str:
        """Loud."""
        return s.upper()

    @ss.step
    def liar(s: str) -> int:
        """Says it counts."""
        return "not an int"

    @ss.step
    def double(n: int) -> str:
        """Twice."""
        return str(n * 2)

    liars = ss.Workflow("liars", shout, flow=[
        ss.then(shout, liar), ss.then(liar, double), ss.then(double, ss.END)])

    class Blob:
        """A value with no JSON form (fine in process, not in a saved state)."""
        def __init__(self, text: str) -> None:
            self.text = text

    @ss.step
    def wrap(s: str) -> Blob:
        """Wrap it."""
        return Blob(s)

    @ss.step
    def unwrap(b: Blob) -> str:
        """Unwrap it."""
        return b.text

    blobs = ss.Workflow("blobs", wrap, flow=[ss.then(wrap, unwrap), ss.then(unwrap, ss.END)])
''')


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / _module(tmp_path)).write_text(APP)
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "STEPSWITCH_MODEL", "WAREHOUSE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    return tmp_path


def _module(app: Path) -> str:
    """A module name of its own per test: the CLI refuses two files of one name."""
    return f"{app.name.replace('-', '_')}_flows.py"


def run(app: Path, name: str, *argv: str, capsys: pytest.CaptureFixture[str],
        model: bool = True) -> tuple[int, str, str]:
    """``stepswitch run`` of ``name``, on an empty script unless ``model`` is False."""
    script = app / "empty.json"
    script.write_text("[]")
    given = ["--model", f"scripted:{script}"] if model else []
    code = main(["run", f"{_module(app)}:{name}", *argv, *given])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def one_error_line(err: str) -> str:
    """The one ``stepswitch: error:`` line of ``err``, with no pydantic dump around it."""
    lines = [line for line in err.splitlines() if line.startswith("stepswitch: error:")]
    assert len(lines) == 1, err
    assert "pydantic" not in err and "validation error" not in err and "[type=" not in err
    return lines[0]


def test_a_flow_of_steps_runs_without_a_model_or_an_api_key(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(app, "pricing", "--input", '{"order_id": 1, "qty": 3}', capsys=capsys,
                         model=False)
    assert (code, out) == (0, "$28.50\n"), err
    assert err.splitlines()[-1].startswith("done: last step fmt, "), err


def test_an_entry_input_that_does_not_fit_is_one_line_naming_each_bad_field(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(app, "pricing", "--input", '{"order_id": "x"}', capsys=capsys)
    line = one_error_line(err)
    assert code == 2
    assert "flow entry 'price' takes Order (as JSON)" in line
    assert "order_id: Input should be a valid integer" in line and "(got 'x')" in line
    assert "qty: Field required" in line
    code, _, err = run(app, "pricing", "--input", "three please", capsys=capsys)
    assert code == 2
    assert "Invalid JSON" in one_error_line(err)


def test_a_failed_entry_step_resumes_by_parsing_the_original_input_again(
    app: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = app / "b.json"
    monkeypatch.setenv("WAREHOUSE", "offline")
    code, _, err = run(app, "pricing", "--input", '{"order_id": 1, "qty": 3}',
                       "--state", str(state), capsys=capsys)
    assert code == 1 and "ValueError: warehouse offline" in err
    assert f"retry with --resume {state}" in err
    monkeypatch.setenv("WAREHOUSE", "online")
    code, out, err = run(app, "pricing", "--resume", str(state), capsys=capsys)
    assert (code, out) == (0, "$28.50\n"), err


def test_resuming_a_finished_flow_says_so_in_one_line(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = app / "done.json"
    code, out, err = run(app, "pricing", "--input", '{"order_id": 1, "qty": 2}',
                         "--state", str(state), capsys=capsys)
    assert (code, out) == (0, "$19.00\n") and "saved the finished run" in err
    code, out, err = run(app, "pricing", "--resume", str(state), capsys=capsys)
    assert (code, out) == (2, "")
    assert one_error_line(err) == (
        f"stepswitch: error: --resume {state}: the saved run already finished (resuming it "
        "would run it again); start a new run with --input")


def test_a_finished_flow_state_is_refused_by_the_runtime_too(app: Path) -> None:
    sys.path.insert(0, str(app))
    try:
        module = __import__(_module(app)[:-3])
    finally:
        sys.path.remove(str(app))
    machine = module.pricing.compile()
    result = machine.run_sync('{"order_id": 1, "qty": 2}')
    state = ss.RunState.from_json(result.to_state().to_json())
    assert state.status == "finished"
    with pytest.raises(ss.UserError, match="already finished") as caught:
        machine.run_sync(state)
    assert "\n" not in str(caught.value)


def test_a_spent_flow_budget_names_the_edge_and_offers_no_retry(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = app / "loop.json"
    code, _, err = run(app, "counter", "--input", "0", "--state", str(state), capsys=capsys)
    assert code == 1
    line = one_error_line(err)
    assert "flow edge bump → bump was taken 2 time(s)" in line
    assert f"max_uses=2 at {_module(app)}:" in line  # the edge's own file:line
    assert "--max-turns" not in err and "retry with" not in err
    assert "it cannot be resumed" in err and "start a new run with --input" in err
    # resuming it anyway: one line, the file left as it was
    saved = state.read_text()
    code, out, err = run(app, "counter", "--resume", str(state), capsys=capsys)
    assert (code, out) == (2, "")
    line = one_error_line(err)
    assert "flow edge bump → bump had used up its max_uses" in line
    assert f"raise max_uses at {_module(app)}:" in line
    assert state.read_text() == saved


@pytest.mark.parametrize("tamper", ["drop", "number"])
def test_a_tampered_spent_state_still_fails_closed_in_one_line(
    app: Path, capsys: pytest.CaptureFixture[str], tamper: str
) -> None:
    state = app / "loop.json"
    run(app, "counter", "--input", "0", "--state", str(state), capsys=capsys)
    doc = json.loads(state.read_text())
    flow = doc["body"]["flow"]
    assert flow["spent"] == "bump->bump"
    if tamper == "drop":
        del flow["spent"]  # the node's input is gone too: it cannot resume either
    else:
        flow["spent"] = 7
    doc["digest"] = _digest(doc["body"], None)  # an edit that even fixed the digest
    state.write_text(json.dumps(doc))
    code, out, err = run(app, "counter", "--resume", str(state), capsys=capsys)
    assert (code, out) == (2, "")
    line = one_error_line(err)
    assert ("does not fit" in line) if tamper == "drop" else ("spent" in line)


def test_a_step_that_returns_another_type_than_its_annotation_fails_the_run(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = app / "liar.json"
    code, out, err = run(app, "liars", "--input", "hi", "--state", str(state), capsys=capsys)
    assert (code, out) == (2, "")
    line = one_error_line(err)
    assert line == (f"stepswitch: error: step 'liar' at {_line_of(app, 'def liar')} returned str, "
                    "but is annotated -> int")
    # the run so far is saved, at the step that lied: resuming runs it again
    doc = json.loads(state.read_text())["body"]
    assert doc["flow"]["node"] == "liar" and doc["flow"]["value"] == "HI"
    # a resume would meet the same mistake: the fix first (a retry alone is no use)
    assert f"once the cause is fixed, resume with --resume {state}" in err


def test_a_generated_runner_checks_step_outputs_the_same(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = app / "gen_liars.py"
    assert main(["compile", f"{_module(app)}:liars", "-o", str(runner)]) == 0
    capsys.readouterr()
    sys.path.insert(0, str(app))
    try:
        generated = __import__("gen_liars")
        module = sys.modules[_module(app)[:-3]]
    finally:
        sys.path.remove(str(app))
    for machine in (generated.MACHINE, module.liars.compile()):
        with pytest.raises(ss.UserError) as caught:
            machine.run_sync("hi")
        assert str(caught.value) == (f"step 'liar' at {_line_of(app, 'def liar')} returned "
                                     "str, but is annotated -> int")
        assert caught.value.run_data.to_state().flow.node == "liar"  # type: ignore[attr-defined]


def _line_of(app: Path, text: str) -> str:
    """``file:line`` of ``text`` in the app."""
    lines = APP.splitlines()
    at = next(i for i, line in enumerate(lines, 1) if line.startswith(text))
    return f"{_module(app)}:{at}"


def test_a_flow_of_values_without_json_runs_and_only_saving_it_is_refused(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process a flow's values are Python objects: nothing asks them for JSON until
    its state is saved, and then the refusal is one line naming the node."""
    code, out, err = run(app, "blobs", "--input", "hi", capsys=capsys, model=False)
    assert (code, out) == (0, "hi\n"), err
    code, _, err = run(app, "blobs", "--input", "hi", "--state", "run.json", capsys=capsys,
                       model=False)
    assert code == 2
    assert one_error_line(err).startswith(
        "stepswitch: error: flow 'blobs': the value at node 'unwrap' has no JSON form, so "
        "the run's state cannot be saved")


_FAN_APP = '''
import stepswitch as ss
from tests.runtime.test_flow_runtime import EchoModel, joined, publish, split

gated = ss.Agent("gated", "Translate.", tools=[publish])
fan = ss.Workflow("fan", split, flow=[
    ss.fan_out(split, over="items", each=gated, then=joined, max_items=4, concurrency=2),
    ss.then(joined, ss.END),
])
model = EchoModel()
'''


def test_a_pause_in_a_fan_out_branch_says_which_branch_waits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fan_pause_app.py").write_text(_FAN_APP)
    monkeypatch.chdir(ROOT)
    app = tmp_path / "fan_pause_app.py"
    code, _, err = run_main(["run", f"{app}:fan", "--input", "a gate c", "--model",
                             f"{app}:model", "--approve", "none", "--state",
                             str(tmp_path / "s.json")], capsys)
    assert code == 0, err
    [line] = [x for x in err.splitlines() if "publish(" in x and "by gated" in x]
    assert line.endswith("by gated in fan-out branch 2 ('gated')"), line
