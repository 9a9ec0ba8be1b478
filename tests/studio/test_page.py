"""The studio page's data, without a browser: every gallery workflow builds, a trail in
the Responses format is cut into turns, a run of another workflow is refused, a large
scene is laid out without Graphviz, and ``--base REF`` reads the base from git."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.graph.spec import WorkflowSpec
from stepswitch.graph.workflow_graph import WorkflowGraph
from stepswitch.render.scene import build_scene
from stepswitch.studio.page import LARGE, _layered_svg, build_page, trace_turns, trail_turns
from tests._paths import ROOT
from tests.review._trial import trial
from tests.studio.conftest import POLICY_FAILS

SUPPORT = str(ROOT / "graphs" / "support.py") + ":support"


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "graphs").glob("*.py")
                                        if p.stem != "__init__"))
def test_every_gallery_workflow_builds_a_page(name: str) -> None:
    doc = build_page([str(ROOT / "graphs" / f"{name}.py")])
    assert doc["workflows"]
    for w in doc["workflows"]:
        assert w["svg"].startswith("<svg")
        assert json.loads(json.dumps(w))  # all of it is JSON
        for agent in w["agents"].values():
            assert set(agent) >= {"tools", "handoffs", "agent_tools", "guardrails", "pauses"}


def test_a_responses_trail_is_cut_into_turns(tmp_path: Path) -> None:
    trail = tmp_path / "run.json"
    trail.write_text(json.dumps([
        {"role": "user", "content": "refund order 42"},
        {"type": "function_call", "call_id": "c1", "name": "lookup_order",
         "arguments": "{\"order_id\": 42}"},
        {"type": "function_call_output", "call_id": "c1", "output": "order 42: shipped"},
        {"type": "function_call", "call_id": "c2", "name": "transfer_to_refund",
         "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": "{\"assistant\": \"refund\"}"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Done."}]},
    ]))
    doc = build_page([SUPPORT], [str(trail)])
    w = doc["workflows"][0]
    (run,) = w["trails"]
    assert run["refused"] is None
    steps = [(t["step"], t["agent"]) for t in run["turns"]]
    assert steps == [("Input", "triage"), ("RunAgain", "triage"),
                     ("Handoff → refund", "triage"), ("Final", "refund")]
    assert run["turns"][1]["items"][0]["arguments"] == "{\"order_id\": 42}"
    assert run["turns"][3]["items"][0]["text"] == "Done."
    assert run["turns"][3]["path"] == [w["nodes"]["triage"], w["nodes"]["refund"]]
    assert str(trail.resolve()) in doc["watched"]


def test_a_state_of_another_workflow_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    subprocess.run([sys.executable, str(ROOT / "examples" / "support_run.py"), "--state",
                    str(state)], check=True, capture_output=True, cwd=ROOT)
    doc = build_page([SUPPORT])
    renamed = _spec_of(SUPPORT).model_copy(update={"name": "billing"})
    out = trail_turns(str(state), renamed, doc["workflows"][0]["nodes"])
    assert out["refused"] is not None
    assert "workflow 'support', not 'billing'" in out["refused"]
    assert out["turns"] == []


def test_a_run_record_file_and_case_are_cut_into_turns_like_its_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    trial(tmp_path, capsys, monkeypatch)
    target = str(tmp_path / "wf.py") + ":helpdesk"
    doc = build_page([target], ["hd_st.json", "rec.json", "cases/hd.trail.json"])
    state, recording, case = doc["workflows"][0]["trails"]
    assert state["refused"] is None and len(state["turns"]) == 3
    for run in (recording, case):
        assert run["refused"] is None and run["turns"] == state["turns"]
    assert recording["turns"][2]["items"][0]["text"] == "Shipped."
    other = build_page([str(tmp_path / "wf.py") + ":astool"], ["rec.json"])
    assert "workflow 'helpdesk', not 'astool'" in other["workflows"][0]["trails"][0]["refused"]


def _spec_of(target: str) -> WorkflowSpec:
    from stepswitch.targets.load import load_targets

    return load_targets([target])[0].workflow.to_spec()


def test_a_trail_that_is_not_one_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{\"not\": \"a trail\"}")
    (run,) = build_page([SUPPORT], [str(bad)])["workflows"][0]["trails"]
    assert run["refused"].startswith(f"{bad}: expected a saved run state")


def test_a_large_scene_is_laid_out_in_layers_without_overlap() -> None:
    import stepswitch as ss

    leaves = [ss.Agent(name=f"leaf_{i}", instructions="x") for i in range(LARGE + 10)]
    hub = ss.Agent(name="hub", instructions="route",
                   handoffs=[ss.handoff(a) for a in leaves])
    wf = ss.Workflow(name="wide", entry=hub, agents=[hub, *leaves])
    scene = build_scene(WorkflowGraph(wf.to_spec()))
    svg = _layered_svg(scene)
    titles = re.findall(r'<g class="node"><title>([^<]*)</title>', svg)
    assert len(titles) == len(scene.nodes)
    boxes = re.findall(r'<g class="node"><title>[^<]*</title><polygon [^>]*points="(\d+),(\d+) ',
                       svg)
    assert len(set(boxes)) == len(boxes)  # no two boxes at one place
    assert svg.count('<g class="edge">') == len(scene.edges)


def test_base_ref_diffs_against_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a file name of its own: the page is built in this process, where an earlier test's
    # app.py may already hold the module name "app"
    repo = tmp_path / "repo"
    repo.mkdir()
    source = (ROOT / "graphs" / "support.py").read_text()
    (repo / "studio_base_app.py").write_text(source)

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo,
                       check=True, capture_output=True)

    git("init", "-q")
    git("add", "studio_base_app.py")
    git("commit", "-qm", "base")
    (repo / "studio_base_app.py").write_text(source.replace('ss.handoff("triage", max_uses=2)',
                                                'ss.handoff("triage", max_uses=5)'))
    monkeypatch.chdir(repo)
    doc = build_page(["studio_base_app.py:support"], base="HEAD")
    diff = doc["workflows"][0]["diff"]
    assert diff["base"] == "studio_base_app.py:support@HEAD"
    assert [c["path"] for c in diff["changes"]] == [
        "agents.refund.handoffs.transfer_to_triage.max_uses"]
    assert diff["nodes"] == {doc["workflows"][0]["nodes"]["refund"]: "safety"}


def test_a_trace_is_cut_into_turns_and_one_of_another_workflow_refused(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    subprocess.run([sys.executable, "-m", "stepswitch", "run", SUPPORT, "--model",
                    f"scripted:{ROOT / 'examples' / 'support_script.json'}", "--input",
                    "I want a refund", "--approve", "all", "--trace", str(trace)],
                   check=True, capture_output=True, cwd=ROOT)
    doc = build_page([SUPPORT], traces=[str(trace)])
    (run,) = doc["workflows"][0]["trails"]
    assert run["refused"] is None
    assert [(t["step"], t["agent"]) for t in run["turns"]] == [
        ("RunAgain", "triage"), ("Handoff → refund", "triage"), ("Interruption", "refund"),
        ("Final", "refund")]
    kinds = [(i["kind"], i["name"]) for i in run["turns"][2]["items"]]
    assert ("approval.requested", "process_refund") in kinds
    assert ("call", "process_refund") in kinds
    renamed = _spec_of(SUPPORT).model_copy(update={"name": "billing"})
    out = trace_turns(str(trace), renamed, {})
    assert out["refused"] is not None and "workflow 'support', not 'billing'" in out["refused"]


def test_a_failing_policy_through_a_handoff_carries_its_path(tmp_path: Path) -> None:
    file = tmp_path / "policy.py"
    file.write_text(POLICY_FAILS)
    w = build_page([f"{file}:wf"])["workflows"][0]
    (f,) = [f for f in w["findings"] if f["code"] == "SW801"]
    front, back = w["nodes"]["front"], w["nodes"]["back"]
    assert [(s["message"], s["node"], s["edge"]) for s in f["trace"]] == [
        ("agent 'front'", front, None),
        ("hands off to 'back' (transfer_to_back)", front, f"{front}->{back}"),
        ("calls refund", back, None)]
    declared = POLICY_FAILS.splitlines().index("@ss.function_tool") + 2
    assert f["trace"][2]["location"] == f"{file}:{declared}"  # where refund is declared
    assert f["lights"] == [front, f"{front}->{back}", back]
    assert w["nodes"]["side"] not in f["lights"]
    assert all(g["trace"] == [] and g["lights"] == [] for g in w["findings"] if g is not f)


def test_an_empty_run_is_refused_not_a_page_with_no_turn_to_show(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    trace = tmp_path / "empty.jsonl"
    trace.write_text("")
    doc = build_page([SUPPORT], [str(empty)], traces=[str(trace)])
    runs = doc["workflows"][0]["trails"]
    assert [r["turns"] for r in runs] == [[], []]
    assert all(r["refused"] for r in runs)
    assert "holds no turns" in runs[0]["refused"]


def test_a_module_the_workflow_imports_is_watched_not_the_librarys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "studio_watch_agents_mod.py").write_text(
        "import stepswitch as ss\nhelper = ss.Agent('helper', 'Help.')\n")
    (tmp_path / "studio_watch_wf.py").write_text(
        "import stepswitch as ss\nfrom studio_watch_agents_mod import helper\n"
        "wf = ss.Workflow('w', helper, [helper])\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    doc = build_page([str(tmp_path / "studio_watch_wf.py") + ":wf"])
    assert doc["watched"] == sorted(str((tmp_path / n).resolve()) for n in
                                    ("studio_watch_agents_mod.py", "studio_watch_wf.py"))
