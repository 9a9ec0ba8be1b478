"""Resolve TARGETs to workflows, for the CLI, the studio page and ``stepswitch test``.

A TARGET is ``path/to/file.py:NAME`` or ``package.module:NAME`` naming a workflow, an
OpenAI Agents SDK agent (read with ``from_sdk``) or a function that builds and runs or
returns one (``app.py:main``, called as :mod:`stepswitch.targets.call` says), or a file
or folder (every workflow in it, and every SDK agent declared there that no other agent
of its module reaches; a folder's files with none are listed as skipped, with why).
Every failure is a :class:`~stepswitch.errors.TargetError` with a one-line cause (the
CLI exits 2); an exception raised by the user's own module is shown as its own short
traceback, marked as theirs.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import keyword
import os
import sys
import traceback
import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from stepswitch._dataclass import dataclass
from stepswitch._files import python_files
from stepswitch._site import PACKAGE_DIR, display_path
from stepswitch.dsl.agent import Agent
from stepswitch.dsl.workflow import Workflow
from stepswitch.errors import CompileError, TargetError, UserError
from stepswitch.targets.shadow import shadowed

if TYPE_CHECKING:
    from stepswitch.runtime.machine import StateMachine
    from stepswitch.targets.call import Reached

__all__ = [
    "LoadedWorkflow",
    "TargetError",
    "a_type",
    "compile_one",
    "compile_target",
    "import_file",
    "import_target",
    "load_one",
    "load_targets",
    "refuse_own_source",
]


_STARTUP_PATH = tuple(os.path.realpath(p or os.curdir) for p in sys.path)
"""``sys.path`` as the interpreter set it up, before a TARGET's folder was put on it: a
folder here (PYTHONPATH, an installed or editable package) is on it wherever code runs."""


@dataclass(frozen=True, slots=True)
class LoadedWorkflow:
    """A workflow found for a TARGET, with how to name it (``file.py:NAME``)."""

    label: str
    workflow: Workflow
    module: str
    attribute: str


def refuse_own_source(output: str | None, loaded: LoadedWorkflow, flag: str = "-o") -> None:
    """Refuse ``-o FILE`` when FILE is the module that declares the workflow: writing
    a diagram, a runner or a saved run there would destroy the user's source."""
    if output is None:
        return
    source = getattr(sys.modules.get(loaded.module), "__file__", None)
    if source is not None and os.path.realpath(output) == os.path.realpath(source):
        raise TargetError(
            f"{flag} {output}: that is the file {loaded.label} is declared in; write elsewhere"
        )


def load_targets(
    targets: list[str], *, failures: list[str] | None = None, runner: str | None = None,
    skipped: list[str] | None = None,
) -> list[LoadedWorkflow]:
    """Every workflow the targets name, in order, each once.

    With ``failures``, a module of a folder that does not import is listed there and
    the folder's other modules are still returned; without it, that is a
    :class:`TargetError`. With ``skipped``, each file of a folder in which nothing was
    found is listed there, with why (one line each). With ``runner`` (the file a
    generated runner goes to), a file TARGET is imported under the name that runner
    can import it by (see :func:`_runner_name`)."""
    found: list[LoadedWorkflow] = []
    seen: set[int] = set()
    for target in targets:
        for loaded in _load_one(target, failures, runner, skipped):
            if id(loaded.workflow) not in seen:
                seen.add(id(loaded.workflow))
                found.append(loaded)
    return found


def load_one(target: str, *, flag: str = "", advice: str = "pick one with :NAME"
             ) -> LoadedWorkflow:
    """The one workflow ``target`` names; a :class:`TargetError` when it names more.

    ``flag`` (``--workflow``) prefixes the message when the TARGET came by a flag;
    ``advice`` is what the message tells the user to do about it."""
    found = load_targets([target])
    if len(found) != 1:
        names = ", ".join(w.label for w in found)
        shown = f"{flag} {target}" if flag else target
        raise TargetError(f"{shown}: names {len(found)} workflows ({names}); {advice}")
    return found[0]


