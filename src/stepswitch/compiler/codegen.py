"""Codegen: a compiled machine → the source of a standalone, typed runner module.

Three passes, read top to bottom:

1. :func:`check_importable` — every object the IR names must import by its path
   (``module:qualname``) as the very object the machine runs; otherwise a
   ``UserError`` names each one, where it is used and where it was declared.
2. :func:`plan_module` — a pure pass from the IR to a :class:`ModulePlan`: every
   decision (identifiers, which checks each step function needs, the literal lines of
   the tables, the imports) is made here, in Python.
3. :func:`render` — the jinja2 template loops over the plan and substitutes; it
   decides nothing.

The output is deterministic (no ids, times or paths: the same machine gives the same
bytes), fits 100 columns, and passes ``ruff check`` and ``mypy --strict``. Every
user string reaches it through ``repr()``; identifiers are derived, never pasted.
:func:`load_source` runs generated source in memory with its lines registered in
``linecache``, so tracebacks show them.
"""

from __future__ import annotations

import inspect
import linecache
import re
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import Any, assert_never

from stepswitch._dataclass import dataclass
from stepswitch._site import def_line, display_path
from stepswitch._version import __version__
from stepswitch.compiler._literal import literal_lines, str_literal, str_width
from stepswitch.errors import UserError
from stepswitch.ir import HandoffTo, MachineIR, RunFunction, StateIR, StepCase, StepWhen
from stepswitch.runtime import generated as _generated
from stepswitch.runtime.machine import StateMachine
from stepswitch.vocabulary import check_words

__all__ = [
    "ModulePlan",
    "StepPlan",
    "check_importable",
    "codegen",
    "load_source",
    "plan_module",
    "render",
]

WIDTH = 100
"""Generated lines fit the project's ruff line length."""


# -- the entry point ----------------------------------------------------------------------


def codegen(
    machine: StateMachine, *, module_name: str | None = None, source: str | None = None
) -> str:
    """The source of a standalone runner module for ``machine``.

    ``module_name`` is the dotted name the module will be imported as (shown in its
    header); ``source`` is what it was generated from (``package.module:attribute``).
    Raises ``UserError`` naming every object that cannot be imported by path.
    """
    check_importable(machine.ir, _generated.bound_objects(machine))
    return render(plan_module(machine.ir, module_name=module_name, source=source))


def load_source(source: str, module_name: str = "stepswitch_generated") -> ModuleType:
    """Run generated ``source`` as a fresh module (not put in ``sys.modules``).

    Its lines are registered with ``linecache`` under a ``<stepswitch-codegen …>``
    file name, so a traceback through a step function shows the real line.
    """
    filename = f"<stepswitch-codegen {module_name}>"
    code = compile(source, filename, "exec", dont_inherit=True)
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    module = ModuleType(module_name)
    module.__file__ = filename
    exec(code, module.__dict__)
    return module


# -- pass 1: every object imports by its path ----------------------------------------------


def check_importable(ir: MachineIR, objects: Mapping[str, object]) -> None:
    """Raise ``UserError`` listing every path of ``ir`` a generated module cannot import."""
    problems: list[str] = []
    uses = _uses(ir)
    for path in ir.refs():
        obj = objects.get(path)
        reason = _why_not_importable(path, obj)
        if reason is None:
            continue
        where = _declared_at(obj)
        declared = f", declared at {where}" if where else ""
        problems.append(f"  - {path!r} ({'; '.join(uses.get(path, []))}{declared}): {reason}")
    if problems:
        raise UserError(
            f"cannot generate a runner for workflow {ir.name!r}: a generated module imports "
            "user objects by path (module:qualname), and these cannot be imported:\n"
            + "\n".join(problems)
        )


