"""The ``check`` cache: a re-check of unchanged files answers without importing them, and
every kind of change (the target, a module it imports, a file it reads, pyproject, a lock
file, a new file in a folder TARGET, stepswitch itself) makes it check anew.

Each check is a real ``python -m stepswitch check`` in the project's folder, as a user runs
it: the cache is per process start, so the in-process ``main()`` would not show it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.cli import _check_cache
from stepswitch.cli.check import FORMAT_NAMES
from stepswitch.cli.formats import FORMATS
from tests._paths import ROOT

SRC = ROOT / "src"

APP = '''
import pathlib
import helpers
import stepswitch as ss

pathlib.Path("imports.log").open("a").write("imported\\n")  # written, so not a dependency

@ss.function_tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return order_id

agent = ss.Agent(name="support", instructions=helpers.INSTRUCTIONS, tools=[lookup])
workflow = ss.Workflow("support", entry=agent, agents=[agent])
'''

HELPERS = '''
import pathlib
INSTRUCTIONS = pathlib.Path("prompt.txt").read_text()
'''


_ONE_AGENT = """import stepswitch as ss
{name} = ss.Agent(name="{name}", instructions="x")
w_{name} = ss.Workflow("{name}", entry={name}, agents=[{name}])
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "prompt.txt").write_text("Help with orders.")
    return tmp_path


