"""``stepswitch diff`` on real material: consecutive versions of the support workflow
(tests/fixtures/review/support/vN/support.py, each a plausible pull request on
graphs/support.py), compared as files and as commits of a real temporary git repo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests._paths import ROOT
from tests.cli.conftest import run_main
from tests.render.mermaid_check import check as check_mermaid
from tests.render.mermaid_check import decode_label

VERSIONS = ROOT / "tests" / "fixtures" / "review" / "support"

# What each pull request changed, as (category, path): the whole expected diff.
EXPECTED: dict[tuple[int, int], set[tuple[str, str]]] = {
    (1, 2): {
        ("model", "agents.triage.instructions"),
        ("model", "agents.triage.tools.lookup_order.parameters"),
        ("structure", "agents.triage.tools.track_shipment"),
    },
    (2, 3): {
        ("safety", "agents.refund.tools.process_refund.needs_approval"),
        ("safety", "agents.refund.handoffs.transfer_to_triage.max_uses"),
        ("safety", "workflow.max_turns"),
        ("safety", "workflow.model_call_bound"),
    },
    (3, 4): {
        ("state", "agents.refunds"),
        ("state", "agents.triage.tools.track_shipment"),
        ("model", "agents.triage.handoffs.transfer_to_refunds.description"),
        ("structure", "agents.refunds.handoffs.transfer_to_triage.max_uses"),
        ("structure", "agents.refunds.tools.process_refund.needs_approval"),
        ("structure", "workflow.max_turns"),
        ("structure", "workflow.model_call_bound"),
    },
    (4, 5): {
        ("model", "agents.researcher.output_type"),
        ("structure", "agents.triage.agent_tools.research.max_turns"),
        ("structure", "agents.triage.input_guardrails.no_card_numbers"),
        ("structure", "workflow.model_call_bound"),
    },
    (5, 6): {
        ("safety", "agents.triage.input_guardrails.no_card_numbers"),
        ("cosmetic", "workflow.agents"),
    },
}
PAIRS = sorted(EXPECTED)


def _diff(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_main(["diff", *argv], capsys)


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = _diff([*argv, "--format", "json"], capsys)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _found(doc: dict[str, Any]) -> set[tuple[str, str]]:
    (pair,) = doc["pairs"]
    return {(c["category"], c["path"]) for c in pair["changes"]}


@pytest.fixture()
def in_versions(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(VERSIONS)
    return VERSIONS


@pytest.mark.parametrize("pair", PAIRS, ids=[f"v{a}-v{b}" for a, b in PAIRS])
def test_consecutive_versions_sort_every_change(
    pair: tuple[int, int], in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = pair
    doc = _json([f"v{a}/support.py:support", f"v{b}/support.py:support"], capsys)
    assert _found(doc) == EXPECTED[pair]


def test_text_groups_by_category_with_both_locations(
    in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _diff(["v3/support.py", "v4/support.py"], capsys)
    assert code == 0
    lines = out.splitlines()
    headers = [ln.strip() for ln in lines if ln.startswith("  ") and not ln.startswith("    ")]
    assert headers[0].startswith("state: ") and headers[1].startswith("model: ")
    assert headers[2].startswith("structure: ")
    rename = lines.index(next(ln for ln in lines if "renamed to 'refunds'" in ln))
    # the refund agent is declared at line 54 of v3 and line 44 of v4
    assert lines[rename + 1].split() == ["base", "v3/support.py:54", "head", "v4/support.py:44"]
    removed = lines.index(next(ln for ln in lines if "'track_shipment' of agent" in ln))
    assert lines[removed + 1].split() == ["base", "v3/support.py:33", "head", "-"]
    assert headers[-1] == "7 changes (2 state, 1 model, 0 safety, 4 structure, 0 cosmetic)"


def test_the_model_call_bound_comes_from_the_analyzer(
    in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _json(["v2/support.py", "v3/support.py"], capsys)
    (pair,) = doc["pairs"]
    assert pair["model_call_bound"] == {"base": 110, "head": 420}
    bound = next(c for c in pair["changes"] if c["path"] == "workflow.model_call_bound")
    assert bound["message"] == "worst-case model calls of a run grew: 110 → 420"


def test_fail_on_exits_one_only_for_the_named_categories(
    in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["v2/support.py", "v3/support.py"]
    assert _diff([*args, "--fail-on", "state,safety"], capsys)[0] == 1
    assert _diff([*args, "--fail-on", "state"], capsys)[0] == 0
    assert _diff([*args, "--fail-on", "all"], capsys)[0] == 1
    code, out, _ = _diff(["v1/support.py", "v2/support.py", "--fail-on", "state,safety"], capsys)
    assert code == 0 and "failed" not in out
    code, out, _ = _diff(["v3/support.py", "v4/support.py", "--fail-on", "state,safety"], capsys)
    assert code == 1 and out.endswith("failed: state changed (--fail-on)\n")


def test_unknown_fail_on_category_is_a_usage_error(
    in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _diff(["v1/support.py", "v2/support.py", "--fail-on", "state,saftey"],
                           capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "unknown category 'saftey'" in err
    assert err.rstrip().endswith(", or all")  # the word that takes every category


def test_identical_versions_have_no_changes(
    in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _diff(["v1/support.py", "v1/support.py", "--fail-on", "all"], capsys)
    assert code == 0
    assert "no changes" in out and "0 changes" in out


@pytest.mark.parametrize("pair", PAIRS, ids=[f"v{a}-v{b}" for a, b in PAIRS])
def test_mermaid_is_valid_and_styles_what_changed(
    pair: tuple[int, int], in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = pair
    code, out, _ = _diff([f"v{a}/support.py", f"v{b}/support.py", "--format", "mermaid"], capsys)
    assert code == 0
    parsed = check_mermaid(out)
    labels = {decode_label(raw).split("\n")[0]: node for node, raw in parsed.nodes.items()}
    if pair == (3, 4):
        renamed = labels["refund → refunds"]
        assert parsed.classes[renamed] == {"renamed"}
        triage = parsed.nodes[labels["triage"]]
        assert "- tool: track_shipment" in decode_label(triage)
    if pair == (1, 2):
        assert "+ tool: track_shipment" in decode_label(parsed.nodes[labels["triage"]])
        assert "changed" in parsed.classes[labels["triage"]]
        assert labels["researcher"] not in parsed.classes


def test_mermaid_draws_removed_agents_and_edges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "a" / "flow.py"
    head = tmp_path / "b" / "flow.py"
    base.parent.mkdir()
    head.parent.mkdir()
    base.write_text(textwrap.dedent("""
        import stepswitch as ss
        gone = ss.Agent('say "hi" [x]', "Gone.")
        top = ss.Agent("top", "Top.", handoffs=[gone])
        wf = ss.Workflow(name="w", entry=top, agents=[top, gone])
    """))
    head.write_text(textwrap.dedent("""
        import stepswitch as ss
        new = ss.Agent("new|one", "Brand new.")
        top = ss.Agent("top", "Top.", handoffs=[new])
        wf = ss.Workflow(name="w", entry=top, agents=[top, new])
    """))
    code, out, _ = _diff([str(base), str(head), "--format", "mermaid"], capsys)
    assert code == 0
    parsed = check_mermaid(out)
    labels = {decode_label(raw): node for node, raw in parsed.nodes.items()}
    assert parsed.classes[labels['say "hi" [x]']] == {"removed"}
    assert parsed.classes[labels["new|one"]] == {"added"}
    styles = {i: style for idx, style in parsed.link_styles for i in idx}
    edges = {(parsed.nodes[s], parsed.nodes[d]): i for i, (s, _, d, _) in enumerate(parsed.edges)}
    to_new = edges[(parsed.nodes[labels["top"]], parsed.nodes[labels["new|one"]])]
    to_gone = edges[(parsed.nodes[labels["top"]], parsed.nodes[labels['say "hi" [x]']])]
    assert "#2e7d32" in styles[to_new] and "#c62828" in styles[to_gone]


def test_github_annotations_point_at_the_head_or_base_line(
    in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _diff(["v3/support.py", "v4/support.py", "--format", "github",
                          "--fail-on", "state"], capsys)
    assert code == 1
    notes = [ln for ln in out.splitlines() if ln.startswith("::")]
    assert len(notes) == 7
    rename = next(ln for ln in notes if "renamed to 'refunds'" in ln)
    assert rename.startswith("::error file=v4/support.py,line=44,title=stepswitch diff%3A state::")
    removed = next(ln for ln in notes if "track_shipment" in ln)
    assert removed.startswith("::error file=v3/support.py,line=33,")
    assert sum(ln.startswith("::warning ") for ln in notes) == 5


def test_each_side_imports_in_isolation(
    in_versions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # both files are the module `support`: each side must see its own
    before = set(sys.modules)
    doc = _json(["v1/support.py", "v6/support.py"], capsys)
    assert ("model", "agents.researcher.output_type") in _found(doc)
    assert "support" not in set(sys.modules) - before


def test_bad_target_on_one_side_is_one_line_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _diff([str(VERSIONS / "v1" / "support.py"), str(tmp_path / "nope.py")],
                           capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "no such file or folder" in err


# -- git:REF:TARGET ------------------------------------------------------------------------

GIT = ["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev",
       "-c", "commit.gpgsign=false"]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repo whose graphs/support.py went through v1..v6, one commit each, plus a
    seventh commit whose support.py no longer imports."""
    if shutil.which("git") is None:  # pragma: no cover - git is part of the machine
        pytest.skip("git is not installed")
    repo = tmp_path_factory.mktemp("repo")
    _git(repo, "init", "-q", "-b", "main")
    (repo / "graphs").mkdir()
    (repo / "graphs" / "__init__.py").write_text("")
    for n in range(1, 7):
        shutil.copy(VERSIONS / f"v{n}" / "support.py", repo / "graphs" / "support.py")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"v{n}")
        _git(repo, "tag", f"v{n}")
    (repo / "graphs" / "support.py").write_text("raise RuntimeError('half-done')\n")
    _git(repo, "commit", "-q", "-am", "broken")
    # the work tree holds v2 again, uncommitted: git sides must not see or touch it
    shutil.copy(VERSIONS / "v2" / "support.py", repo / "graphs" / "support.py")
    return repo