def _why_not_importable(path: str, obj: object) -> str | None:
    opaque = getattr(obj, "opaque", None)  # a FunctionTool read from an SDK app
    if isinstance(opaque, str):
        return (
            f"it stands for {opaque}, which stepswitch cannot run (SW601), so a generated "
            "runner cannot carry it; drop that tool from the agent to compile, or run the "
            "workflow in-process"
        )
    module, _, qualname = path.partition(":")
    if not module or module.startswith("<"):
        return (
            "it has no import path (a generic alias such as list[int], or an object "
            "without __module__/__qualname__); declare a named type or function in a module"
        )
    if qualname.startswith("<mcp "):
        return (
            "it is a tool of an MCP server that no module-level name holds; assign the "
            "server to one (files = ss.MCPServerStdio(...)): the runner imports its tools "
            "as module:files.tools.NAME"
        )
    if "#" in qualname:
        return (
            f"another object of the workflow already has the path {path.split('#')[0]!r}; "
            "give each object its own module-level name"
        )
    if module == "__main__":
        return "it is defined in __main__ (the script being run); move it into a module"
    if "<lambda>" in qualname:
        return "it is a lambda; define it with def at module level"
    if "<locals>" in qualname:
        return "it is defined inside a function; move it to module level"
    try:
        found = _generated.import_objects([path])[path]
    except UserError as exc:
        return str(exc)
    if found is not obj:
        return (
            f"importing it gives {_named(found)}, not the object the workflow uses; keep "
            "the object at the module-level name its function has"
        )
    return None


def _named(obj: object) -> str:
    """``obj`` as a message names it, the same text on every run: its kind, module,
    qualname and where it was defined; never a repr that holds a memory address."""
    kind = type(obj).__name__
    where = _declared_at(obj)
    at = f" defined at {where}" if where else ""
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(qualname, str):
        module = getattr(obj, "__module__", None)
        return f"{kind} {module}.{qualname}{at}" if isinstance(module, str) else \
            f"{kind} {qualname}{at}"
    text = re.sub(r"\s+at 0x[0-9a-fA-F]+", "", repr(obj))
    return f"{kind} {text}{at}" if len(text) <= 80 else f"a {kind}{at}"


def _uses(ir: MachineIR) -> dict[str, list[str]]:
    """For each path, where the IR uses it (``agent 'a' tool 'x'``), in IR order."""
    out: dict[str, list[str]] = {}

    def add(path: str | None, what: str) -> None:
        if path is not None:
            out.setdefault(path, []).append(what)

    for s in ir.states:
        agent = f"agent {s.agent!r}"
        add(s.instructions_fn, f"{agent} instructions")
        add(s.model_ref, f"{agent} model")
        add(s.output.type_ref, f"{agent} output type")
        add(s.step.function, f"{agent} tool_use_behavior")
        add(s.hooks, f"{agent} hooks")
        for g in (*s.input_guardrails, *s.output_guardrails):
            add(g.ref, f"{agent} {g.kind} guardrail {g.name!r}")
        for t in s.tools:
            a = t.action
            tool = f"{agent} tool {t.name!r}"
            if type(t.enabled) is str:
                add(t.enabled, f"{tool} is_enabled")
            if isinstance(a, RunFunction):
                add(a.ref, tool)
                for tg in a.input_guardrails:
                    add(tg.ref, f"{tool} tool input guardrail {tg.name!r}")
                for tg in a.output_guardrails:
                    add(tg.ref, f"{tool} tool output guardrail {tg.name!r}")
            elif isinstance(a, HandoffTo):
                add(a.input_type, f"{tool} input type")
                add(a.on_handoff, f"{tool} on_handoff")
                add(a.input_filter, f"{tool} input_filter")
            else:
                add(a.output_extractor, f"{tool} output extractor")
                add(a.parameters_type, f"{tool} parameters type")
    return out


