"""Codegen: the generated module is deterministic, safe, typed, and decides like the IR."""

from __future__ import annotations

import ast
import itertools
import json
import os
import subprocess
import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import stepswitch as ss
from graphs.support import support
from stepswitch._site import display_path
from stepswitch.compiler.codegen import codegen, load_source, plan_module, render
from stepswitch.compiler.lower import lower, step_switch
from stepswitch.ir import (
    IR_VERSION,
    HandoffTo,
    MachineIR,
    OutputRule,
    PausePoint,
    RunAgent,
    RunFunction,
    StateFacts,
    StateIR,
    StepRule,
    ToolEntry,
)
from stepswitch.runtime import generated
from stepswitch.runtime.steps import ToolResult, TurnOutcome, interpret_step
from stepswitch.testing import assistant_message, function_call
from tests._paths import ROOT
from tests.compiler import hostile
from tests.conformance.harness import run_all


def _machine(wf: ss.Workflow) -> ss.StateMachine:
    built = wf.build()
    return ss.StateMachine(lower(built.spec), built.bindings.objects)


# -- determinism and shape -----------------------------------------------------------------


def test_the_same_machine_gives_the_same_bytes_in_another_process_and_folder(
    tmp_path: Path,
) -> None:
    here = codegen(support.compile(), source="graphs.support:support")
    assert here == codegen(support.compile(), source="graphs.support:support")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from graphs.support import support; import stepswitch as ss;"
        "sys.stdout.write(ss.codegen(support.compile(), source='graphs.support:support'))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run(
        [sys.executable, "-c", script, str(ROOT)],
        cwd=tmp_path, capture_output=True, text=True, check=True, env=env,
    ).stdout
    assert out == here
    assert str(ROOT) not in here and str(tmp_path) not in here


def test_the_module_compiles_and_its_ir_literal_rebuilds_the_ir() -> None:
    machine = support.compile()
    source = codegen(machine)
    compile(source, "<generated>", "exec")
    module = load_source(source)
    assert machine.ir == module.IR
    assert module.MACHINE.agents == ("triage", "refund", "researcher")
    assert set(module.STEPS) == {"triage", "refund", "researcher"}
    assert module.run_sync.__self__ is module.MACHINE
    assert all(len(line) <= 100 for line in source.splitlines())


def test_the_header_names_the_source_and_version_and_nothing_machine_specific() -> None:
    source = codegen(support.compile(), source="graphs.support:support", module_name="codegen.x")
    doc = ast.get_docstring(ast.parse(source)) or ""
    assert "graphs.support:support" in doc
    assert f"stepswitch {ss.__version__}" in doc
    assert "codegen.x" in doc
    # a name that is not a plain dotted identifier never reaches the docstring
    odd = codegen(support.compile(), source='x"""; import os #:y', module_name="a b")
    assert '"""; import os' not in odd and "a b" not in odd


def test_it_imports_only_the_names_the_runtime_declares() -> None:
    for machine in (support.compile(), hostile.machine()):
        tree = ast.parse(codegen(machine))
        imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
        assert len(imports) == 1
        node = imports[0]
        assert isinstance(node, ast.ImportFrom)
        assert node.module == "stepswitch.runtime.generated"
        assert {a.name for a in node.names} <= set(generated.__all__)


def test_one_explicit_step_function_per_state_specialised_by_its_table() -> None:
    source = codegen(support.compile())
    tree = ast.parse(source)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert list(functions) == ["step_triage", "step_refund", "step_researcher"]
    # only the refund state has an approval tool, so only it can be interrupted
    assert "InterruptionStep()" in ast.unparse(functions["step_refund"])
    assert "InterruptionStep()" not in ast.unparse(functions["step_triage"])
    # the researcher has no tools or handoffs, and a typed output: no message runs it again
    researcher = ast.unparse(functions["step_researcher"])
    assert "turn.handoff" not in researcher and "turn.tool_results" not in researcher
    assert "case None:\n            return RunAgain()" in researcher
    assert all(isinstance(f.body[-1], ast.Match) for f in functions.values())
    assert "interpret_step" not in source


# -- hostile strings -----------------------------------------------------------------------


