from __future__ import annotations

import sys
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.cli.main import main
from tests.analysis._cases import a, bad_name, lookup, wf


def _codes(w: ss.Workflow, code: str) -> list[ss.Diagnostic]:
    return [d for d in w.check().diagnostics if d.code == code]


def test_long_agent_name_makes_an_invalid_handoff_name() -> None:
    long = a("x" * 60)
    (d,) = _codes(wf("a", a(handoffs=[long])), "SW301")
    assert d.location.path == "agents.a.handoffs[0]" and "longer than 64" in d.message


def test_a_shared_invalid_tool_is_reported_once() -> None:
    w = wf("a", a(tools=[bad_name], handoffs=[a("b", tools=[bad_name])]))
    (d,) = _codes(w, "SW301")
    assert d.location.path == "agents.a.tools[0]"


def test_agent_tool_name_and_explicit_handoff_name_are_checked() -> None:
    w = wf("a", a(tools=[a("b").as_tool("bad name!", "B")],
                  handoffs=[ss.handoff(a("c"), tool_name="é")]))
    assert {d.location.path for d in _codes(w, "SW301")} == {
        "agents.a.agent_tools[0]", "agents.a.handoffs[0]"}


def test_collision_between_a_handoff_and_a_function_tool() -> None:
    w = wf("a", a(tools=[lookup], handoffs=[ss.handoff(a("b"), tool_name="lookup")]))
    (d,) = _codes(w, "SW302")
    assert d.location.path == "agents.a.handoffs[0]"
    assert "agents.a.tools[0]" in d.message


def test_normalised_names_collide_inside_one_agent() -> None:
    w = wf("a", a(handoffs=[a("Billing Agent"), a("billing-agent")]))
    assert _codes(w, "SW302") and _codes(w, "SW106")


def test_a_docstring_entry_for_a_missing_parameter_is_reported_at_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "typo_tools.py").write_text(
        "import stepswitch as ss\n"
        "\n"
        "@ss.function_tool\n"
        "def lookup_order(order_id: int, verbose: bool = False) -> str:\n"
        '    """Look up an order.\n'
        "\n"
        "    Args:\n"
        "        ordr_id: The order number.\n"
        "        colour: Nothing like any parameter.\n"
        "        verbose: Say more.\n"
        '    """\n'
        "    return str(order_id)\n"
        "\n"
        "a = ss.Agent(name='a', instructions='x', tools=[lookup_order])\n"
        "wf = ss.Workflow(name='w', entry=a)\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["check", "typo_tools.py"])
    finally:
        sys.modules.pop("typo_tools", None)
    out = capsys.readouterr().out
    assert code == 0  # a warning: the workflow runs, the description is lost
    lines = [line for line in out.splitlines() if "SW305" in line]
    assert len(lines) == 2, out
    assert all(line.startswith("typo_tools.py:4:1: SW305 [warning]") for line in lines)
    (typo,) = [line for line in lines if "parameter 'ordr_id'" in line]
    (other,) = [line for line in lines if "parameter 'colour'" in line]
    assert "did you mean 'order_id'?" in typo and "did you mean" not in other
    assert "verbose" not in "".join(lines)