def compile_target(workflow: Workflow) -> StateMachine:
    """``workflow.compile()`` held to what ``stepswitch check`` holds it to: the policies
    of the nearest pyproject.toml that apply to it and its prices as well as the
    workflow's own, so a command that runs or writes a workflow refuses every error
    ``check`` lists (``CompileError``; a malformed pyproject is a ``UserError``)."""
    from stepswitch.analysis import analyze
    from stepswitch.compiler.lower import lower, refuse_unrunnable
    from stepswitch.graph.workflow_graph import WorkflowGraph
    from stepswitch.policies import policies_from_pyproject, prices_from_pyproject
    from stepswitch.runtime.machine import StateMachine

    policies = policies_from_pyproject(workflow=workflow.name)
    prices = prices_from_pyproject()
    built = workflow.build()  # once: the analysis and the lowering share it
    report = analyze(WorkflowGraph.from_built(built), policies=policies, prices=prices)
    if not report.ok:
        raise CompileError(report)
    refuse_unrunnable(built.spec)
    return StateMachine(lower(built.spec), built.bindings.objects)


def compile_one(target: str, *, flag: str = "--workflow"
                ) -> tuple[LoadedWorkflow, StateMachine]:
    """:func:`load_one` and its compiled machine; a workflow the analyzer finds errors
    in is a :class:`TargetError` pointing at ``stepswitch check``."""
    loaded = load_one(target, flag=flag, advice="name one (FILE.py:NAME)")
    try:
        machine = compile_target(loaded.workflow)
    except CompileError as exc:
        errors = exc.report.errors
        first = errors[0].format_line() if errors else ""
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise TargetError(f"{flag} {loaded.label}: does not compile: {first}{more}; see "
                          f"`stepswitch check {target}`") from None
    return loaded, machine


def _load_one(
    target: str, collected: list[str] | None = None, runner: str | None = None,
    skipped: list[str] | None = None,
) -> list[LoadedWorkflow]:
    path_part, _, name = _split(target)
    path = Path(path_part)
    if name and ":" in path_part and not path.exists() and not _drive_only(path_part):
        raise TargetError(
            f"{target}: a TARGET names one workflow at most: FILE.py[:NAME] or "
            "package.module[:NAME]"
        )
    if path.suffix == ".py" or path.exists():
        if not path.exists():
            raise TargetError(f"{target}: no such file or folder: {path_part}")
        if path.is_dir():
            if name:
                raise TargetError(f"{target}: a folder cannot be combined with :NAME")
            results: list[LoadedWorkflow] = []
            failures: list[str] = []
            passed: list[str] = []
            for file in python_files(path):
                # one module that does not import must not hide the others' problems
                try:
                    module = import_file(file, runner=runner)
                    here = _workflows_in(module, display_path(file))
                except TargetError as exc:
                    failures.append(str(exc))
                    continue
                results.extend(here)
                if not here and not _package_marker(file):
                    passed.append(f"skipped {display_path(file)}: {_nothing_in(module)}")
            if failures and collected is None:
                raise TargetError("\n".join(failures))
            if failures and collected is not None:
                collected.extend(failures)
                if not results:
                    return []
            if not results:
                detail = "".join(f"\n  {line}" for line in passed)
                raise TargetError(
                    f"{target}: no Workflow or SDK agent found in any .py file under "
                    f"{path_part}{detail}"
                )
            if skipped is not None:
                skipped.extend(passed)
            return results
        if path.suffix != ".py":
            raise TargetError(f"{target}: {path_part} is not a Python file{_read_by(path)}; "
                              "a TARGET is FILE.py[:NAME], a folder, or package.module[:NAME]")
        module = import_file(path, runner=runner)
        label = display_path(path)
    else:
        if "/" in path_part or os.sep in path_part:
            raise TargetError(f"{target}: no such file or folder: {path_part}")
        module = _import_module(path_part)
        label = path_part
    if not name:
        results = _workflows_in(module, label)
        if not results:
            raise TargetError(f"{target}: {_nothing_in(module)}")
        return results
    if not hasattr(module, name):
        hint = _workflow_hint(module, name)
        raise TargetError(f"{target}: {label} has no attribute {name!r}{hint}")
    obj = getattr(module, name)
    if isinstance(obj, Workflow):
        return [LoadedWorkflow(f"{label}:{name}", obj, module.__name__, name)]
    if _is_sdk_agent(obj):
        return [_from_sdk(target, obj, module, name, label)]
    if isinstance(obj, Agent):
        raise TargetError(
            f"{target}: {name!r} is an Agent, not a Workflow; declare "
            f"Workflow(name=..., entry={name}) and name that"
        )
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return _from_function(target, obj, module, name, label)
    raise TargetError(f"{target}: {name!r} is {a_type(obj)}, not a Workflow")