def _declared_at(obj: object) -> str | None:
    site = getattr(obj, "site", None)
    if site is not None and isinstance(getattr(site, "line", None), int):
        return str(site)
    fn = getattr(obj, "fn", obj)
    code = getattr(fn, "__code__", None)
    if code is not None:
        return f"{display_path(code.co_filename)}:{def_line(code)}"
    if isinstance(obj, type):
        try:
            file = inspect.getsourcefile(obj)
            line = inspect.getsourcelines(obj)[1]
        except (OSError, TypeError):
            return None
        return f"{display_path(file)}:{line}" if file else None
    return None


# -- pass 2: the plan (every decision) -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepPlan:
    """The explicit step function of one agent state."""

    function: str
    comment: str
    doc: str
    body: tuple[str, ...]
    """Lines relative to the function body's indentation."""
    uses: tuple[str, ...]
    """The runtime names the body uses."""


@dataclass(frozen=True, slots=True)
class ModulePlan:
    """Everything the template writes, decided."""

    doc: tuple[str, ...]
    imports: tuple[str, ...]
    ir_lines: tuple[str, ...]
    steps: tuple[StepPlan, ...]
    step_table: tuple[str, ...]
    exports: tuple[str, ...]
    flow_preds: tuple[str, ...] = ()
    """``PRED_… = predicate_of(OBJECTS, "module:name")`` lines (flows only)."""
    flow_exits: tuple[StepPlan, ...] = ()
    """One explicit exit function per flow node that has a then/branch/route exit."""
    flow_table: tuple[str, ...] = ()


_FIXED_IMPORTS = frozenset(
    {"StateIR", "StateMachine", "StepDecision", "StepFunction", "TurnOutcome",
     "check_ir_version", "import_objects"}
)
_EXPORTS = ("IR", "MACHINE", "STEPS", "run", "run_streamed", "run_sync")


def plan_module(
    ir: MachineIR, *, module_name: str | None = None, source: str | None = None
) -> ModulePlan:
    """The plan of the runner module of ``ir`` (pure: no I/O, no imports). A table
    word no reader knows is a ``LoweringError``, as when the interpreter takes ``ir``."""
    check_words(ir)
    names = _function_names(ir)
    steps = tuple(_step_plan(ir, state, names[state.agent]) for state in ir.states)
    used = set(_FIXED_IMPORTS)
    try:
        ir_lines = literal_lines(ir, prefix="IR = ", width=WIDTH, classes=used)
    except (TypeError, ValueError) as exc:
        raise UserError(
            f"cannot generate a runner for workflow {ir.name!r}: its tables hold a value "
            f"that has no Python literal ({exc}); model settings and schemas must be JSON data"
        ) from None
    for step in steps:
        used.update(step.uses)
    unknown = used - set(_generated.__all__)
    if unknown:  # a bug in this module, not the user's: the runtime must declare each name
        raise AssertionError(f"generated code would import undeclared names {sorted(unknown)}")
    table: list[str] = []
    for state in ir.states:
        table.extend(literal_lines(state.agent, indent=1, suffix=f": {names[state.agent]},"))
    preds, exits, flow_table = _flow_plan(ir)
    for plan in exits:
        used.update(plan.uses)
    if ir.flow is not None:
        used.update(("FlowNode", "FlowStep"))
    unknown = used - set(_generated.__all__)
    if unknown:
        raise AssertionError(f"generated code would import undeclared names {sorted(unknown)}")
    return ModulePlan(
        doc=_module_doc(ir, module_name, source),
        imports=tuple(sorted(used, key=_isort_key)),
        ir_lines=tuple(ir_lines),
        steps=steps,
        step_table=tuple(table),
        exports=_EXPORTS,
        flow_preds=preds,
        flow_exits=exits,
        flow_table=flow_table,
    )


