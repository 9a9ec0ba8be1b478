"""Layering (DESIGN §1): what a deployed runner imports is the runtime, not the compiler.

Each check starts a fresh interpreter, imports one thing and lists ``sys.modules``:
a module loaded once stays loaded, so only a fresh process tells what an import costs.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests._paths import ROOT

COMPILER = (
    "stepswitch.dsl",
    "stepswitch.graph",
    "stepswitch.analysis",
    "stepswitch.render",
    "stepswitch.compiler",
    "stepswitch.cli",
)
"""The stages left of the runtime (and the CLI): a runner never needs them."""
HEAVY = ("networkx", "jinja2", "graphviz", "openai")
PYDANTIC = ("pydantic", "pydantic_core")
"""The DSL validates with pydantic; the runtime does not import it (a runner's user module
loads it for its tools' parameter models, and the runtime uses it only through them)."""
RUN_LOOP = (
    "asyncio",
    "stepswitch.runtime.machine",
    "stepswitch.runtime.loop",
    "stepswitch.runtime.effects",
    "stepswitch.runtime.pump",
    "stepswitch.runtime.flow",
)
"""What running a machine needs and checking a workflow does not."""
ASYNC = (
    "asyncio", "ssl", "logging", "concurrent", "subprocess", "stepswitch.runtime.pump",
    "stepswitch.settings",
)
"""What a run needs and a runner's import does not: performing a run's effects (asyncio
and what it drags in; a server has asyncio loaded before it imports a runner) and the
states' ``ModelSettings`` (a pydantic model class), loaded with the first run."""
ON_USE = (
    "stepswitch.runtime.flow",
    "stepswitch.runtime.flow_core",
    "stepswitch.runtime.flow_state",
    "stepswitch.flow_ir",
    "stepswitch.runtime.tracing",
    "stepswitch.runtime.conversation",
    "stepswitch.runtime.state_check",
    "stepswitch.dsl._arg_models",
)
"""What loads only for a run or a declaration that needs it: a flow, tracing, a session,
a resumed state, and the DSL's pydantic argument models (for a declaration that is not
plainly right)."""


def _loaded(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return set(modules)


def _under(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_import_stepswitch_loads_nothing_but_the_package() -> None:
    loaded = _loaded("import stepswitch")
    assert _under(loaded, ("stepswitch",)) == ["stepswitch", "stepswitch._version"]
    assert _under(loaded, ("agents",)) == []
    assert _under(loaded, ("pydantic", *HEAVY)) == []


def test_the_lazy_names_still_load_on_use() -> None:
    loaded = _loaded("import stepswitch as ss\nassert callable(ss.Agent) and ss.testing")
    assert "stepswitch.dsl" in loaded and "stepswitch.testing" in loaded
    assert _under(loaded, ("stepswitch.analysis", "stepswitch.render", *HEAVY)) == []


def test_the_subpackage_attributes_load_only_on_use() -> None:
    lazy = ("stepswitch.sessions", "stepswitch.temporal", "stepswitch.interop",
            "stepswitch.review", "stepswitch.otel", "temporalio")
    assert _under(_loaded("import stepswitch as ss\nassert 'sessions' in dir(ss)"), lazy) == []
    loaded = _loaded("import stepswitch as ss\nassert ss.sessions.MemorySession")
    assert "stepswitch.sessions" in loaded
    assert _under(loaded, ("stepswitch.temporal", "stepswitch.interop", "temporalio")) == []


def test_the_runtime_imports_no_compiler_stage() -> None:
    loaded = _loaded("import stepswitch.runtime.generated")
    assert _under(loaded, COMPILER) == []
    assert _under(loaded, ("stepswitch.interop", "agents")) == []
    assert _under(loaded, HEAVY) == []
    assert _under(loaded, ("stepswitch.testing", "stepswitch.models")) == []


def test_the_runtime_imports_no_pydantic() -> None:
    """The runtime's own import path is pydantic-free: ``ModelSettings`` (a pydantic
    model) loads with a machine's first run, and a tool's arguments are validated by the pydantic
    model the DSL built for it."""
    for statement in ("import stepswitch.runtime", "import stepswitch.runtime.generated"):
        assert _under(_loaded(statement), PYDANTIC) == [], statement


def test_the_runtime_package_loads_its_names_on_use() -> None:
    """``stepswitch.runtime`` re-exports lazily, so naming one runtime type (a checked
    module's annotation ``ss.RunResult``) does not load the run loop."""
    loaded = _loaded("import stepswitch.runtime")
    assert _under(loaded, ("stepswitch.runtime",)) == ["stepswitch.runtime"]
    loaded = _loaded("import stepswitch as ss\nassert ss.RunResult and ss.RunState")
    assert _under(loaded, RUN_LOOP) == []
    loaded = _loaded("from stepswitch.runtime import StateMachine, RunConfig, RunResult")
    assert "stepswitch.runtime.machine" in loaded


def test_check_loads_no_run_loop_renderer_or_codegen() -> None:
    """``stepswitch check`` (a pre-commit hook) loads what checking needs: the DSL, the
    graph and the analyzer; graphs/ names ``ss.RunResult`` in an annotation, which loads
    the result type and not the loop, asyncio, the renderers or codegen."""
    loaded = _loaded(
        "import contextlib, io\nfrom stepswitch.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['check', 'graphs/']) == 0"
    )
    assert "stepswitch.analysis" in loaded and "graphs.support" in loaded
    assert _under(loaded, RUN_LOOP) == []
    assert _under(loaded, ("stepswitch.render", "stepswitch.compiler.codegen")) == []
    assert _under(loaded, ("stepswitch.testing",)) == []
    assert _under(loaded, HEAVY) == []


def test_a_generated_runner_imports_no_compiler_stage() -> None:
    """codegen/support.py, the checked-in runner: its user module (graphs/support.py)
    declares its tools with the DSL, so ``stepswitch.dsl`` loads for the user's sake;
    nothing of the graph, the analyzer, the renderers, codegen or the CLI does."""
    loaded = _loaded("import codegen.support")
    assert "codegen.support" in loaded and "stepswitch.runtime.loop" in loaded
    assert _under(loaded, tuple(p for p in COMPILER if p != "stepswitch.dsl")) == []
    assert _under(loaded, HEAVY) == []


def test_the_pytest_plugin_costs_nothing_until_its_fixture_is_used() -> None:
    """pytest imports every installed pytest11 plugin in every project at start-up."""
    loaded = _loaded("import stepswitch.models.pytest_plugin")
    assert _under(loaded, ("stepswitch",)) == [
        "stepswitch", "stepswitch._version", "stepswitch.models",
        "stepswitch.models.pytest_plugin",
    ]
    assert _under(loaded, HEAVY) == []


def test_the_sdk_reader_loads_only_when_asked_for() -> None:
    loaded = _loaded("import stepswitch as ss\nwf = ss.Workflow('w', entry=ss.Agent('a'))\n"
                     "wf.compile()")
    assert _under(loaded, ("stepswitch.interop", "agents")) == []
    loaded = _loaded("import stepswitch as ss\nassert callable(ss.from_sdk)")
    assert "stepswitch.interop.sdk" in loaded
    assert _under(loaded, ("agents",)) == []  # the SDK itself loads with the app


def test_a_runner_loads_asyncio_with_its_first_run_not_on_import() -> None:
    """Issue #10's cold start: asyncio and its dependencies are about a fifth of a
    runner's import, so they load when the first run performs its effects."""
    loaded = _loaded("import stepswitch.runtime.generated")
    assert _under(loaded, ASYNC) == []
    loaded = _loaded("import codegen.support")
    assert _under(loaded, ASYNC) == []
    assert _under(loaded, ON_USE) == []
    loaded = _loaded(
        "import codegen.support as runner\n"
        "from stepswitch.testing import ScriptedModel, assistant_message, function_call\n"
        "model = ScriptedModel([[function_call('lookup_order', {'order_id': 42})],\n"
        "                       [assistant_message('shipped')]])\n"
        "assert runner.run_sync('where is 42?', model=model).final_output == 'shipped'"
    )
    assert {"asyncio", "stepswitch.runtime.pump", "stepswitch.settings"} <= loaded
    assert _under(loaded, ON_USE) == []


def test_a_run_under_a_cost_ceiling_prices_it_without_the_analyzer() -> None:
    """``RunConfig(max_cost_usd=)`` reads the shipped price table the cost bound reads,
    from a leaf module: a deployed runner still loads no compiler stage."""
    loaded = _loaded(
        "import codegen.support as runner\n"
        "import stepswitch as ss\n"
        "from stepswitch.testing import ScriptedModel, assistant_message\n"
        "model = ScriptedModel([assistant_message('hi')], name='gpt-4.1')\n"
        "config = ss.RunConfig(max_cost_usd=1.0)\n"
        "assert runner.run_sync('hi', model=model, run_config=config).final_output == 'hi'"
    )
    assert "stepswitch._prices" in loaded
    assert _under(loaded, tuple(p for p in COMPILER if p != "stepswitch.dsl")) == []


def test_a_plainly_valid_declaration_builds_no_argument_model() -> None:
    """The DSL's pydantic models of its own arguments are built only to explain a
    declaration that may be wrong; a wrong one still gets its located message."""
    loaded = _loaded(
        "import stepswitch as ss\n"
        "b = ss.Agent('b', 'b')\n"
        "a = ss.Agent('a', 'a', handoffs=[ss.handoff(b, max_uses=2)],\n"
        "             tools=[b.as_tool('t', 'd')])\n"
        "ss.Workflow('w', entry=a, agents=[a, b], max_turns=3)"
    )
    assert "stepswitch.dsl" in loaded
    assert "stepswitch.dsl._arg_models" not in loaded
    loaded = _loaded(
        "import stepswitch as ss\n"
        "try:\n"
        "    ss.Agent('a', 'a', tools=[42])\n"
        "except ss.UserError as exc:\n"
        "    assert 'tools[0]: expected a @function_tool or an agent tool' in str(exc), exc\n"
        "    assert '<string>:4' in str(exc), exc  # the declaration's line\n"
        "else:\n"
        "    raise AssertionError('accepted tools=[42]')"
    )
    assert "stepswitch.dsl._arg_models" in loaded