def _read_by(path: Path) -> str:
    """Which command reads a file of stepswitch's own that was given as a TARGET."""
    if path.suffix == ".json":
        return (" (a saved run or a recording is read by `stepswitch trail FILE` and "
                "`stepswitch replay FILE --workflow TARGET`; a script by `run --model "
                "scripted:FILE`)")
    if path.suffix in (".jsonl", ".ndjson"):
        return " (a trace file is read by `stepswitch trace FILE`)"
    return ""


def _package_marker(file: Path) -> bool:
    """An ``__init__.py`` that builds no agents: it marks a package, nothing was skipped."""
    if file.name != "__init__.py":
        return False
    from stepswitch.interop._sites import agent_builders

    return not agent_builders(str(file))


def _nothing_in(module: ModuleType) -> str:
    """Why a module gave no workflow: nothing at module level, and the functions that
    build agents there (with the TARGET naming one), if it has any."""
    file = getattr(module, "__file__", None) or ""
    label = display_path(file) if file else module.__name__
    doc = module.__doc__ or ""
    if doc.startswith("Step-switch runner"):
        from stepswitch.compiler.codegen import RUNNER_TITLE, SOURCE_MARK

        if doc.startswith(RUNNER_TITLE):
            source = doc.split(SOURCE_MARK, 1)[1].split(". Do not edit", 1)[0] \
                if SOURCE_MARK in doc else "a workflow"
            return f"a generated runner (of {source}), not a workflow"
    head = f"no Workflow or SDK agent at module level in {label}"
    if not file:
        return head
    from stepswitch.interop._sites import agent_builders

    builders = agent_builders(file)
    if not builders:
        return head
    shown = ", ".join(f"{b.name}() at line {b.line}" for b in builders[:5])
    more = ", …" if len(builders) > 5 else ""
    return (f"{head}; agents are built in {shown}{more}: name one as the TARGET, e.g. "
            f"`{label}:{builders[0].name}`")


def _from_function(
    target: str, fn: object, module: ModuleType, attr: str, label: str
) -> list[LoadedWorkflow]:
    """The app a function TARGET builds: what it runs first, or what it returns."""
    from stepswitch.targets.call import _def_site, call_target

    reached = call_target(fn, target)  # type: ignore[arg-type]
    app = reached.app
    ran = reached.how != "returned"
    at = _def_site(fn)
    called = f"{attr}() ({at})" if at else f"{attr}()"  # the function, at its def line
    what = f"{called} ran {reached.how} at {reached.where} on" if ran else f"{called} returned"
    if isinstance(app, Workflow):
        return [LoadedWorkflow(f"{label}:{attr}", app, module.__name__, attr)]
    if _is_sdk_agent(app):
        return [_from_sdk(target, app, module, attr, label, reached)]
    if not ran and isinstance(app, list | tuple | dict) and app:
        values = list(app.values()) if isinstance(app, dict) else list(app)
        if all(isinstance(v, Workflow) for v in values):
            return [LoadedWorkflow(f"{label}:{attr}[{i}]", v, module.__name__, attr)
                    for i, v in enumerate(values)]
        if all(_is_sdk_agent(v) for v in values):
            from stepswitch.interop.sdk import sdk_roots

            roots = sdk_roots({f"agent{i}": v for i, v in enumerate(values)})
            return [_from_sdk(target, agent, module, attr, label, reached,
                              suffix=f"[{values.index(agent)}]" if len(roots) > 1 else "")
                    for _, agent in roots]
    if isinstance(app, Agent):
        raise TargetError(
            f"{target}: {what} a stepswitch Agent {app.name!r}, not a Workflow; return "
            f"(or run) Workflow(name=..., entry=that agent) instead"
        )
    if app is None and not ran:
        raise TargetError(
            f"{target}: {called} returned None without running an agent: it called none "
            "of Runner.run, Runner.run_sync, Runner.run_streamed or StateMachine.run*; "
            "return the entry agent (or the Workflow), or name the agent itself "
            "(FILE.py:NAME)"
        )
    raise TargetError(
        f"{target}: {what} {a_type(app)}, not an SDK agent or a Workflow"
    )


