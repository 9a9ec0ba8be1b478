"""The generated twin of a machine, and a machine whose surfaces alternate between them.

:func:`generated_twin` writes the machine's runner with codegen and loads it in memory.
When every object the machine uses imports by path, the twin resolves them exactly as
a checked-in runner does. Test scenarios often declare tools inside test functions
(closures over a ledger), which no module can import; for those the twin's module is
loaded with ``import_objects`` answering from the machine's own bindings, so the IR
literal, the step functions and the machine construction are still the generated ones.

:class:`Mixed` hands ``run_sync`` to one machine and ``run``/``run_streamed`` to the
other. The conformance harness runs each scenario under all three surfaces and insists
they agree, so with a ``Mixed`` machine it compares the interpreter with the generated
module on everything it observes, while the scenario's tools still run exactly as many
times as the scenario expects.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from stepswitch import StateMachine, UserError
from stepswitch.compiler.codegen import codegen, load_source, plan_module, render
from stepswitch.runtime import generated

_TWINS: weakref.WeakKeyDictionary[StateMachine, tuple[StateMachine, bool]] = (
    weakref.WeakKeyDictionary()
)


def generated_twin(machine: StateMachine) -> tuple[StateMachine, bool]:
    """The generated module's ``MACHINE`` for ``machine``, and whether it imported by path."""
    cached = _TWINS.get(machine)
    if cached is not None:
        return cached
    try:
        source, by_path = codegen(machine), True
    except UserError:
        source, by_path = render(plan_module(machine.ir)), False
    if by_path:
        module = load_source(source, f"twin_{machine.name}")
    else:
        with _resolving_from(generated.bound_objects(machine)):
            module = load_source(source, f"twin_{machine.name}")
    twin: StateMachine = module.MACHINE
    assert twin.ir == machine.ir, "the IR literal does not rebuild the IR"
    _TWINS[machine] = (twin, by_path)
    return twin, by_path


@contextlib.contextmanager
def _resolving_from(objects: Mapping[str, object]) -> Iterator[None]:
    real = generated.import_objects

    def from_bindings(paths: Iterable[str]) -> dict[str, object]:
        return {p: objects[p] for p in paths}

    generated.import_objects = from_bindings  # read by the module's `from ... import`
    try:
        yield
    finally:
        generated.import_objects = real


class Mixed:
    """``run_sync`` on ``sync``; ``run`` and ``run_streamed`` on ``other``."""

    def __init__(self, sync: StateMachine, other: StateMachine) -> None:
        self._sync = sync
        self._other = other

    def run_sync(self, *args: Any, **kwargs: Any) -> Any:
        return self._sync.run_sync(*args, **kwargs)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._other.run(*args, **kwargs)

    def run_streamed(self, *args: Any, **kwargs: Any) -> Any:
        return self._other.run_streamed(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sync, name)


def mixed(machine: StateMachine, *, generated_sync: bool) -> Mixed:
    """A ``Mixed`` of ``machine`` and its twin; ``generated_sync`` says which runs sync."""
    twin, _ = generated_twin(machine)
    return Mixed(twin, machine) if generated_sync else Mixed(machine, twin)
