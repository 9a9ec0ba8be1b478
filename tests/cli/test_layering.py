"""The CLI's modules share through its helper modules, never through each other's
privates; and nothing below the CLI imports it (read with ``ast``, imports inside
functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

from stepswitch.cli.main import _COMMANDS
from tests.test_room_imports import absolute_module, module_name

SRC = Path(__file__).resolve().parents[2] / "src" / "stepswitch"
CLI = SRC / "cli"


def _module_name(path: Path) -> str:
    return module_name(path, SRC)


def cli_imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str, str]]:
    """Every ``(line, cli module, name)`` ``source`` takes from a ``stepswitch.cli``
    module: ``from stepswitch.cli.run import x`` gives ``x``; ``import
    stepswitch.cli.run as r`` then ``r.x`` gives ``x``; a module imported whole gives
    ``""``."""
    tree = ast.parse(source)
    found: list[tuple[int, str, str]] = []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = absolute_module(node, module, is_package)
            for alias in node.names:
                if origin == "stepswitch.cli":  # from stepswitch.cli import run
                    aliases[alias.asname or alias.name] = f"{origin}.{alias.name}"
                    found.append((node.lineno, f"{origin}.{alias.name}", ""))
                elif origin.startswith("stepswitch.cli."):
                    found.append((node.lineno, origin, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "stepswitch.cli" or alias.name.startswith("stepswitch.cli."):
                    found.append((node.lineno, alias.name, ""))
                    if alias.asname:
                        aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            found.append((node.lineno, aliases[node.value.id], node.attr))
    return found


def _cli_sources() -> list[tuple[Path, str]]:
    return [(p, _module_name(p)) for p in sorted(CLI.glob("*.py"))]


def test_no_cli_module_takes_another_ones_private_names() -> None:
    bad = []
    for path, module in _cli_sources():
        for line, origin, name in cli_imports(path.read_text("utf-8"), module):
            if origin != module and name.startswith("_"):
                bad.append(f"{path.name}:{line}: {name} of {origin}")
    assert bad == [], "move what is shared into a helper module (cli/_console.py, ...)"


def test_no_command_imports_another_command() -> None:
    commands = {f"stepswitch.cli.{c}" for c in _COMMANDS}
    bad = []
    for path, module in _cli_sources():
        if module not in commands:
            continue
        for line, origin, _ in cli_imports(path.read_text("utf-8"), module):
            if origin in commands and origin != module:
                bad.append(f"{path.name}:{line}: imports {origin}")
    assert bad == []


def test_nothing_outside_the_cli_imports_it() -> None:
    """The studio page, ``stepswitch test`` cases and the rest read TARGETs from
    ``stepswitch.targets``: the CLI sits on top, in no import cycle."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        if CLI in path.parents or path == SRC / "__main__.py":
            continue
        module = _module_name(path)
        for line, origin, _ in cli_imports(path.read_text("utf-8"), module,
                                           path.name == "__init__.py"):
            bad.append(f"{path.relative_to(SRC)}:{line}: imports {origin}")
    assert bad == []


def test_the_reader_sees_every_form_of_import() -> None:
    source = (
        "import stepswitch.cli.run as r\n"
        "from stepswitch.cli.run import _Progress, run\n"
        "from . import run as again\n"
        "from ._console import ask\n"
        "def f():\n"
        "    from stepswitch.cli.worker import _model\n"
        "    return r._save, again._keep\n"
    )
    got = sorted(cli_imports(source, "stepswitch.cli.chat"))
    assert got == [
        (1, "stepswitch.cli.run", ""),
        (2, "stepswitch.cli.run", "_Progress"),
        (2, "stepswitch.cli.run", "run"),
        (3, "stepswitch.cli.run", ""),
        (4, "stepswitch.cli._console", "ask"),
        (6, "stepswitch.cli.worker", "_model"),
        (7, "stepswitch.cli.run", "_keep"),
        (7, "stepswitch.cli.run", "_save"),
    ]
