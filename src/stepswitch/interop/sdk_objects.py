"""Import paths for what ``from_sdk`` converts, so a generated runner can import them.

A generated module imports every user object by ``module:qualname``. In an SDK app the
module-level name of a tool holds the SDK's ``FunctionTool``, not the function stepswitch
runs; so a converted tool's path points here instead:
``stepswitch.interop.sdk_objects:app.tools:lookup_order`` imports ``app.tools``, takes
its ``lookup_order`` and returns the converted object (the very one ``from_sdk`` made, in
the process that made it). ``@tool_use`` after the name converts a ``tool_use_behavior``
function; ``@input_filter`` an SDK handoff input filter.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["path_of"]

_MODULE = __name__


def path_of(sdk_obj: Any, kind: str = "") -> tuple[str, str] | None:
    """``(module, qualname)`` under which this module resolves ``sdk_obj`` (found at its
    module-level name), or None when no module-level name holds it."""
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

    return converted(sdk_obj, kind)


def __getattr__(part: str) -> Any:
    if part.startswith("__"):
        raise AttributeError(part)
    return _step(part)
