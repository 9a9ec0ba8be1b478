"""A cheaper maker for the frozen slots dataclasses the run loop makes every turn.

Calling a frozen slots class sets each field through its slot's descriptor (a call per
field, ``stepswitch._dataclass``'s ``__init__`` included): the request, the call item
and the output item of a tool turn cost most of a turn's object making that way.
:func:`quick_maker` gives the loop a function that makes the same instances without
those calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = ["quick_maker"]

T = TypeVar("T")
P = ParamSpec("P")


def _checked_fields(cls: type[Any], who: str) -> tuple[dataclasses.Field[Any], ...]:
    """The fields of ``cls``, a frozen slots dataclass whose fields are all plain
    ``__init__`` parameters, with no ``__post_init__``; else ``TypeError``."""
    dataclass_params: Any = cls.__dict__.get("__dataclass_params__")
    if dataclass_params is None or not dataclass_params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{who}: {cls.__name__} is not a frozen slots dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{who}: {cls.__name__} has a __post_init__")
    params = dataclasses.fields(cls)
    for f in params:
        if not f.init or f.kw_only:
            raise TypeError(f"{who}: {cls.__name__}.{f.name} is init=False or kw_only")
    return params


def quick_maker(cls: Callable[P, T]) -> Callable[P, T]:
    """A function that makes instances of the frozen slots dataclass ``cls`` as calling
    ``cls`` does (same signature, defaults and default factories, an equal frozen
    instance), for about half the cost: for the values the run loop makes every turn.

    Calling a frozen class runs its ``__init__`` through the type's call slot and sets
    each field through its slot's descriptor (a call per field). The maker builds the
    instance as a plain slots twin of ``cls`` instead (the same slots, so the same
    memory layout, and no frozen ``__setattr__``), sets the fields with plain attribute
    stores, then gives it its class: Python lets ``__class__`` change between classes
    of the same layout. That is checked once, here, by making one instance. After
    that, the instance is a ``cls`` like any other.
    """
    if not isinstance(cls, type):
        raise TypeError(f"quick_maker: {cls!r} is not a class")
    params = _checked_fields(cls, "quick_maker")
    if cls.__bases__ != (object,):
        raise TypeError(f"quick_maker: {cls.__name__} has a base class")
    slots = cls.__dict__["__slots__"]
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": slots, "__module__": cls.__module__})
    names: dict[str, Any] = {
        "_MISSING": dataclasses.MISSING, "_new": object.__new__, "_twin": twin, "_cls": cls,
    }
    args: list[str] = []
    body: list[str] = ["    self = _new(_twin)"]
    for i, f in enumerate(params):
        if f.name == "self" or f.name.startswith("_"):
            raise TypeError(f"quick_maker: {cls.__name__}.{f.name} is not a plain field name")
        if f.default is not dataclasses.MISSING:
            names[f"_default{i}"] = f.default
            args.append(f"{f.name}=_default{i}")
            body.append(f"    self.{f.name} = {f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            names[f"_factory{i}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            body.append(
                f"    self.{f.name} = _factory{i}() if {f.name} is _MISSING else {f.name}"
            )
        else:
            args.append(f.name)
            body.append(f"    self.{f.name} = {f.name}")
    body += ["    self.__class__ = _cls", "    return self"]
    source = f"def make({', '.join(args)}):\n" + "\n".join(body)
    exec(source, names)  # the text is built above from field names only
    make: Callable[P, T] = names["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    make.__module__ = cls.__module__
    make.__doc__ = f"Make a {cls.__name__} (as calling the class does)."
    try:
        # every field given: a default factory may import what the maker's module
        # does not (ModelRequest's settings are a pydantic model)
        probe: object = names["make"](*[None] * len(params))
    except TypeError as exc:  # the layouts differ after all: say so now, not per turn
        raise TypeError(f"quick_maker: {cls.__name__} cannot be made as a twin: {exc}") from None
    assert type(probe) is cls
    return make