def _status(repo: Path) -> tuple[str, str, bytes]:
    return (_git(repo, "status", "--porcelain"), _git(repo, "rev-parse", "HEAD"),
            (repo / ".git" / "index").read_bytes())


@pytest.mark.parametrize("pair", PAIRS, ids=[f"v{a}-v{b}" for a, b in PAIRS])
def test_git_refs_give_the_same_diff_without_touching_the_work_tree(
    pair: tuple[int, int], history: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(history)
    before = _status(history)
    a, b = pair
    doc = _json([f"git:v{a}:graphs/support.py:support", f"git:v{b}:graphs/support.py"], capsys)
    assert _found(doc) == EXPECTED[pair]
    (found,) = doc["pairs"]
    assert found["base"] == f"graphs/support.py:support@v{a}"
    for c in found["changes"]:
        for side in ("base", "head"):
            if c[side] is not None:
                assert c[side]["file"] == "graphs/support.py"
    assert _status(history) == before
    assert (history / "graphs" / "support.py").read_text() == (
        VERSIONS / "v2" / "support.py"
    ).read_text()


def test_git_ref_against_the_work_tree_and_from_a_subfolder(
    history: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import graphs.support  # this repo's own: the sides must not pick it up

    monkeypatch.chdir(history)
    doc = _json(["git:v1:graphs/support.py", "graphs/support.py"], capsys)
    assert sys.modules["graphs.support"] is graphs.support
    assert _found(doc) == EXPECTED[(1, 2)]
    monkeypatch.chdir(history / "graphs")
    doc = _json(["git:v2:support.py", "git:v3:support.py"], capsys)
    assert _found(doc) == EXPECTED[(2, 3)]


def test_git_ref_that_does_not_exist_is_one_line_exit_two(
    history: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(history)
    code, out, err = _diff(["git:no-such-branch:graphs/support.py", "graphs/support.py"],
                           capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "no commit named 'no-such-branch'" in err


def test_target_that_fails_to_import_at_a_ref_names_the_side(
    history: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(history)
    code, out, err = _diff(["git:main:graphs/support.py", "graphs/support.py"], capsys)
    assert code == 2 and out == ""
    assert "graphs/support.py: importing it raised an exception" in err
    assert "RuntimeError: half-done" in err and "(at git main)" in err
    code, _, err = _diff(["git:v1:graphs/gone.py", "graphs/support.py"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "no such file or folder: graphs/gone.py (at git v1)" in err


def test_git_side_outside_a_repository_is_exit_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    code, _, err = _diff(["git:main:x.py", "x.py"], capsys)
    assert code == 2 and "is not inside a git repository" in err


def test_diff_as_a_subprocess(history: Path) -> None:
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "stepswitch", "diff", "git:v2:graphs/support.py",
         "git:v3:graphs/support.py", "--fail-on", "state,safety"],
        cwd=history, capture_output=True, text=True, env=env,
    )
    assert done.returncode == 1, done.stderr
    assert "safety: a safety property weakens (4)  [--fail-on]" in done.stdout


def test_flow_changes_of_the_judge_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (ROOT / "graphs" / "judge.py").read_text()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "judge.py").write_text(source)
    head = source.replace('ss.route(evaluator, on="score", max_uses=3,',
                          'ss.route(evaluator, on="score", max_uses=6,')
    head = head.replace('"pass": final_outline,', '"pass": ss.END,')
    head = head.replace("        ss.then(final_outline, ss.END),\n", "")
    assert head.count("max_uses=6") == 1 and "then(final_outline" not in head
    (tmp_path / "b" / "judge.py").write_text(head)
    doc = _json([str(tmp_path / "a" / "judge.py"), str(tmp_path / "b" / "judge.py")], capsys)
    assert _found(doc) == {
        ("state", "steps.final_outline"),
        ("safety", "flow.evaluator.max_uses"),
        ("safety", "workflow.model_call_bound"),  # three more rounds of the loop
        ("structure", "flow.evaluator"),
        ("structure", "flow.final_outline"),
    }
    code, out, _ = _diff([str(tmp_path / "a" / "judge.py"), str(tmp_path / "b" / "judge.py"),
                          "--format", "mermaid"], capsys)
    assert code == 0
    parsed = check_mermaid(out)
    labels = {decode_label(raw): node for node, raw in parsed.nodes.items()}
    assert parsed.classes[labels["step: final_outline"]] == {"removed"}
    assert "entry" in parsed.classes[labels["step: take_request"]]
    routes = [label for _, _, _, label in parsed.edges if label and label.startswith("score")]
    assert sorted(routes) == ["score = fail", "score = needs_improvement", "score = pass"]


def test_folders_pair_workflows_by_file_and_name(
    history: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # graphs/ at v1 holds support; the work tree adds a second workflow file
    monkeypatch.chdir(history)
    extra = history / "graphs" / "extra.py"
    extra.write_text("import stepswitch as ss\nsolo = ss.Agent('solo', 'Alone.')\n"
                     "extra = ss.Workflow(name='extra', entry=solo)\n")
    try:
        code, out, _ = _diff(["git:v1:graphs/", "graphs/", "--fail-on", "state"], capsys)
        assert code == 0
        assert "structure: workflow graphs/extra.py:extra added" in out
        assert "graphs/support.py:support@v1 → graphs/support.py:support" in out
        code, out, _ = _diff(["graphs/", "git:v1:graphs/", "--fail-on", "state",
                              "--format", "json"], capsys)
        assert code == 1
        doc = json.loads(out)
        lone = next(p for p in doc["pairs"] if p["head"] is None)
        assert lone["base"] == "graphs/extra.py:extra"
        assert lone["changes"][0]["category"] == "state" and doc["failed"] == ["state"]
    finally:
        extra.unlink()


def test_the_example_in_docs_review_is_real_output(
    history: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (ROOT / "docs" / "review.md").read_text()
    example = page.split("```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(history)
    code, out, _ = _diff(["git:v2:graphs/support.py:support", "git:v3:graphs/support.py",
                          "--fail-on", "state,safety"], capsys)
    assert code == 1
    assert out == example


def test_a_renamed_step_is_one_state_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two defs renamed in one PR, one of them next to a retuned budget: each is one
    # `state` rename (as an agent's is), not a removal, an addition and three edge edits
    source = (ROOT / "graphs" / "judge.py").read_text()
    head = (source.replace("final_outline", "finish").replace("with_feedback", "revise")
            .replace('ss.route(evaluator, on="score", max_uses=3,',
                     'ss.route(evaluator, on="score", max_uses=2,'))
    for side, text in (("a", source), ("b", head)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "judge.py").write_text(text)
    argv = [str(tmp_path / "a" / "judge.py"), str(tmp_path / "b" / "judge.py")]
    doc = _json(argv, capsys)
    assert _found(doc) == {
        ("state", "steps.finish"),
        ("state", "steps.revise"),
        ("structure", "flow.evaluator.max_uses"),
        ("structure", "workflow.model_call_bound"),
    }
    assert doc["pairs"][0]["renamed_steps"] == [["final_outline", "finish"],
                                                ["with_feedback", "revise"]]
    code, out, _ = _diff(argv, capsys)
    assert code == 0
    assert "steps.finish: step 'final_outline' renamed to 'finish'" in out
    code, out, _ = _diff([*argv, "--format", "mermaid"], capsys)
    parsed = check_mermaid(out)
    labels = {decode_label(raw): node for node, raw in parsed.nodes.items()}
    assert parsed.classes[labels["step: final_outline → finish"]] == {"renamed"}
    assert "step: final_outline" not in labels
    assert "removed" not in out  # no edge drawn out of the old name


def test_a_step_whose_edges_changed_too_is_not_taken_for_a_rename(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (ROOT / "graphs" / "judge.py").read_text()
    head = source.replace("final_outline", "finish").replace(
        "ss.then(finish, ss.END)", "ss.then(finish, story_outline_generator)")
    for side, text in (("a", source), ("b", head)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "judge.py").write_text(text)
    found = _found(_json([str(tmp_path / "a" / "judge.py"), str(tmp_path / "b" / "judge.py")],
                         capsys))
    assert ("state", "steps.final_outline") in found
    assert ("structure", "steps.finish") in found


def test_a_copy_under_another_module_name_compares_by_name_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # app_old.py beside app.py: the steps, predicates and types of the file are the same
    # ones; only the real edit (one budget) is reported
    monkeypatch.chdir(tmp_path)
    source = (ROOT / "graphs" / "judge.py").read_text()
    (tmp_path / "judge_old.py").write_text(source)
    (tmp_path / "judge_new.py").write_text(source.replace(
        'on="score", max_uses=3,', 'on="score", max_uses=2,'))
    doc = _json(["judge_old.py:judge", "judge_new.py:judge"], capsys)
    assert _found(doc) == {("structure", "flow.evaluator.max_uses"),
                           ("structure", "workflow.model_call_bound")}
    # a real change of a referenced function still shows, by its name in the file
    other = source.replace("@ss.step\ndef final_outline(",
                           "@ss.step(name='final_outline')\ndef outline_final(")
    other = other.replace("\njudge = ss.Workflow(",
                          "\nfinal_outline = outline_final\njudge = ss.Workflow(")
    (tmp_path / "judge_new.py").write_text(other)
    code, out, err = _diff(["judge_old.py:judge", "judge_new.py:judge"], capsys)
    assert code == 0, err
    assert "step 'final_outline' runs another function: final_outline → outline_final" in out
    assert out.count("\n    ") == 2  # that change and its two locations, nothing else


_GATED_APP = '''
import stepswitch as ss

@ss.function_tool
def wire_money(amount: int) -> str:
    """Wire money."""
    return "sent"

front = ss.Agent("front", "f", tools=[wire_money])
app = ss.Workflow("app", front, [front])
'''


def test_each_git_side_proves_the_policies_of_its_own_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rule is removed from pyproject.toml in the head commit: a safety change. Both
    sides read the work tree's pyproject before, which said "no changes"."""
    if shutil.which("git") is None:  # pragma: no cover - git is part of the machine
        pytest.skip("git is not installed")
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "app.py").write_text(_GATED_APP)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [{ rule = "forbid", tool_or_agent = "wire_money" }]\n')
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "a rule")
    (tmp_path / "pyproject.toml").write_text("[tool.stepswitch]\npolicies = []\n")
    _git(tmp_path, "commit", "-q", "-am", "the rule dropped")
    monkeypatch.chdir(tmp_path)
    doc = _json(["git:HEAD~1:app.py:app", "git:HEAD:app.py:app"], capsys)
    (pair,) = doc["pairs"]
    said = [(c["category"], c["message"]) for c in pair["changes"]]
    assert ("safety", "policy forbid('wire_money') removed: it is no longer proved") in said, said
    # the work tree (no rule now) against the commit that had it: the same change
    doc = _json(["git:HEAD~1:app.py:app", "app.py:app"], capsys)
    assert any(c["category"] == "safety" for c in doc["pairs"][0]["changes"])
    # the same table on both sides: no change
    doc = _json(["git:HEAD:app.py:app", "app.py:app"], capsys)
    assert doc["pairs"][0]["changes"] == []
