from __future__ import annotations

import pytest

from stepswitch.analysis import CODES, code_doc
from stepswitch.cli.main import main


def test_explain_prints_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "sw201"]) == 0
    assert capsys.readouterr().out == code_doc("SW201")


def test_explain_lists_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain"]) == 0
    out = capsys.readouterr().out
    assert all(code in out for code in CODES)
    assert "SW2xx termination" in out


def test_unknown_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "SW999"]) == 2
    assert "unknown code" in capsys.readouterr().err


def test_unknown_code_is_worded_as_every_commands_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", "SW999"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stepswitch: error: unknown code 'SW999' (run `stepswitch explain`")
    assert "did you mean" not in err  # a wrong number is near no one code


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("SW2O1", "SW201 (unbudgeted-handoff-cycle)"),
     ("unbudgeted-handof-cycle", "SW201 (unbudgeted-handoff-cycle)")],
)
def test_a_typo_gets_a_did_you_mean(
    capsys: pytest.CaptureFixture[str], typed: str, meant: str
) -> None:
    assert main(["explain", typed]) == 2
    assert f"did you mean {meant}?" in capsys.readouterr().err


def test_a_codes_name_prints_its_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "unbudgeted-handoff-cycle"]) == 0
    assert capsys.readouterr().out == code_doc("SW201")


@pytest.mark.parametrize("prefix", ["SW2", "sw2xx"])
def test_a_prefix_lists_its_codes_as_select_takes_them(
    capsys: pytest.CaptureFixture[str], prefix: str
) -> None:
    assert main(["explain", prefix]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SW2xx termination\n")
    listed = [line.split()[0] for line in out.splitlines()[1:]]
    assert listed == sorted(c for c in CODES if c.startswith("SW2"))


def test_an_empty_code_lists_them_all_in_code_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", " "]) == 0
    out = capsys.readouterr().out
    groups = [line.split()[0] for line in out.splitlines() if not line.startswith(" ")]
    sw = [g for g in groups if g.startswith("SW")]
    assert sw == sorted(sw)  # SW8xx before SW9xx
    assert "TR1xx" in groups and "RP1xx" in groups