def _workflow_hint(module: ModuleType, name: str) -> str:
    """`` (did you mean 'x'?)`` for a misspelt workflow name, else the workflows the
    module has; empty when it has none."""
    import difflib

    names = [a for a, v in vars(module).items()
             if isinstance(v, Workflow) and not a.startswith("_")]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if names:
        shown = ", ".join(names[:10]) + (", …" if len(names) > 10 else "")
        return f"; its Workflows: {shown}"
    return ""


def a_type(obj: object) -> str:
    """``an int``, ``a str``: the name of ``obj``'s type with its article."""
    name = type(obj).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def import_target(spec: str, *, what: str) -> tuple[object, str]:
    """The object ``file.py:NAME`` or ``module:NAME`` names, and its label."""
    path_part, sep, name = _split(spec)
    if not sep or not name:
        raise TargetError(f"{what} {spec}: expected module:NAME or file.py:NAME")
    path = Path(path_part)
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise TargetError(f"{what} {spec}: no such file: {path_part}")
        module, label = import_file(path), display_path(path)
    else:
        module, label = _import_module(path_part), path_part
    if not hasattr(module, name):
        raise TargetError(f"{what} {spec}: {label} has no attribute {name!r}")
    return getattr(module, name), f"{label}:{name}"


def _drive_only(text: str) -> bool:
    """True for a Windows path whose only colon is its drive (``C:\\x.py``)."""
    return text.count(":") == 1 and len(text) > 1 and text[0].isalpha() and text[1] == ":"


def _split(target: str) -> tuple[str, str, str]:
    # A Windows drive letter ("C:\\x.py") is not a NAME separator.
    head, sep, name = target.rpartition(":")
    if not sep or (len(head) == 1 and head.isalpha()) or "/" in name or "\\" in name:
        return target, "", ""
    if not name.isidentifier() and os.path.exists(target):  # a file named "a:b.py"
        return target, "", ""
    return head, sep, name


def _module_name_for(path: Path) -> tuple[str, Path]:
    """The dotted module name of a file and the folder to put on ``sys.path``."""
    path = path.resolve()
    parts = [path.stem] if path.stem != "__init__" else []
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), folder


