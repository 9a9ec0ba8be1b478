"""Import paths for what ``from_sdk`` converts, so a generated runner can import them.

A generated module imports every user object by ``module:qualname``. In an SDK app the
module-level name of a tool holds the SDK's ``FunctionTool``, not the function stepswitch
runs; so a converted tool's path points here instead:
``stepswitch.interop.sdk_objects:app.tools:lookup_order`` imports ``app.tools``, takes
its ``lookup_order`` and returns the converted object (the very one ``from_sdk`` made, in
the process that made it). ``@tool_use`` after the name converts a ``tool_use_behavior``
function; ``@input_filter`` an SDK handoff input filter; ``@mcp`` an SDK MCP server, whose
tools follow (``…:app:files@mcp.tools.read_file``).
"""

from __future__ import annotations

import importlib
from typing import Any

from stepswitch._site import Site

__all__ = ["path_of", "site_of"]

_MODULE = __name__


def path_of(sdk_obj: Any, kind: str = "") -> tuple[str, str] | None:
    """``(module, qualname)`` under which this module resolves ``sdk_obj`` (found at its
    module-level name), or None when no module-level name holds it."""
    if kind == "mcp":  # an object, not a function: look for the module-level name holding it
        held = _held(sdk_obj)
        return None if held is None else (_MODULE, f"{held[0]}:{held[1]}@mcp")
    fn = getattr(sdk_obj, "guardrail_function", None) or sdk_obj
    module_name = getattr(fn, "__module__", None)
    name = getattr(fn, "__name__", None)
    if kind == "" and getattr(sdk_obj, "name", None) and type(sdk_obj).__name__ == "FunctionTool":
        from stepswitch.interop._sdk_private import tool_function

        fn, _ = tool_function(sdk_obj)
        module_name, name = getattr(fn, "__module__", None), getattr(fn, "__name__", None)
    if not module_name or not name or module_name == "__main__":
        return None
    import sys

    module = sys.modules.get(module_name)
    if module is None or getattr(module, name, None) is not sdk_obj:
        return None
    suffix = f"@{kind}" if kind else ""
    return _MODULE, f"{module_name}:{name}{suffix}"


def _held(obj: Any) -> tuple[str, str] | None:
    """``(module, name)`` of a module-level name (of a module not ``__main__``) bound to
    ``obj``."""
    import sys

    for module_name, module in list(sys.modules.items()):
        if module_name == "__main__" or not str(getattr(module, "__file__", "")).endswith(".py"):
            continue
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        for name, value in items:
            if value is obj and name.isidentifier():
                return module_name, name
    return None


def site_of(obj: Any) -> Site:
    """Where a module-level name is bound to ``obj``: its first assignment's line (found
    in the module's source), else the module's first line."""
    import ast
    import sys

    held = _held(obj)
    module = sys.modules.get(held[0]) if held is not None else None
    file = str(getattr(module, "__file__", None) or "<unknown>")
    if held is None:
        return Site(file, 0)
    try:
        with open(file, encoding="utf-8") as f:
            tree = ast.parse(f.read(), file)
    except (OSError, SyntaxError, ValueError):
        return Site(file, 1)
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == held[1] for t in targets):
            return Site(file, node.lineno)
    return Site(file, 1)


class _Dotted:
    """A partial module path met while the importer walks ``a.b.c:name``."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix

    def __getattr__(self, part: str) -> Any:
        if part.startswith("__"):
            raise AttributeError(part)
        return _step(f"{self._prefix}.{part}")


def _step(dotted: str) -> Any:
    if ":" not in dotted:
        return _Dotted(dotted)
    module_name, _, name = dotted.partition(":")
    name, _, kind = name.partition("@")
    module = importlib.import_module(module_name)
    try:
        sdk_obj = getattr(module, name)
    except AttributeError:
        raise AttributeError(f"{module_name} has no attribute {name!r}") from None
    from stepswitch.interop.sdk import converted

    found = converted(sdk_obj, kind)
    if found is None:  # an SDK MCP server stepswitch does not carry (SW601)
        raise AttributeError(f"{module_name}.{name} is an MCP server stepswitch cannot run")
    return found


def __getattr__(part: str) -> Any:
    if part.startswith("__"):
        raise AttributeError(part)
    return _step(part)