def _flow_plan(ir: MachineIR) -> tuple[tuple[str, ...], tuple[StepPlan, ...], tuple[str, ...]]:
    """The flow's explicit exit functions: one per node whose exit is a then, branch or
    route (a fan-out's join is the loop's), each the interpreter's ``next_node`` for that
    node with its targets written in."""
    flow = ir.flow
    if flow is None:
        return (), (), ()
    preds: dict[str, str] = {}
    exits: list[StepPlan] = []
    table: list[str] = []
    taken: set[str] = set()

    def target(name: str | None) -> str:
        return "return None  # END" if name is None else f"return {str_literal(name)}"

    for node in flow.nodes:
        ex = node.exit
        if ex is None:
            continue
        uses: set[str] = set()
        kind = ex.kind
        match kind:
            case "fan_out":
                continue  # its join is the flow loop's
            case "then":
                body = [target(ex.target)]
                doc = f"Then {ex.target!r}." if ex.target else "Then END."
            case "branch":
                path = ex.predicate or ""
                if path not in preds:
                    pstem = re.sub(r"[^0-9a-zA-Z]+", "_", path.rsplit(":", 1)[-1])[:40].upper()
                    pname, k = f"PRED_{pstem.strip('_') or 'BRANCH'}", 2
                    while pname in preds.values():
                        pname, k = f"PRED_{pstem}_{k}", k + 1
                    preds[path] = pname
                body = [f"if {preds[path]}(out):", f"    {target(ex.target)}",
                        target(ex.otherwise)]
                doc = "Branch on the predicate: its target when true, else the other."
                uses.add("predicate_of")
            case "route":
                field = ex.field or ""
                body = [f"match route_key(out, {str_literal(field)}):"]
                for value, to in ex.cases:
                    body.extend(literal_lines(value, indent=1, prefix="case ", suffix=":",
                                              width=WIDTH - 4))
                    body.append(f"        {target(to)}")
                body += ["    case other:",
                         f"        raise no_route(node, {str_literal(field)}, other)"]
                doc = f"Route on the output's field {field!r}: one case per value."
                uses.update(("route_key", "no_route"))
            case _:
                assert_never(kind)
        stem = re.sub(r"[^0-9a-zA-Z]+", "_", node.name)[:40].strip("_").lower() or "node"
        function, n = f"exit_{stem}", 2
        while function in taken:
            function, n = f"exit_{stem}_{n}", n + 1
        taken.add(function)
        exits.append(StepPlan(
            function=function,
            comment=f"# flow node {_short_repr(node.name)} ({node.kind})",
            doc=doc,
            body=tuple(body),
            uses=tuple(sorted(uses)),
        ))
        table.extend(literal_lines(node.name, indent=1, suffix=f": {function},"))
    pred_lines = tuple(
        line for path, name in preds.items()
        for line in literal_lines(path, prefix=f"{name} = predicate_of(OBJECTS, ",
                                  suffix=")", width=WIDTH)
    )
    return pred_lines, tuple(exits), tuple(table)


def _isort_key(name: str) -> tuple[int, str]:
    # ruff's isort order within one import: CONSTANTS, then Classes, then functions.
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


RUNNER_TITLE = "Step-switch runner of a stepswitch workflow"
"""How a generated runner's docstring begins (``stepswitch check`` tells a stale runner
by it)."""
SOURCE_MARK = "Generated from "
"""What precedes the TARGET a runner was generated from, in its docstring."""


def _module_doc(ir: MachineIR, module_name: str | None, source: str | None) -> tuple[str, ...]:
    title = RUNNER_TITLE
    if _dotted(module_name, allow_colon=False):
        title += f" ({module_name})"
    lines = [f"{title}, generated by stepswitch {__version__}.", ""]
    if _dotted(source, allow_colon=True):
        lines += [
            f"{SOURCE_MARK}{source}. Do not edit: regenerate with",
            f"``stepswitch compile {source} -o FILE``; ``--check`` says whether it is current.",
        ]
    else:
        lines += ["Do not edit: regenerate it with ``stepswitch compile TARGET -o FILE``."]
    lines += [
        "",
        "``IR`` holds the workflow's tables (``IR.name`` is its name); each agent state has an",
        "explicit step function mapping a turn's outcome to Final / Handoff / Interruption /",
        "RunAgain; ``MACHINE`` runs them, with the user's objects imported by path.",
        "``run``, ``run_sync`` and ``run_streamed`` are its three drivers.",
    ]
    if any(str_width(line) > WIDTH - 4 for line in lines):  # an absurdly long module name
        return _module_doc(ir, None, None)
    return tuple(lines)