def _runner_name(path: Path, name: str, root: Path, runner: str) -> tuple[str, Path]:
    """The dotted name a generated runner written to ``runner`` imports the module at
    ``path`` by, and the folder that must be on ``sys.path`` for it (where the runner
    is used from). ``name``/``root`` are the module's own (its ``__init__.py`` chain).

    - ``root`` is on the interpreter's own ``sys.path`` (PYTHONPATH, an installed or
      editable package): ``name``, which imports anywhere;
    - the runner lies in ``root`` or under it: ``name`` (``python -m`` from ``root``,
      or ``python RUNNER`` when the runner sits in ``root`` itself);
    - otherwise the nearest folder holding both the runner and ``root``, when it is the
      working directory or inside it: the module's dotted path from there (its folders
      are namespace packages), so ``python RUNNER`` works when the runner is in that
      folder and ``python -m`` from it always does;
    - otherwise ``name`` when ``root`` is the working directory (the project's root);
    - otherwise no name can be told: an error saying what to do.
    """
    if str(root) in _STARTUP_PATH:
        return name, root
    folder = Path(os.path.realpath(Path(runner).absolute().parent))
    common = Path(os.path.commonpath([folder, root]))
    if common == root:
        return name, root
    cwd = Path(os.path.realpath(os.getcwd()))
    if common == cwd or cwd in common.parents:
        parts = list(path.resolve().relative_to(common).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
            return ".".join(parts), common
    if root == cwd:
        return name, root
    raise TargetError(
        f"{display_path(path)}: cannot tell how a runner written to {runner} would import "
        f"it (as {name!r} it needs {display_path(root)} on sys.path, and no folder under the "
        "working directory holds both): write the runner inside "
        f"{display_path(root)}, run the command from a folder holding both, or put "
        f"{display_path(root)} on PYTHONPATH"
    )


def import_file(path: Path, *, runner: str | None = None) -> ModuleType:
    """The module at ``path``, imported with its own folder first on ``sys.path``."""
    name, root = _module_name_for(path)
    if not name:
        raise TargetError(f"{path}: cannot tell the module name of this file")
    own = name
    if runner is not None and runner != "-":
        name, root = _runner_name(path, name, root, runner)
    # The file's own folder goes first, ahead of the working directory that
    # _import_module adds: otherwise `check sub/flows.py` from a folder that also holds
    # a flows.py would import that one instead.
    cwd, root_text = os.getcwd(), str(root)
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    if root_text in sys.path:
        sys.path.remove(root_text)
    sys.path.insert(0, root_text)
    existing = sys.modules.get(name)
    if existing is not None:
        file = getattr(existing, "__file__", None)
        if file is not None and Path(file).resolve() != path.resolve():
            raise TargetError(
                f"{path}: its module name {name!r} is already taken by {file}; rename one"
            )
    try:
        module = _import_module(name, shown=display_path(path))
    except TargetError as exc:
        _refuse_shadows(root)  # the likelier cause of a failed import, if there is one
        if name != own:
            raise TargetError(
                f"{exc}\n(a runner written to {runner} imports it as {name!r}, from "
                f"{display_path(root)}; write the runner next to it to import it as {own!r})"
            ) from None
        raise
    _refuse_shadows(root)
    file = getattr(module, "__file__", None)
    if file is not None and Path(file).resolve() != path.resolve():
        raise TargetError(f"{path}: importing it as {name!r} found {file} instead; rename one")
    return module


def _refuse_shadows(root: Path) -> None:
    problems = shadowed(root)
    if problems:
        raise TargetError("\n".join(problems))


def _import_module(name: str, shown: str | None = None) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    shown = shown or name
    try:
        # what a module prints while it loads goes to stderr: stdout carries the
        # command's own output (JSON, SARIF, a runner), which it would corrupt
        with contextlib.redirect_stdout(sys.stderr):
            return importlib.import_module(name)
    except SystemExit as exc:
        raise TargetError(
            f"{shown}: exited while being imported (SystemExit({exc.code!r})); a module "
            "stepswitch reads must not exit at import: put that code under "
            "`if __name__ == \"__main__\":`"
        ) from None
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise TargetError(f"{shown}: no module named {name!r}") from None
        raise TargetError(_user_traceback(shown, exc)) from None
    except SyntaxError as exc:
        # file:line:col as every diagnostic is located, relative to the working
        # directory when the file is under it
        where = shown
        if exc.filename:
            where = f"{display_path(exc.filename)}:{exc.lineno}" + (
                f":{exc.offset}" if exc.offset else "")
        raise TargetError(f"{shown}: syntax error at {where}: {exc.msg}") from None
    except UserError as exc:  # a declaration mistake: the message names its file:line
        stale = _stale_runner(exc, shown)
        if stale is not None:
            raise TargetError(f"{shown}: {stale}") from None
        raise TargetError(f"{shown}: {exc}") from None
    except ImportError as exc:
        if exc.name is None and "relative import" in str(exc) and shown.endswith(".py"):
            raise TargetError(_relative_import(shown, exc)) from None
        raise TargetError(_user_traceback(shown, exc)) from None
    except Exception as exc:
        raise TargetError(_user_traceback(shown, exc)) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a BaseException subclass of the user's: one line
        raise TargetError(
            f"{shown}: importing it raised {_type_and_text(exc)}{_raised_at(exc)}, a "
            "BaseException that is not an Exception; a module stepswitch reads must "
            "import cleanly"
        ) from None


def _type_and_text(exc: BaseException) -> str:
    """``Type: message``, or ``Type`` alone when the exception has no text form."""
    try:
        text = str(exc)
    except Exception:  # its __str__ raised
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _raised_at(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "importlib" not in f.filename and not f.filename.startswith(PACKAGE_DIR)]
    return f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""


def _relative_import(shown: str, exc: ImportError) -> str:
    """A file TARGET outside any package that imports relatively: the module form is
    the way to name it."""
    path = Path(shown.partition(":")[0])
    module = ".".join(path.with_suffix("").parts)
    return (f"{shown}: a relative import{_raised_at(exc)} needs the file's package; name "
            f"it in the module form `package.module:NAME` (here `{module}:NAME`), run from "
            "the folder above the package")


def _stale_runner(exc: UserError, shown: str) -> str | None:
    """When ``exc`` is a generated runner failing to import one of the workflow's objects
    (it was renamed or removed since): that, and the command that regenerates it."""
    if not str(exc).startswith("cannot import "):
        return None
    from stepswitch.compiler.codegen import RUNNER_TITLE

    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith(PACKAGE_DIR) or not frame.filename.endswith(".py"):
            continue
        try:
            with open(frame.filename, encoding="utf-8") as file:
                head = file.read(2000)
        except OSError:
            continue
        if not head.startswith('"""' + RUNNER_TITLE):
            continue
        runner = Path(frame.filename)
        name = display_path(runner)
        what = ("a stale generated runner" if name == shown
                else f"it imports {name}, a stale generated runner")
        return (f"{what} ({exc}); regenerate it with "
                f"`stepswitch compile {_runner_source(runner, head)} -o {name}`")
    return None


def _runner_source(runner: Path, head: str) -> str:
    """The TARGET a runner was generated from, as a path when its module is a file next
    to the runner (``report/report.py:report``), else as its header names it."""
    from stepswitch.compiler.codegen import SOURCE_MARK as marker

    if marker not in head:
        return "TARGET"
    source = head.split(marker, 1)[1].split(". Do not edit", 1)[0]
    module, sep, attr = source.partition(":")
    if not sep:
        return "TARGET"
    folder = runner.resolve().parent
    for base in (folder, *folder.parents):
        candidate = base.joinpath(*module.split(".")).with_suffix(".py")
        if candidate.is_file():
            return f"{display_path(candidate)}:{attr}"
    return source


def _user_traceback(shown: str, exc: BaseException) -> str:
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in f.filename and not f.filename.startswith(PACKAGE_DIR)
    ]
    body = "".join(traceback.format_list(frames))
    message = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    return (
        f"{shown}: importing it raised an exception (in your code, not in stepswitch):\n"
        f"{body}{message}"
    )


