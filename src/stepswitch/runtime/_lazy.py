"""The modules a run loads on first use, with their types.

``from stepswitch.runtime import _lazy`` and then ``_lazy.pump.drive(...)``: a type
checker reads the imports below, so each use is checked against the real module; at
run time a name is imported on its first access (the module ``__getattr__`` of PEP
562) and then kept as a global here, so every later access is a plain attribute read.
A run that never traces, keeps a session or resumes a state never loads those
modules, and a generated runner's import does not load asyncio (bench/README.md).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio as asyncio

    from stepswitch.mcp import servers as servers
    from stepswitch.runtime import conversation as conversation
    from stepswitch.runtime import flow as flow
    from stepswitch.runtime import pump as pump
    from stepswitch.runtime import record as record
    from stepswitch.runtime import state_check as state_check
    from stepswitch.runtime import tool_guards as tool_guards
    from stepswitch.runtime import tracing as tracing

__all__: list[str] = []  # nothing to star-import: the names are for attribute access

_WHERE = {
    "asyncio": "asyncio",
    "conversation": "stepswitch.runtime.conversation",
    "flow": "stepswitch.runtime.flow",
    "pump": "stepswitch.runtime.pump",
    "record": "stepswitch.runtime.record",
    "servers": "stepswitch.mcp.servers",
    "state_check": "stepswitch.runtime.state_check",
    "tool_guards": "stepswitch.runtime.tool_guards",
    "tracing": "stepswitch.runtime.tracing",
}


def __getattr__(name: str) -> ModuleType:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where)
    globals()[name] = module
    return module
