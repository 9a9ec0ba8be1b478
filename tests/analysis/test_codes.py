"""The registry: every code has a page, a failing case and a passing case."""

from __future__ import annotations

import re

import pytest

from stepswitch.analysis import CODES, code_doc
from stepswitch.analysis.codes import GROUPS, RETIRED, invalid_prefixes, matches_any
from tests.analysis._cases import CASES


def test_codes_are_well_formed_and_grouped() -> None:
    for code, entry in CODES.items():
        assert re.fullmatch(r"SW[1-9]\d\d", code)
        assert entry.code == code
        assert code[:3] in GROUPS
        assert re.fullmatch(r"[a-z0-9-]+", entry.name)
    names = [c.name for c in CODES.values()]
    assert len(names) == len(set(names))
    assert not RETIRED & set(CODES)


def test_every_code_has_a_failing_and_a_passing_case() -> None:
    assert set(CASES) == set(CODES)


@pytest.mark.parametrize("code", sorted(CODES))
def test_failing_case_reports_the_code(code: str) -> None:
    failing, _ = CASES[code]
    report = failing().check()
    hits = [d for d in report.diagnostics if d.code == code]
    assert hits, f"{code} not reported: {[d.format_line() for d in report.diagnostics]}"
    for d in hits:
        assert d.severity == CODES[code].severity
        assert d.location.line > 0 and d.location.file.endswith("_cases.py")
    if CODES[code].severity == "error":
        assert not report.ok


@pytest.mark.parametrize("code", sorted(CODES))
def test_passing_case_does_not_report_the_code(code: str) -> None:
    _, passing = CASES[code]
    report = passing().check()
    assert code not in report.codes(), [d.format_line() for d in report.diagnostics]


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_has_a_documentation_page(code: str) -> None:
    page = code_doc(code)
    assert page.startswith(f"# {code} {CODES[code].name}\n")
    for section in ("## What it does", "## Why it matters", "## Example", "## Fix"):
        assert section in page, f"{code}: missing {section}"
    assert "```" in page


def test_prefix_matching() -> None:
    assert matches_any("SW201", ["SW2"])
    assert matches_any("SW201", ["SW201"])
    assert not matches_any("SW201", ["SW1", "SW202"])
    assert invalid_prefixes(["SW", "SW1", "SW201"]) == []
    assert invalid_prefixes(["SW0", "E501", "sw1", "SW2011"]) == ["SW0", "E501", "sw1", "SW2011"]


def test_unknown_code_has_no_page() -> None:
    with pytest.raises(KeyError):
        code_doc("SW999")
