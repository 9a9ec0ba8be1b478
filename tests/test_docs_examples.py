"""The documentation's Python examples run as written.

Each test takes a code block out of a page (by a line it contains, so the test follows
the page as it is edited) and executes it from the repository root, the way a reader
pastes it. Blocks that need a real OpenAI key are run only up to that point.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests._paths import ROOT

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def block(page: str, containing: str) -> str:
    """The one ```python block of ``docs/<page>`` (or README) holding ``containing``."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found: list[str] = [
        body for lang, body in FENCE.findall(text) if lang == "python" and containing in body
    ]
    assert len(found) == 1, f"{page}: {len(found)} python blocks contain {containing!r}"
    return found[0]


@pytest.fixture(autouse=True)
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))


def run(source: str, namespace: dict[str, object] | None = None) -> dict[str, object]:
    namespace = {} if namespace is None else namespace
    exec(compile(source, "<docs>", "exec"), namespace)
    return namespace


def test_readme_quickstart(capsys: pytest.CaptureFixture[str]) -> None:
    run(block("README.md", "print(support.graph().summary())"))
    assert "workflow 'support': 3 agent(s), entry 'triage'" in capsys.readouterr().out


def test_models_page_scripted_server_example() -> None:
    setup = block("docs/models.md", "machine = support.compile()")
    # everything up to the call that needs a real key
    ns = run(setup.split("result = ")[0])
    run(block("docs/models.md", "with OpenAIServer(script) as server:"), ns)


def test_diagrams_page_python_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import stepswitch as ss
    from graphs.support import support

    monkeypatch.chdir(tmp_path)
    run(block("docs/diagrams.md", "wf.to_mermaid()"), {"wf": support, "ss": ss})
    assert (tmp_path / "out" / "wf.svg").read_text().lstrip().startswith("<")
    assert (tmp_path / "out" / "machine.svg").exists()


def test_codegen_page_python_example() -> None:
    ns = run(block("docs/codegen.md", "source = ss.codegen("))
    assert ns["source"] == (ROOT / "codegen" / "support.py").read_text(encoding="utf-8")


def test_tracing_in_memory_example_runs() -> None:
    from graphs.support import support
    from stepswitch.testing import ScriptedModel, assistant_message

    setup = (
        "import stepswitch as ss\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
    )
    namespace = run(setup, {
        "machine": support.compile(),
        "model": ScriptedModel([assistant_message("Hello.")]),
    })
    out = run(block("docs/tracing.md", "InMemorySpanExporter()"), namespace)
    exporter = out["exporter"]
    names = [s.name for s in exporter.get_finished_spans()]  # type: ignore[attr-defined]
    assert names == ["chat scripted", "invoke_agent triage", "invoke_workflow support"]


def test_sessions_page_two_runs_continue_at_refund(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = block("docs/sessions.md", "customer-42")
    monkeypatch.chdir(tmp_path)  # no out/ here, as in a fresh clone; ROOT is on sys.path
    namespace = run(source)
    assert (tmp_path / "out" / "conversations.db").is_file()
    assert namespace["second"].last_agent == "refund"  # type: ignore[attr-defined]


def test_flows_page_headline_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import runpy

    # as a reader runs it: a file of its own, outside the repository
    path = tmp_path / "story_doc.py"
    path.write_text(block("docs/flows.md", "story = ss.Workflow("), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    ns = runpy.run_path(str(path), run_name="story_doc")
    assert capsys.readouterr().out == "story_agent -> The red dust settled on the canvas...\n"
    # the same graph as graphs/story.py, so the page's names are the file's
    from graphs.story import story

    assert ns["story"].to_mermaid() == story.to_mermaid()


def test_the_guide_states_the_tools_strict_default_the_code_has() -> None:
    import inspect

    import stepswitch as ss

    default = inspect.signature(ss.function_tool).parameters["strict"].default
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    tools = text.split("## Function tools", 1)[1].split("\n## ", 1)[0]
    assert default is True
    assert "**strict by default** (`strict=True`" in tools

    def lookup(order_id: int) -> int:
        """Look up."""
        return order_id

    assert ss.function_tool(lookup).strict is default


def test_models_page_own_model_answers_from_the_conversation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ns = run(block("docs/models.md", "class EchoModel:"))
    assert capsys.readouterr().out == "greeter heard 1 message(s); last: 'hello there'\n1\n"
    # it answers from the conversation: a second user message is counted and echoed
    machine: Any = ns["machine"]
    model_class: Any = ns["EchoModel"]
    result = machine.run_sync(
        [{"role": "user", "content": "hi"}, {"role": "user", "content": "refund 42"}],
        model=model_class(),
    )
    assert result.final_output == "greeter heard 2 message(s); last: 'refund 42'"
    assert (result.usage.requests, result.usage.input_tokens, result.usage.output_tokens) \
        == (1, 3, 7)


def test_runtime_page_tool_guardrails_gates_and_hooks(capsys: pytest.CaptureFixture[str]) -> None:
    run(block("docs/runtime.md", "class Log(ss.RunHooks):"))
    assert capsys.readouterr().out.startswith("desk calls send_email (")


def test_models_page_says_where_transcript_model_and_load_script_are_imported_from() -> None:
    from stepswitch.models import TranscriptModel

    ns = run(block("docs/models.md", "TranscriptModel.from_file("))
    model, steps = ns["model"], ns["steps"]
    assert isinstance(model, TranscriptModel) and isinstance(steps, list)
    assert len(steps) == model.remaining


def test_the_guides_blocks_run_in_order_and_check_clean() -> None:
    """docs/guide.md's declaration blocks, pasted one after another as the page says."""
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    blocks = [body for lang, body in FENCE.findall(text) if lang == "python"]
    namespace: dict[str, object] = {}
    for body in blocks[:5]:  # the import, tools, agents, workflow, one build
        run(body, namespace)
    support = namespace["support"]
    report = support.check()  # type: ignore[attr-defined]
    assert not report.errors, report
    assert namespace["text"] and namespace["dot"]  # the diagrams the last block drew