def _check(folder: Path, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "STEPSWITCH_NO_CACHE"}
    env["PYTHONPATH"] = str(SRC)
    done = subprocess.run(
        [sys.executable, "-m", "stepswitch", "check", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _imports(folder: Path) -> int:
    log = folder / "imports.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_unchanged_recheck_answers_from_the_cache_without_importing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = _check(project, "app.py")
    assert first[0] == 0, first
    assert _imports(project) == 1
    assert (project / ".stepswitch_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    second = _check(project, "app.py")
    assert second == first
    assert _imports(project) == 1  # the user's module was not imported again


def test_no_cache_flag_neither_reads_nor_writes(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _check(project, "--no-cache", "app.py")
    assert not (project / ".stepswitch_cache").exists()
    _check(project, "app.py")
    _check(project, "--no-cache", "app.py")
    assert _imports(project) == 3


@pytest.mark.parametrize("change", ["target", "imported module", "read file", "pyproject",
                                    "lock file", "options"])
def test_every_kind_of_change_checks_anew(tmp_path: Path, change: str) -> None:
    project = _project(tmp_path)
    rc, _, _ = _check(project, "app.py")
    assert rc == 0
    args = ["app.py"]
    if change == "target":  # a second agent nobody reaches: a finding the cache must not hide
        with (project / "app.py").open("a") as f:
            f.write('\norphan = ss.Agent(name="orphan", instructions="x")\n'
                    'workflow = ss.Workflow("support", entry=agent, agents=[agent, orphan])\n')
    elif change == "imported module":
        (project / "helpers.py").write_text(HELPERS + "INSTRUCTIONS = ''\n")
    elif change == "read file":
        (project / "prompt.txt").write_text("")
    elif change == "pyproject":  # added where none was: an absence the answer depended on
        (project / "pyproject.toml").write_text(
            '[tool.stepswitch]\npolicies = [{ rule = "forbid", tool_or_agent = "lookup" }]\n')
    elif change == "lock file":
        (project / "stepswitch.mcp.lock").write_text("{}\n")
    else:
        args = ["--format", "json", "app.py"]
    _check(project, *args)
    assert _imports(project) == 2, f"a changed {change} was answered from the cache"


@pytest.mark.parametrize("linked", ["read file", "imported module", "folder"])
def test_a_repointed_symlink_checks_anew(tmp_path: Path, linked: str) -> None:
    """The files behind a symlink are unchanged when the link is pointed elsewhere; the
    path the check read through now reads another file, so the answer is stale."""
    project = _project(tmp_path)
    real = tmp_path / "real"
    real.mkdir()
    if linked == "read file":
        link, first, second = project / "prompt.txt", real / "a.txt", real / "b.txt"
        first.write_text("Help with orders.")
        second.write_text("Help with refunds.")
    elif linked == "imported module":
        link, first, second = project / "helpers.py", real / "a.py", real / "b.py"
        first.write_text(HELPERS)
        second.write_text("INSTRUCTIONS = 'Help with refunds.'\n")
    else:
        (project / "helpers.py").write_text(
            "import pathlib\nINSTRUCTIONS = pathlib.Path('prompts/p.txt').read_text()\n")
        link, first, second = project / "prompts", real / "a", real / "b"
        for folder, text in ((first, "Help with orders."), (second, "Help with refunds.")):
            folder.mkdir()
            (folder / "p.txt").write_text(text)
    link.unlink(missing_ok=True)
    link.symlink_to(first)
    assert _check(project, "app.py")[0] == 0
    assert _check(project, "app.py")[0] == 0 and _imports(project) == 1  # a hit
    link.unlink()
    link.symlink_to(second)
    _check(project, "app.py")
    assert _imports(project) == 2, f"a re-pointed symlinked {linked} was answered from the cache"


@pytest.mark.parametrize("name", ["pyproject.toml"])
def test_an_edited_pyproject_checks_anew(tmp_path: Path, name: str) -> None:
    """A pyproject that was there at the first check and is then edited (not only one
    that appears where none was) must invalidate the stored answer. (An edited lock file
    is read, and so keyed, only by a workflow with MCP servers; APP has none.)"""
    project = _project(tmp_path)
    first = "[tool.stepswitch]\n" if name == "pyproject.toml" else "{}\n"
    (project / name).write_text(first)
    rc, _, _ = _check(project, "app.py")
    assert _imports(project) == 1, rc
    _check(project, "app.py")
    assert _imports(project) == 1  # unchanged: answered from the cache
    edited = ('[tool.stepswitch]\npolicies = [{ rule = "forbid", tool_or_agent = "lookup" }]\n'
              if name == "pyproject.toml" else '{"servers": {}}\n')
    (project / name).write_text(edited)
    _check(project, "app.py")
    assert _imports(project) == 2, f"an edited {name} was answered from the cache"


def test_a_new_file_in_a_folder_target_checks_anew(tmp_path: Path) -> None:
    project = _project(tmp_path)
    flows = project / "flows"
    flows.mkdir()
    (flows / "one.py").write_text(_ONE_AGENT.format(name="a"))
    rc, out, _ = _check(project, "flows")
    assert rc == 0 and "1 workflow" in out
    (flows / "two.py").write_text(_ONE_AGENT.format(name="b"))
    rc, out, _ = _check(project, "flows")
    assert rc == 0 and "2 workflows" in out


FALLBACK = '''
import pathlib
import stepswitch as ss

pathlib.Path("imports.log").open("a").write("imported\\n")
try:
    from extra import lookup  # absent at first: the import looks and finds nothing
except ImportError:
    from helpers import lookup

agent = ss.Agent(name="support", instructions="Help.", tools=[lookup])
workflow = ss.Workflow("support", entry=agent, agents=[agent])
'''

TOOL = '''
import stepswitch as ss

@ss.function_tool
def lookup(order_id: {kind}) -> str:
    """Look an order up."""
    return str(order_id)
'''


@pytest.mark.parametrize("appears", ["a module an import fell back from",
                                     "a package that shadows a module"])
def test_a_module_that_appears_where_an_import_looked_checks_anew(
    tmp_path: Path, appears: str
) -> None:
    """No file the check read changed, but an import now finds another one: the folders
    the import system listed are part of the key (a stale pass was found this way)."""
    (tmp_path / "app.py").write_text(FALLBACK)
    (tmp_path / "helpers.py").write_text(TOOL.format(kind="str"))
    first = _check(tmp_path, "app.py")
    assert first[0] == 0, first
    assert _check(tmp_path, "app.py") == first and _imports(tmp_path) == 1  # a hit
    if appears == "a module an import fell back from":
        (tmp_path / "extra.py").write_text(TOOL.format(kind="dict"))
    else:  # helpers/ is imported before helpers.py
        (tmp_path / "helpers").mkdir()
        (tmp_path / "helpers" / "__init__.py").write_text(TOOL.format(kind="dict"))
    rc, out, _ = _check(tmp_path, "app.py")
    assert _imports(tmp_path) == 2, f"{appears} was answered from the cache"
    assert rc == 1 and "SW402" in out, out  # a dict parameter: what a fresh check says


def test_an_abbreviated_no_cache_flag_is_honoured(tmp_path: Path) -> None:
    """argparse takes ``--no-c`` for ``--no-cache``; the answer given before the parser
    runs must not read the cache for it either."""
    project = _project(tmp_path)
    _check(project, "app.py")
    _check(project, "--no-c", "app.py")
    assert _imports(project) == 2


def test_a_hit_loads_no_parser_and_no_typing(tmp_path: Path) -> None:
    """A re-check answered from the cache imports only what reading the entry needs,
    which is what keeps it a small multiple of the interpreter's own start."""
    project = _project(tmp_path)
    probe = ("import sys\n"
             "from stepswitch.cli.main import main\n"
             "rc = main(['check', 'app.py'])\n"
             "heavy = [m for m in ('argparse', 'typing', 'pathlib', 'contextlib', 'pydantic',"
             " 'stepswitch.errors', 'stepswitch.cli.check') if m in sys.modules]\n"
             "print(rc, heavy, file=sys.stderr)\n")
    env = {k: v for k, v in os.environ.items() if k != "STEPSWITCH_NO_CACHE"}
    env["PYTHONPATH"] = str(SRC)
    for _ in range(2):  # the first fills the cache (sys.path is in the key: -c, not -m)
        done = subprocess.run([sys.executable, "-c", probe], cwd=project, env=env,
                              capture_output=True, text=True, timeout=60, check=False)
    assert done.stderr.strip().splitlines()[-1] == "0 []", done.stderr
    assert _imports(project) == 1 and "passed" in done.stdout


def test_findings_replay_exactly_with_their_exit_code(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        "import stepswitch as ss\n"
        "a = ss.Agent(name='a', instructions='x', handoffs=[ss.handoff('nobody')])\n"
        "w = ss.Workflow('w', entry=a, agents=[a])\n")
    first = _check(tmp_path, "bad.py")
    assert first[0] == 1 and "SW" in first[1]
    assert _check(tmp_path, "bad.py") == first


def test_an_import_failure_is_not_kept(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import not_a_module_anywhere\n")
    assert _check(tmp_path, "broken.py")[0] == 2
    assert not list(tmp_path.glob(".stepswitch_cache/check-*.json"))
    (tmp_path / "not_a_module_anywhere.py").write_text("")
    (tmp_path / "broken.py").write_text(
        "import not_a_module_anywhere\n" + _ONE_AGENT.format(name="a"))
    assert _check(tmp_path, "broken.py")[0] == 0


def test_a_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = _check(project, "app.py")
    for entry in (project / ".stepswitch_cache").glob("check-*.json"):
        entry.write_text('{"format": 1, "files": {}, "absent": [], "folders": {}, "stdout": 7}')
    assert _check(project, "app.py") == first
    assert _imports(project) == 2
    stored = json.loads(next((project / ".stepswitch_cache").glob("check-*.json")).read_text())
    assert stored["stdout"] == first[1]


def test_the_key_covers_stepswitch_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    key = _check_cache._key(["app.py"])
    monkeypatch.setattr(_check_cache, "__version__", "99.0")
    assert _check_cache._key(["app.py"]) != key
    monkeypatch.undo()
    monkeypatch.setattr(_check_cache, "_own_fingerprint", lambda: "an edited checkout")
    assert _check_cache._key(["app.py"]) != key


def test_format_names_match_the_formatters() -> None:
    assert tuple(sorted(FORMATS)) == FORMAT_NAMES


SPAWNS = '''
import pathlib
import subprocess
import sys
import stepswitch as ss

pathlib.Path("imports.log").open("a").write("imported\\n")
# as an MCP server over stdio is started: its errors go to the check's own stderr
subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('server up\\\\n')"],
               stderr=sys.stderr, check=True)
agent = ss.Agent(name="support", instructions="Help.")
workflow = ss.Workflow("support", entry=agent, agents=[agent])
'''


def test_a_check_that_starts_a_process_runs_and_is_not_kept(tmp_path: Path) -> None:
    """What a process the check started reads, the cache cannot see; and it needs the
    real stderr's file descriptor (the cache's copy of stderr had none: it failed)."""
    (tmp_path / "app.py").write_text(SPAWNS)
    for n in (1, 2):
        rc, out, err = _check(tmp_path, "app.py")
        assert rc == 0 and "passed" in out, err
        assert "server up" in err
        assert _imports(tmp_path) == n  # checked anew each time
