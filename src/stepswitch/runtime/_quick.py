"""A cheaper constructor for the frozen slots dataclasses the loop builds every turn.

A frozen dataclass's generated ``__init__`` sets each field with
``object.__setattr__(self, name, value)``: a global lookup, an attribute lookup and a
call by name per field, about five times the cost of a plain dataclass. A turn builds
several frozen values (its items, the model request), so that shows per turn.
:func:`quick_init` swaps in an ``__init__`` that sets each slot through the slot's own
descriptor, bound once: the same values, the same signature, defaults and default
factories, and the class stays frozen (assignment after construction still raises).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["quick_init"]

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """Give the frozen slots dataclass ``cls`` a descriptor-based ``__init__``."""
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    dataclass_params: Any = cls.__dict__.get("__dataclass_params__")
    if dataclass_params is None or not dataclass_params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"quick_init: {cls.__name__} is not a frozen slots dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"quick_init: {cls.__name__} has a __post_init__")
    names: dict[str, Any] = {"_MISSING": dataclasses.MISSING}
    args: list[str] = []
    body: list[str] = []
    for i, f in enumerate(params):
        if not f.init or f.kw_only:
            raise TypeError(f"quick_init: {cls.__name__}.{f.name} is init=False or kw_only")
        names[f"_set{i}"] = cls.__dict__[f.name].__set__
        if f.default is not dataclasses.MISSING:
            names[f"_default{i}"] = f.default
            args.append(f"{f.name}=_default{i}")
            body.append(f"    _set{i}(self, {f.name})")
        elif f.default_factory is not dataclasses.MISSING:
            names[f"_factory{i}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            body.append(
                f"    _set{i}(self, _factory{i}() if {f.name} is _MISSING else {f.name})"
            )
        else:
            args.append(f.name)
            body.append(f"    _set{i}(self, {f.name})")
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body or ["    pass"])
    exec(source, names)  # the text is built above from field names only
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses assigning a method
    return cls
