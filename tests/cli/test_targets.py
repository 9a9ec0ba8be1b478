"""TARGET resolution: every way of naming a workflow, and a clear exit 2 for each mistake."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._paths import ROOT
from tests.cli.conftest import run_main


def test_show_by_file_and_name(in_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["show", "graphs/support.py:support"], capsys)
    assert code == 0
    assert "graphs/support.py:support" in out
    assert "triage ─handoff→ refund via transfer_to_refund" in out
    assert "refund ─handoff→ triage via transfer_to_triage (max_uses=2)" in out
    assert "process_refund  [needs approval]" in out


def test_show_by_module_and_by_folder(in_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["show", "graphs.support:support"], capsys)
    assert code == 0 and "3 agent(s)" in out
    code, out, _ = run_main(["show", "graphs"], capsys)
    assert code == 0 and "graphs/support.py:support" in out


def test_show_lists_a_flows_steps_and_edges(
    in_root: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_main(["show", "graphs/story.py:story", "graphs/translation.py"], capsys)
    assert code == 0
    assert "flow: 6 edge(s), 3 step(s)" in out
    assert "step outline_for_writer: OutlineCheckerOutput → str" in out
    assert ("outline_checker_agent ─branch→ outline_for_writer when is_good_scifi, "
            "otherwise stop_here") in out
    assert "story_agent ─then→ END" in out
    assert ("three_attempts ─fan_out texts, at most 3→ spanish_agent each, then "
            "list_translations") in out
    # story's agents have no handoffs or agent tools: no empty "edges:" heading
    story = out.split("graphs/translation.py")[0]
    assert "edges:" not in story, story
    code, out, _ = run_main(["show", "graphs/support.py:support"], capsys)
    assert "flow:" not in out and "  edges:\n    triage" in out


def test_show_says_a_lone_agent_has_no_edges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lone_agent_wf.py").write_text(
        "import stepswitch as ss\n"
        "a = ss.Agent(name='a', instructions='x')\n"
        "wf = ss.Workflow(name='w', entry=a)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    try:
        code, out, _ = run_main(["show", "lone_agent_wf.py"], capsys)
    finally:
        sys.modules.pop("lone_agent_wf", None)
    assert code == 0 and out.rstrip().endswith("  edges: none"), out


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nowhere/file.py:wf", "no such file or folder"),
        ("graphs/support.py:nothing", "has no attribute 'nothing'"),
        ("graphs/support.py:triage", "is an Agent, not a Workflow"),
        ("graphs/support.py:lookup_order", "is a FunctionTool, not a Workflow"),
        ("no_such_pkg.mod:wf", "no module named 'no_such_pkg.mod'"),
        ("graphs/support.py:support:extra", "a TARGET names one workflow at most"),
        # an existing file that is not Python: named as such, not as a missing module
        ("examples/support_script.json", "examples/support_script.json is not a Python "
         "file (a saved run or a recording is read by `stepswitch trail FILE`"),
        ("README.md:x", "README.md is not a Python file; a TARGET is FILE.py[:NAME]"),
    ],
)
def test_bad_targets_exit_2_with_one_line(
    in_root: None, capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    code, _, err = run_main(["show", target], capsys)
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_target_of_another_type_is_named_with_its_article(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "values_mod_x2.py", "n = 1\ns = 'x'\nlst = []\nd = {}\n")
    for name, shown in [("n", "an int"), ("s", "a str"), ("lst", "a list"), ("d", "a dict")]:
        code, _, err = run_main(["show", f"{path}:{name}"], capsys)
        assert code == 2
        assert f"{name!r} is {shown}, not a Workflow" in err


def test_folder_without_workflows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "empty_mod_x1.py", "X = 1\n")
    code, _, err = run_main(["show", str(tmp_path)], capsys)
    assert code == 2
    assert "no Workflow or SDK agent found" in err


def test_exception_in_user_module_is_shown_as_theirs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        "exploding_mod_x2.py",
        """
        def helper():
            raise RuntimeError("boom in user code")
        helper()
        """,
    )
    code, _, err = run_main(["show", f"{path}:wf"], capsys)
    assert code == 2
    assert "in your code, not in stepswitch" in err
    assert "exploding_mod_x2.py" in err
    assert "RuntimeError: boom in user code" in err
    assert "stepswitch/cli" not in err


def test_syntax_error_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "broken_syntax_x3.py", "def f(:\n")
    code, _, err = run_main(["show", str(path)], capsys)
    assert code == 2
    assert "syntax error at" in err
    assert f"{path}:1:7:" in err, err  # file:line:col, as diagnostics are located


def test_syntax_error_is_located_relative_to_the_working_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "broken_syntax_x4.py", "x = 1\ny = (\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(["check", "--no-cache", "broken_syntax_x4.py"], capsys)
    assert code == 2
    assert "syntax error at broken_syntax_x4.py:2:" in err, err


def test_declaration_error_in_user_module_names_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        "bad_decl_x4.py",
        """
        import stepswitch as ss
        a = ss.Agent(name="a", tools=[42])
        """,
    )
    code, _, err = run_main(["show", str(path)], capsys)
    assert code == 2
    assert "bad_decl_x4.py:3" in err
    assert "tools[0]" in err
    # the declaration's own message says what and where: one line, no traceback
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"stepswitch: error: {path}: Agent('a') at ")


def test_module_entry_point_runs_as_a_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stepswitch", "show", "graphs/support.py:support"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "workflow 'support': 3 agent(s)" in proc.stdout


def test_no_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main([], capsys)
    assert code == 2
    assert "usage" in err.lower()


FLOW = "import stepswitch as ss\nwf = ss.Workflow(name={!r}, entry=ss.Agent(name='a'))\n"


def show_in(
    folder: Path, target: str, module: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    """``stepswitch show TARGET`` run from ``folder``; it must succeed. Leaves no trace
    of ``module`` or of the folder in this process."""
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        code, out, err = run_main(["show", target], capsys)
    finally:
        sys.modules.pop(module, None)
    assert code == 0, err
    return out


def test_a_file_in_a_subfolder_is_not_shadowed_by_a_namesake_in_the_working_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "qa_shadow_x7.py").write_text(FLOW.format("outer"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "qa_shadow_x7.py").write_text(FLOW.format("inner"))
    out = show_in(tmp_path, "sub/qa_shadow_x7.py", "qa_shadow_x7", monkeypatch, capsys)
    assert "workflow 'inner'" in out


def test_a_file_whose_name_holds_a_colon_is_a_file_not_file_colon_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "qa_flows:v2.py").write_text(FLOW.format("colon"))
    out = show_in(tmp_path, "qa_flows:v2.py", "qa_flows:v2", monkeypatch, capsys)
    assert "workflow 'colon'" in out


@pytest.mark.parametrize(
    ("command", "flag"),
    [("render", "-o"), ("compile", "-o"), ("run", "--state")],
)
def test_output_onto_the_workflows_own_source_is_refused(
    command: str, flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flow = tmp_path / f"qa_own_{command}.py"
    source = FLOW.format("w")
    flow.write_text(source)
    extra = ["--input", "x", "--model", "scripted:none.json"] if command == "run" else []
    try:
        code, _, err = run_main([command, f"{flow}:wf", flag, str(flow), *extra], capsys)
    finally:
        sys.modules.pop(flow.stem, None)
    assert code == 2 and f"{flag} {flow}: that is the file" in err
    assert flow.read_text() == source  # the user's module is intact


def test_a_folder_reports_every_module_that_does_not_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "flows_x5"
    folder.mkdir()
    write(folder, "one_bad_x5.py", "raise RuntimeError('first')\n")
    write(folder, "two_bad_x5.py", "def f(:\n")
    write(folder, "three_ok_x5.py", "X = 1\n")
    code, _, err = run_main(["show", str(folder)], capsys)
    assert code == 2
    assert "one_bad_x5.py" in err and "RuntimeError: first" in err
    assert "two_bad_x5.py" in err and "syntax error" in err


def test_a_workflow_that_does_not_compile_names_its_first_error_where_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = write(tmp_path, "cycle_mod_x3.py", """
        import stepswitch as ss
        a = ss.Agent("a", "A.", handoffs=["b"])
        b = ss.Agent("b", "B.", handoffs=["a"])
        wf = ss.Workflow("wf", entry=a, agents=[a, b])
    """)
    rec = tmp_path / "rec.json"
    rec.write_text("[]")
    code, _, err = run_main(["trail", str(rec), "--workflow", f"{app}:wf"], capsys)
    assert code == 2
    assert f"--workflow {app}:wf: does not compile: {app}:" in err, err
    assert "SW201" in err and "errors)" not in err


def test_show_lists_guardrails_gates_and_a_handoff_s_hook_and_filter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What decides a run beyond tools and edges is listed too: an agent's guardrails, a
    tool's or edge's is_enabled, a tool's guardrails, a handoff's on_handoff and filter."""
    app = write(tmp_path, "shown_mod_x4.py", """
        import stepswitch as ss

        def premium(ctx, agent):
            return True

        @ss.input_guardrail
        def polite(ctx, agent, text):
            return ss.GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

        @ss.tool_input_guardrail
        def no_huge(data):
            return ss.ToolGuardrailFunctionOutput.allow()

        @ss.function_tool(is_enabled=premium, tool_input_guardrails=[no_huge])
        def deep(topic: str) -> str:
            '''Dig deep.'''
            return topic

        def noted(ctx):
            return None

        def messages_only(data):
            return data

        back = ss.Agent("back", "B.")
        front = ss.Agent("front", "F.", tools=[deep], input_guardrails=[polite],
                         handoffs=[ss.handoff(back, on_handoff=noted,
                                              input_filter=messages_only)])
        wf = ss.Workflow("wf", entry=front, agents=[front, back])
    """)
    code, out, err = run_main(["show", f"{app}:wf"], capsys)
    assert code == 0, err
    assert "      tool deep  [enabled when premium]  [tool guardrails no_huge]" in out, out
    assert "      input guardrails: polite" in out
    assert ("front ─handoff→ back via transfer_to_back (on_handoff noted, input_filter "
            "messages_only)") in out