def _dotted(text: str | None, *, allow_colon: bool) -> bool:
    """Only plain dotted ASCII identifiers reach a docstring; anything else is left out."""
    if not text or not text.isascii():
        return False
    head, sep, attr = text.partition(":")
    if sep and not allow_colon:
        return False
    parts = head.split(".") + ([attr] if sep else [])
    return all(p.isidentifier() for p in parts)


def _function_names(ir: MachineIR) -> dict[str, str]:
    """``step_<agent>`` per state: ASCII, unique, derived from the name (never pasted)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for state in ir.states:
        stem = re.sub(r"[^0-9a-zA-Z]+", "_", state.agent)[:40].strip("_").lower() or "agent"
        name, n = f"step_{stem}", 2
        while name in taken:
            name, n = f"step_{stem}_{n}", n + 1
        taken.add(name)
        names[state.agent] = name
    return names


def _condition(when: StepWhen) -> str | None:
    """What a row's ``when`` tests, as an expression; None: the row always holds."""
    match when:
        case "interrupted":
            return "turn.interrupted"
        case "handoff":
            return "turn.handoff is not None"
        case "tools_ran":
            return "turn.tool_results"
        case "called":
            return "turn.had_calls"
        case "no_message":
            return "turn.last_message is None"
        case "otherwise":
            return None
        case _:
            assert_never(when)


_COMMENTS = {
    ("interrupted",): "a call waits for approval",
    ("handoff",): "a handoff took effect",
    ("tools_ran", "called"): "tools ran or were called: ask again",
    ("tools_ran",): "tools ran: ask again",
    ("called",): "calls that ran nothing: ask again",
}


def _decision(case: StepCase, test: str | None) -> tuple[str, list[str], str]:
    """What a row's ``then`` decides: the runtime name it needs, its statements, and the
    comment its ``if`` carries when nothing more particular says what the row is."""
    then = case.then
    match then:
        case "interruption":
            return "InterruptionStep", ["return InterruptionStep()"], ""
        case "handoff":
            # the row that tests for a handoff has narrowed it to a name
            target = "turn.handoff" if test == "turn.handoff is not None" else (
                'turn.handoff or ""')
            return "HandoffStep", [f"return HandoffStep({target})"], ""
        case "run_again":
            return "RunAgain", ["return RunAgain()"], ""
        case "final_first_tool":
            return ("Final", ["return Final(turn.tool_results[0].value)"],
                    "stop on the first tool")
        case "final_listed_tool":
            return "Final", _listed_tools(case.tools), "stop at the listed tools"
        case "ask_tool_use":
            return "AskToolUse", ["return AskToolUse()"], "tool_use_behavior decides"
        case "final_message":
            return "FinalMessage", ['return FinalMessage(turn.last_message or "")'], ""
        case _:
            assert_never(then)


