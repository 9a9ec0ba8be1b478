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
