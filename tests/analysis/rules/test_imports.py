"""SW711 and SW709 agree with ``stepswitch compile``: check reports an object a generated
runner cannot import exactly when compile refuses the workflow for it."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

from stepswitch.cli.main import main

HEAD = """
import stepswitch as ss
from pydantic import BaseModel

class Note(BaseModel):
    text: str

def first_line(result):
    return str(result.final_output)

@ss.function_tool
def look(x: int) -> int:
    "Look."
    return x

def keep_all(data):
    return data

def stop_now(ctx, results):
    return ss.ToolsToFinalOutputResult(is_final_output=True, final_output="x")

@ss.step
def shout(text: str) -> str:
    return text.upper()

writer = ss.Agent("writer", "Write.")
"""

# name -> (body defining `wf`, compile refuses it)
SHAPES: dict[str, tuple[str, bool]] = {
    "all at module level": ("""
        boss = ss.Agent("boss", "Delegate.", tools=[
            look, writer.as_tool("write", "Write it.", custom_output_extractor=first_line)])
        wf = ss.Workflow("w", boss, [writer])
        """, False),
    "agent tool extractor inside a function": ("""
        def make():
            def inner(result):
                return str(result.final_output)
            return writer.as_tool("write", "Write it.", custom_output_extractor=inner)
        wf = ss.Workflow("w", ss.Agent("boss", "Delegate.", tools=[make()]), [writer])
        """, True),
    "agent tool extractor a lambda": ("""
        tool = writer.as_tool("write", "Write it.",
                              custom_output_extractor=lambda r: str(r.final_output))
        wf = ss.Workflow("w", ss.Agent("boss", "Delegate.", tools=[tool]), [writer])
        """, True),
    "function tool inside a function": ("""
        def make():
            @ss.function_tool
            def inner(x: int) -> int:
                "Inner."
                return x
            return inner
        wf = ss.Workflow("w", ss.Agent("a", "Hi.", tools=[make()]))
        """, True),
    "handoff input filter a lambda": ("""
        h = ss.handoff(writer, input_filter=lambda data: data)
        wf = ss.Workflow("w", ss.Agent("a", "Hi.", handoffs=[h]), [writer])
        """, True),
    "handoff input filter at module level": ("""
        h = ss.handoff(writer, input_filter=keep_all)
        wf = ss.Workflow("w", ss.Agent("a", "Hi.", handoffs=[h]), [writer])
        """, False),
    "tool_use_behavior inside a function": ("""
        def make():
            def stop(ctx, results):
                return ss.ToolsToFinalOutputResult(is_final_output=True, final_output="x")
            return stop
        wf = ss.Workflow("w", ss.Agent("a", "Hi.", tools=[look], tool_use_behavior=make()))
        """, True),
    "output type inside a function": ("""
        def make():
            class Local(BaseModel):
                text: str
            return Local
        wf = ss.Workflow("w", ss.Agent("a", "Hi.", output_type=make()))
        """, True),
    "step input type inside a function": ("""
        def make():
            class Local(BaseModel):
                text: str
            @ss.step
            def read(note: Local) -> str:
                return note.text
            return read
        read = make()
        wf = ss.Workflow("w", read, flow=[ss.then(read, ss.END)])
        """, True),
    "output type a generic alias": ("""
        wf = ss.Workflow("w", ss.Agent("a", "Hi.", output_type=list[int]))
        """, True),
    "step output a generic alias (kept as JSON)": ("""
        @ss.step
        def split(text: str) -> list[Note]:
            return [Note(text=text)]
        wf = ss.Workflow("w", split, flow=[ss.then(split, ss.END)])
        """, False),
    "flow at module level": ("""
        wf = ss.Workflow("w", shout, flow=[ss.then(shout, ss.END)])
        """, False),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_check_reports_it_iff_compile_refuses_it(
    shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    body, refused = SHAPES[shape]
    module = "shape_" + re.sub(r"\W", "_", shape)
    (tmp_path / f"{module}.py").write_text(HEAD + textwrap.dedent(body), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        main(["check", f"{module}.py:wf"])
        checked = capsys.readouterr()
        code = main(["compile", f"{module}.py:wf", "-o", "out.py"])
        compiled = capsys.readouterr()
    finally:
        sys.modules.pop(module, None)
    assert "Traceback" not in checked.err + compiled.err
    reported = re.findall(r"SW7(?:09|11)", checked.out + checked.err)
    assert (code != 0) == refused, compiled.err
    assert bool(reported) == refused, checked.out + checked.err
    # each object compile names, check names too
    for path in re.findall(r"^  - '([^']+)'", compiled.err, re.M):
        assert path in checked.out + checked.err, (path, checked.out)


def test_sw711_names_an_object_once() -> None:
    import stepswitch as ss

    def make() -> ss.FunctionTool:
        @ss.function_tool
        def peek(x: int) -> int:
            """Peek."""
            return x

        return peek

    agent = ss.Agent("boss", "Boss.", tools=[make()])
    (d,) = [d for d in ss.Workflow("w", agent).check().diagnostics if d.code == "SW711"]
    assert d.message.startswith("agent 'boss' tool 'peek' (")
    assert not re.search(r"('[^']+') \1", d.message)