def _workflows_in(module: ModuleType, label: str) -> list[LoadedWorkflow]:
    found = []
    for attr, value in vars(module).items():
        if isinstance(value, Workflow) and not attr.startswith("_"):
            found.append(LoadedWorkflow(f"{label}:{attr}", value, module.__name__, attr))
    if "agents" in sys.modules:  # no SDK loaded: no SDK agent can be here
        found.extend(_sdk_roots_in(module, label))
    return found


def _is_sdk_agent(obj: object) -> bool:
    if "agents" not in sys.modules:
        return False
    from stepswitch.interop.sdk import is_sdk_agent

    return is_sdk_agent(obj)


def _from_sdk(
    target: str, agent: object, module: ModuleType, attr: str, label: str,
    reached: Reached | None = None, suffix: str = "",
) -> LoadedWorkflow:
    from stepswitch.interop.sdk import SDKNotCarriedWarning, from_sdk, from_sdk_run

    try:
        with warnings.catch_warnings():  # each is a diagnostic (SW610) of the workflow
            warnings.simplefilter("ignore", SDKNotCarriedWarning)
            if reached is None:
                workflow = from_sdk(agent, name=attr)
            else:
                workflow = from_sdk_run(agent, name=attr, run=reached)
    except UserError as exc:
        raise TargetError(f"{target}: {exc}") from None
    return LoadedWorkflow(f"{label}:{attr}{suffix}", workflow, module.__name__, attr)


def _sdk_roots_in(module: ModuleType, label: str) -> list[LoadedWorkflow]:
    """SDK agents declared in this module's own source (not imported into it) that no
    other agent of the module reaches: the entries of the apps it declares."""
    from stepswitch.interop._sites import sites_in
    from stepswitch.interop.sdk import sdk_roots

    file = getattr(module, "__file__", None)
    if not file:
        return []
    declared = sites_in(file).by_variable
    namespace = {k: v for k, v in vars(module).items() if k in declared}
    try:
        roots = sdk_roots(namespace)
    except UserError as exc:
        raise TargetError(f"{label}: {exc}") from None
    return [_from_sdk(f"{label}:{attr}", agent, module, attr, label) for attr, agent in roots]