def test_a_hostile_workflow_imports_without_running_its_strings_and_runs_identically() -> None:
    machine = hostile.machine()
    source = codegen(machine, source="tests.compiler.hostile:hostile")
    assert all(len(line) <= 100 for line in source.splitlines())
    assert "\u202e" not in source and "\u2028" not in source and "\x00" not in source
    module = load_source(source)
    assert machine.ir == module.IR
    assert hostile.EXECUTED == []
    steps: list[Any] = [
        [function_call(hostile.TOOL_NAME, {"query": hostile.NASTY})],
        [function_call("hand\"off'", {})],
        [assistant_message(json.dumps({"text": hostile.NASTY}))],
    ]
    ours = run_all(module.MACHINE, hostile.NASTY, steps)
    theirs = run_all(machine, hostile.NASTY, steps)
    assert ours.observed() == theirs.observed()
    assert ours.result.last_agent == hostile.AGENT_B
    assert ours.result.final_output == hostile.Verdict(text=hostile.NASTY)
    stop = [[function_call("stop'here", {"note": hostile.NASTY})]]
    assert run_all(module.MACHINE, "x", stop).result.final_output == f"stopped: {hostile.NASTY}"
    assert hostile.EXECUTED == []


# -- objects that cannot be imported by path -----------------------------------------------


def _local_tool_workflow() -> ss.Workflow:
    @ss.function_tool
    def local_tool(x: int) -> int:
        """A tool defined inside a function."""
        return x

    agent = ss.Agent(name="a", instructions="hi", tools=[local_tool], output_type=list[int],
                     tool_use_behavior=lambda ctx, results: None)
    return ss.Workflow(name="w", entry=agent)


def test_unimportable_objects_are_each_named_with_their_use_and_declaration_site() -> None:
    machine = _machine(_local_tool_workflow())
    with pytest.raises(ss.UserError) as info:
        codegen(machine)
    message = str(info.value)
    assert "cannot generate a runner for workflow 'w'" in message
    assert "local_tool" in message and "defined inside a function" in message
    assert "agent 'a' tool 'local_tool'" in message
    assert "test_codegen.py:" in message  # the tool's declaration site
    assert "<lambda>" in message and "it is a lambda" in message
    assert "list[int]" in message and "generic alias" in message
    assert len([line for line in message.splitlines() if line.startswith("  - ")]) == 3


class Renamed(BaseModel):
    value: int


def _shadowed(x: int) -> int:
    """A function whose module-level name is taken by something else."""
    return x


_tool = ss.function_tool(_shadowed)
_shadowed = lambda x: x  # noqa: E731


def test_a_path_that_imports_a_different_object_is_refused() -> None:
    agent = ss.Agent(name="a", tools=[_tool])
    with pytest.raises(ss.UserError, match="not the object the workflow uses") as info:
        codegen(_machine(ss.Workflow(name="w", entry=agent)))
    message = str(info.value)
    # named the same on every run: no memory address, but what it is and where it is from
    assert "0x" not in message
    assert (f"importing it gives function {__name__}.<lambda> defined at "
            f"{display_path(__file__)}:{_shadowed.__code__.co_firstlineno}, not the object"
            ) in message


class _Plain:
    """An instance whose default repr holds its memory address."""


def test_an_object_without_a_qualname_is_named_without_its_address() -> None:
    from stepswitch.compiler.codegen import _named

    assert _named(_Plain()) == f"_Plain <{__name__}._Plain object>"
    assert _named(3) == "int 3"


# -- tracebacks and versions ---------------------------------------------------------------


def test_tracebacks_through_generated_code_show_its_lines() -> None:
    class Broken(tuple[ToolResult, ...]):
        def __len__(self) -> int:
            raise RuntimeError("broken results")

    module = load_source(codegen(support.compile()), "gen_support")
    turn = TurnOutcome(False, None, Broken(), True, None)
    with pytest.raises(RuntimeError, match="broken results") as info:
        module.step_triage(module.IR.states[0], turn)
    frames = [f for f in traceback.extract_tb(info.value.__traceback__)
              if f.filename == "<stepswitch-codegen gen_support>"]
    assert [f.name for f in frames] == ["step_triage"]
    line = "if turn.tool_results or turn.had_calls:  # tools ran or were called: ask again"
    assert frames[0].line == line
    shown = "".join(traceback.format_exception(info.value))
    assert line in shown


def test_a_runner_for_another_ir_version_is_refused() -> None:
    source = codegen(support.compile()).replace(
        f"    version={IR_VERSION},\n", "    version=999,\n"
    )
    assert "version=999" in source
    with pytest.raises(ss.UserError, match=r"IR version 999.*regenerate"):
        load_source(source)


# -- the step functions decide exactly as the interpreter ----------------------------------

_TOOL = "graphs.support:lookup_order"
_SCHEMA = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


def _entry(name: str, action: Any) -> ToolEntry:
    return ToolEntry(name, "d", _SCHEMA, action)