def _step_plan(ir: MachineIR, state: StateIR, function: str) -> StepPlan:
    """The step function's body: the rows of ``state.switch`` printed as code, in order
    (the interpreter reads the same rows). Flags are plain ``if``s, cheaper than class
    patterns in a turn; adjacent rows that both run the model again share one ``if``;
    what the turn holds is dispatched with ``match``: the tool names that stop a run
    and, for the last rows ``lower()`` writes, the final message."""
    body: list[str] = []
    uses: set[str] = {"FinalMessage", "RunAgain"}
    cases = list(state.switch)
    i = 0
    decided = False
    while i < len(cases):
        case = cases[i]
        tail = _message_match(cases[i:])
        if tail is not None:
            body += tail
            decided = True
            break
        whens = [case.when]
        test = _condition(case.when)
        while (test is not None and case.then == "run_again" and i + 1 < len(cases)
               and cases[i + 1].then == "run_again"
               and cases[i + 1].when not in ("no_message", "otherwise")  # the tail's
               and (also := _condition(cases[i + 1].when)) is not None):
            i += 1
            whens.append(cases[i].when)
            test = f"{test} or {also}"
        i += 1
        name, statements, said = _decision(case, test)
        uses.add(name)
        if test is None:  # the row always holds: it decides, and no later row is read
            body += statements
            decided = True
            break
        comment = said or _COMMENTS.get(tuple(whens), "")
        body += [f"if {test}:  # {comment}" if comment else f"if {test}:"]
        body += [f"    {line}" for line in statements]
    if not decided:  # as the interpreter, which reads every row and finds none holds
        said = f"state {state.agent!r}: its step switch decided nothing"
        body += literal_lines(said, prefix="raise AssertionError(", suffix=")",
                              width=WIDTH - 4)
    entry = " (entry)" if state.agent == ir.entry else ""
    runs = any(c.when == "tools_ran" for c in cases)
    return StepPlan(
        function=function,
        comment=f"# agent {_short_repr(state.agent)}{entry}",
        doc=_step_doc(state, runs, state.output.kind == "typed"),
        body=tuple(body),
        uses=tuple(sorted(uses)),
    )


def _message_match(cases: list[StepCase]) -> list[str] | None:
    """The last rows as ``lower()`` writes them, as one ``match`` on the message: a turn
    without a message runs again (a typed output needs one) or is an empty text;
    otherwise the message is the output. None for any other rows."""
    shapes = [(c.when, c.then) for c in cases]
    if shapes == [("no_message", "run_again"), ("otherwise", "final_message")]:
        none = ["    case None:  # a typed output needs a message", "        return RunAgain()"]
        text = ["    case text:  # parsed as the typed output"]
    elif shapes == [("otherwise", "final_message")]:
        none = ["    case None:  # no message: empty text", '        return FinalMessage("")']
        text = ["    case text:  # the text is the output"]
    else:
        return None
    return ["match turn.last_message:", *none, *text, "        return FinalMessage(text)"]


def _listed_tools(stops: tuple[str, ...]) -> list[str]:
    one_line = " | ".join(str_literal(n) for n in stops)
    body = ["for result in turn.tool_results:", "    match result.name:"]
    if str_width(f"{' ' * 16}case {one_line}:") <= WIDTH:
        body.append(f"        case {one_line}:")
    else:
        body.append("        case (")
        for i, name in enumerate(stops):
            lead = "" if i == 0 else "| "
            body.extend(literal_lines(name, indent=3, prefix=lead, width=WIDTH - 4))
        body.append("        ):")
    body += ["            return Final(result.value)", "return RunAgain()"]
    return body


def _step_doc(state: StateIR, runs: bool, typed: bool) -> str:
    rule = {
        "run_llm_again": "Tool results go back to the model",
        "stop_on_first_tool": "The first tool's result is final",
        "stop_at_tools": "A listed tool's result is final",
        "function": "After tools, tool_use_behavior decides",
    }[state.step.tool_use]
    output = "a message is parsed as the typed output" if typed else "a message is the output"
    return f"{rule}; {output}." if runs else f"{output[0].upper()}{output[1:]}."


def _short_repr(text: str) -> str:
    shown = repr(text)
    if str_width(shown) <= 60:
        return shown
    return repr(text[:40]) + "…"


# -- pass 3: render ------------------------------------------------------------------------


@cache
def _template() -> Any:
    import jinja2  # here, so `import stepswitch` does not pay for jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("stepswitch.compiler", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return env.get_template("module.py.j2")


def render(plan: ModulePlan) -> str:
    """The module's source: the template substitutes the plan's lines."""
    text: str = _template().render(plan=plan)
    return text
