"""A maker for the slots dataclasses the run loop makes every turn.

:func:`quick_maker` gives the loop a plain function that makes the same instances as
calling the class, without going through the type's call slot and ``__init__``: it
allocates the instance with ``object.__new__(cls)`` and stores each field through its
slot's descriptor, which is what a frozen slots class's ``__init__`` does too
(``stepswitch._dataclass``). A plain (not frozen) slots class, such as an effect's job
or outcome, gets plain attribute stores: it saves the type's call and the ``__init__``
frame it runs (issue #30). The instance is a ``cls`` from its first moment. What it
saves a turn is measured by ``bench/bench_instructions.py`` (bench/README.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = ["quick_maker"]

T = TypeVar("T")
P = ParamSpec("P")


def _checked_fields(cls: type[Any], who: str) -> tuple[dataclasses.Field[Any], ...]:
    """The fields of ``cls``, a slots dataclass (frozen, or with object's own
    ``__setattr__``) whose fields are all plain ``__init__`` parameters, with no
    ``__post_init__``; else ``TypeError``."""
    dataclass_params: Any = cls.__dict__.get("__dataclass_params__")
    if dataclass_params is None or "__slots__" not in cls.__dict__:
        raise TypeError(f"{who}: {cls.__name__} is not a slots dataclass")
    setattr_: object = cls.__setattr__
    if not dataclass_params.frozen and setattr_ is not object.__setattr__:
        raise TypeError(f"{who}: {cls.__name__} has a __setattr__ of its own")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{who}: {cls.__name__} has a __post_init__")
    params = dataclasses.fields(cls)
    for f in params:
        if not f.init or f.kw_only:
            raise TypeError(f"{who}: {cls.__name__}.{f.name} is init=False or kw_only")
    return params


def quick_maker(cls: Callable[P, T]) -> Callable[P, T]:
    """A function that makes instances of the slots dataclass ``cls`` as calling
    ``cls`` does: the same signature, defaults and default factories, and an equal
    ``cls`` instance. It is ``cls.__init__``'s body with the instance made in it
    (``object.__new__``) instead of by the type's call: a frozen class's fields are
    stored by their slots' ``__set__``, as ``object.__setattr__`` would end up doing; a
    plain class's by plain attribute stores (its ``__init__``'s own statements)."""
    if not isinstance(cls, type):
        raise TypeError(f"quick_maker: {cls!r} is not a class")
    params = _checked_fields(cls, "quick_maker")
    frozen = bool(cls.__dict__["__dataclass_params__"].frozen)
    new: object = cls.__new__
    if new is not object.__new__:
        raise TypeError(f"quick_maker: {cls.__name__} has a __new__ of its own")
    names: dict[str, Any] = {
        "_MISSING": dataclasses.MISSING, "_new": object.__new__, "_cls": cls,
    }
    args: list[str] = []
    body: list[str] = ["    self = _new(_cls)"]
    for i, f in enumerate(params):
        if f.name == "self" or f.name.startswith("_"):
            raise TypeError(f"quick_maker: {cls.__name__}.{f.name} is not a plain field name")
        value = f.name
        if f.default is not dataclasses.MISSING:
            names[f"_default{i}"] = f.default
            args.append(f"{f.name}=_default{i}")
        elif f.default_factory is not dataclasses.MISSING:
            names[f"_factory{i}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            value = f"_factory{i}() if {f.name} is _MISSING else {f.name}"
        else:
            args.append(f.name)
        if frozen:
            names[f"_set{i}"] = _slot_setter(cls, f.name)
            body.append(f"    _set{i}(self, {value})")
        else:
            _slot_setter(cls, f.name)  # every field a slot: no instance dict to fill
            body.append(f"    self.{f.name} = {value}")
    body.append("    return self")
    source = f"def make({', '.join(args)}):\n" + "\n".join(body)
    exec(source, names)  # the text is built above from field names only
    make: Callable[P, T] = names["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    make.__module__ = cls.__module__
    make.__doc__ = f"Make a {cls.__name__} (as calling the class does)."
    return make


def _slot_setter(cls: type[Any], name: str) -> Callable[[Any, Any], None]:
    """The ``__set__`` of the slot ``name`` (declared by ``cls`` or one of its bases)."""
    for base in cls.__mro__:
        if name in base.__dict__:
            setter: Callable[[Any, Any], None] = base.__dict__[name].__set__
            return setter
    raise TypeError(f"quick_maker: {cls.__name__}.{name} has no slot")