def _states() -> list[StateIR]:
    tools = (
        _entry("f", RunFunction(_TOOL)),
        _entry("g", RunFunction(_TOOL, approval="always")),
        _entry("h", RunAgent("s0")),
        _entry("go", HandoffTo("s1")),
    )
    typed = OutputRule(kind="typed", type_ref="graphs.support:Findings", schema={}, name="F")
    rules = [
        StepRule(),
        StepRule(tool_use="stop_on_first_tool"),
        StepRule(tool_use="stop_at_tools", stop_at=("g", "nope")),
        StepRule(tool_use="stop_at_tools", stop_at=("nope",)),
        StepRule(tool_use="function", function="graphs.support:lookup_order"),
    ]
    long = "a_rather_long_tool_name_" * 5 + "x"
    states = [
        StateIR(agent="long", tools=(*tools, _entry(long, RunFunction(_TOOL)),
                                     _entry("k", RunFunction(_TOOL))),
                step=StepRule(tool_use="stop_at_tools", stop_at=(long, "k", "g")))
    ]
    for i, (rule, output, table) in enumerate(
        itertools.product(rules, (OutputRule(), typed), (tools, tools[3:], ()))
    ):
        states.append(StateIR(agent=f"s{i}", tools=table, output=output, step=rule))
    return [_switched(state) for state in states]


def _pauses(state: StateIR) -> bool:
    # a turn pauses for its own approval tools, or for a nested run's (all agent tools
    # of this grid call s0, which has an approval tool)
    return any(t.action.kind == "agent" or (t.action.kind == "function"
                                            and t.action.approval != "never")
               for t in state.tools)


def _switched(state: StateIR) -> StateIR:
    """The state as lower() leaves it: its facts (here, only whether it pauses) and the
    step switch computed from them."""
    if _pauses(state):
        state = replace(state, facts=StateFacts(pauses=(PausePoint("g", "tool"),)))
    return replace(state, switch=step_switch(state))


def _outcomes(state: StateIR) -> list[TurnOutcome]:
    names = [t.name for t in state.tools if t.action.kind != "handoff"]
    results: list[tuple[ToolResult, ...]] = [()]
    results += [(ToolResult(n, n.upper(), n),) for n in names]
    results += [(ToolResult(a, 1, a), ToolResult(b, 2, b)) for a, b in itertools.pairwise(names)]
    handoffs = [None] + [t.action.target for t in state.tools if isinstance(t.action, HandoffTo)]
    approvals = _pauses(state)
    return [
        TurnOutcome(i, h, r, c or bool(r) or h is not None, m)
        for i, h, r, c, m in itertools.product(
            (False, True) if approvals else (False,), handoffs, results, (False, True),
            (None, "", "text"),
        )
    ]


def test_every_generated_step_function_decides_like_interpret_step() -> None:
    states = _states()
    ir = MachineIR(name="grid", entry="s0", states=tuple(states))
    module = load_source(render(plan_module(ir)))
    checked = 0
    for state in states:
        step = module.STEPS[state.agent]
        for turn in _outcomes(state):
            assert step(state, turn) == interpret_step(state, turn), (state.agent, turn)
            checked += 1
    assert checked > 500


def test_a_nested_runs_approval_pauses_the_caller_in_generated_code_too() -> None:
    from graphs.support import process_refund
    from tests.differential.twin import mixed

    inner = ss.Agent(name="inner", tools=[process_refund])
    outer = ss.Agent(name="outer", tools=[inner.as_tool("ask", "Ask the inner agent")])
    machine = _machine(ss.Workflow(name="nested", entry=outer, agents=[outer, inner]))
    source = codegen(machine)
    assert source.count("return InterruptionStep()") == 2  # outer pauses through its agent tool
    steps: list[Any] = [
        [function_call("ask", {"input": "refund 5"})],
        [function_call("process_refund", {"order_id": 5})],
    ]
    for generated_sync in (False, True):
        out = run_all(mixed(machine, generated_sync=generated_sync), "hi", steps)
        assert [i.name for i in out.result.interruptions] == ["process_refund"]


def test_objects_from_main_and_duplicate_paths_are_refused_with_the_reason() -> None:
    from stepswitch.compiler.codegen import check_importable

    def fn() -> None:
        """A stand-in."""

    tools = (
        _entry("m", RunFunction("__main__:helper")),
        _entry("d", RunFunction("graphs.support:lookup_order#2")),
        _entry("n", RunFunction("no_such_module_xyz:f")),
    )
    ir = MachineIR(name="w", entry="a", states=(StateIR(agent="a", tools=tools),))
    objects = {p: fn for p in ir.refs()}
    with pytest.raises(ss.UserError) as info:
        check_importable(ir, objects)
    message = str(info.value)
    assert "'__main__:helper' (agent 'a' tool 'm', declared at " in message
    assert "defined in __main__" in message
    assert "another object of the workflow already has the path" in message
    assert "'no_such_module_xyz:f'" in message and "No module named" in message
