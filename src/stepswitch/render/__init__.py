"""Diagrams of a workflow: Mermaid and DOT text, SVG and PNG through Graphviz.

One :class:`~stepswitch.render.scene.Scene` is built per call and translated by the
writer of the format asked for, so every format shows the same thing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, overload

from stepswitch.compiler.lower import lower
from stepswitch.errors import UserError
from stepswitch.graph.bindings import BuiltWorkflow
from stepswitch.graph.spec import WorkflowSpec
from stepswitch.graph.workflow_graph import WorkflowGraph
from stepswitch.ir import MachineIR
from stepswitch.render.dot import scene_to_dot
from stepswitch.render.graphviz_bin import GraphvizNotFound, find_graphviz, run_graphviz
from stepswitch.render.machine import build_machine_scene
from stepswitch.render.mermaid import scene_to_mermaid
from stepswitch.render.scene import ReportLike, Scene, build_scene

if TYPE_CHECKING:
    from stepswitch.dsl.workflow import Workflow
    from stepswitch.runtime.machine import StateMachine

__all__ = [
    "FORMATS",
    "Format",
    "GraphvizNotFound",
    "ReportLike",
    "Scene",
    "View",
    "build_scene",
    "find_graphviz",
    "render",
    "scene_for",
    "to_dot",
    "to_mermaid",
]

Format: TypeAlias = Literal["mermaid", "dot", "svg", "png"]
View: TypeAlias = Literal["graph", "machine"]
FORMATS: tuple[Format, ...] = ("mermaid", "dot", "svg", "png")

Renderable: TypeAlias = (
    "Workflow | WorkflowGraph | BuiltWorkflow | WorkflowSpec | StateMachine | MachineIR"
)


def _graph_of(wf: Renderable) -> WorkflowGraph:
    if isinstance(wf, WorkflowGraph):
        return wf
    if isinstance(wf, BuiltWorkflow):
        return WorkflowGraph.from_built(wf)
    if isinstance(wf, WorkflowSpec):
        return WorkflowGraph(wf)
    if isinstance(wf, MachineIR) or hasattr(wf, "ir"):
        raise UserError(
            "a compiled machine has only the machine view; draw the Workflow itself for "
            "the graph view"
        )
    graph = getattr(wf, "graph", None)
    if callable(graph):
        result = graph()
        if isinstance(result, WorkflowGraph):
            return result
    raise UserError(
        f"cannot draw a {type(wf).__name__}: expected a Workflow, WorkflowGraph, "
        "BuiltWorkflow, WorkflowSpec, StateMachine or MachineIR"
    )


def _ir_of(wf: Renderable) -> MachineIR:
    if isinstance(wf, MachineIR):
        return wf
    ir = getattr(wf, "ir", None)  # a compiled StateMachine
    if isinstance(ir, MachineIR):
        return ir
    return lower(_graph_of(wf).spec)


def scene_for(
    wf: Renderable,
    *,
    tools: bool = False,
    report: ReportLike | None = None,
    view: View | None = None,
) -> Scene:
    """The scene of ``wf`` for a view: what every format draws.

    ``view`` defaults to ``"graph"``, or ``"machine"`` for a compiled ``StateMachine``
    or a ``MachineIR``. The machine view lowers the workflow (without the analyzer's
    check) and draws its states; ``tools`` does not apply to it (tools are always
    listed in their state).
    """
    if view is None:
        view = "machine" if isinstance(wf, MachineIR) or hasattr(wf, "ir") else "graph"
    if view == "machine":
        return build_machine_scene(_ir_of(wf), report=report)
    if view != "graph":
        raise UserError(f"unknown view {view!r}: expected 'graph' or 'machine'")
    return build_scene(_graph_of(wf), tools=tools, report=report)


def to_mermaid(
    wf: Renderable,
    *,
    tools: bool = False,
    report: ReportLike | None = None,
    view: View | None = None,
) -> str:
    """Mermaid flowchart text of ``wf`` (GitHub renders it in Markdown)."""
    return scene_to_mermaid(scene_for(wf, tools=tools, report=report, view=view))


def to_dot(
    wf: Renderable,
    *,
    tools: bool = False,
    report: ReportLike | None = None,
    view: View | None = None,
) -> str:
    """Graphviz DOT text of ``wf``."""
    return scene_to_dot(scene_for(wf, tools=tools, report=report, view=view))


@overload
def render(
    wf: Renderable,
    format: Literal["mermaid", "dot", "svg"],
    path: str | os.PathLike[str] | None = None,
    *,
    tools: bool = False,
    report: ReportLike | None = None,
    view: View | None = None,
) -> str: ...


@overload
def render(
    wf: Renderable,
    format: Literal["png"],
    path: str | os.PathLike[str] | None = None,
    *,
    tools: bool = False,
    report: ReportLike | None = None,
    view: View | None = None,
) -> bytes: ...


@overload
def render(
    wf: Renderable,
    format: str,
    path: str | os.PathLike[str] | None = None,
    *,
    tools: bool = False,
    report: ReportLike | None = None,
    view: View | None = None,
) -> str | bytes: ...


def render(
    wf: Renderable,
    format: str,
    path: str | os.PathLike[str] | None = None,
    *,
    tools: bool = False,
    report: ReportLike | None = None,
    view: View | None = None,
) -> str | bytes:
    """Draw ``wf`` as ``format`` (mermaid, dot, svg or png); write it to ``path`` if
    given, and return it (text for mermaid, dot and svg; bytes for png).

    SVG and PNG run Graphviz (see :func:`find_graphviz`). ``tools=True`` draws function
    tools as nodes; ``report`` (e.g. ``wf.check()``) highlights its diagnostics;
    ``view="machine"`` draws the compiled state machine (the default for a
    ``StateMachine`` or ``MachineIR``).
    """
    if format not in FORMATS:
        raise UserError(f"unknown format {format!r}: expected one of {', '.join(FORMATS)}")
    scene = scene_for(wf, tools=tools, report=report, view=view)
    content: str | bytes
    if format == "mermaid":
        content = scene_to_mermaid(scene)
    elif format == "dot":
        content = scene_to_dot(scene)
    elif format == "svg":
        content = run_graphviz(scene_to_dot(scene), "svg").decode("utf-8")
    else:
        content = run_graphviz(scene_to_dot(scene), "png")
    if path is not None:
        _write(Path(path), content)
    return content


def _write(path: Path, content: str | bytes) -> None:
    try:
        if path.parent != Path():
            path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
