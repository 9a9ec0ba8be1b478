"""``@dataclass`` for the package's own classes, at a third of the cost to define.

Python 3.11's :mod:`dataclasses` compiles every method it writes from source, one
``exec`` each: ``__init__``, ``__repr__``, ``__eq__``, and for a frozen class
``__hash__``, ``__setattr__`` and ``__delattr__``. That is about 4 M instructions a
frozen class, and what a process defines adds up at start-up: a generated runner
defines some seventy (issue #10). :func:`dataclass` makes the same class with one
``exec``: :mod:`dataclasses` still collects the fields, makes the slots and
``__match_args__`` (with its generated methods switched off); ``__init__`` is compiled
here, once, and the other methods are functions closed over the field names that do
what the generated ones do: equality and hash over the same fields, the same
(recursion-safe) repr, ``FrozenInstanceError`` on assignment, pickling and copying of
frozen slots classes, and ``__dataclass_params__`` telling the same story. So
``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` see an ordinary
dataclass, and mypy reads this decorator as :func:`dataclasses.dataclass` itself.

Taken: the options the package uses (``repr``, ``eq``, ``frozen``, ``slots``); fields
with defaults, default factories, ``init=False``, ``repr=False``, ``compare=False``,
``KW_ONLY``; a ``__post_init__`` without ``InitVar`` s. A class with a dataclass base is
handed to :mod:`dataclasses` as it is (inheritance checks stay theirs); an ``InitVar``
is refused.
"""

from __future__ import annotations

import _thread
import dataclasses
import inspect
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass"]

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:

    def dataclass(cls=None, /, *, repr=True, eq=True, frozen=False, slots=False):
        """Same signature and meaning as :func:`dataclasses.dataclass` (for the options
        above); see the module docstring."""

        def wrap(cls):
            return make_dataclass_class(cls, repr=repr, eq=eq, frozen=frozen, slots=slots)

        return wrap if cls is None else wrap(cls)


def make_dataclass_class(
    cls: type[Any], *, repr: bool, eq: bool, frozen: bool, slots: bool
) -> type[Any]:
    """``cls`` made a dataclass with these options (what ``@dataclass(...)`` returns)."""
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        made: type[Any] = dataclasses.dataclass(
            cls, repr=repr, eq=eq, frozen=frozen, slots=slots
        )
        return made
    own = cls.__dict__
    if frozen:
        for name in ("__setattr__", "__delattr__"):
            if name in own:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    own_hash = own.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in own))
    no_doc = not getattr(cls, "__doc__", None)
    if no_doc:
        cls.__doc__ = "-"  # dataclasses would work out a signature it has no __init__ for yet
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False, slots=slots)
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__) and any(
        f.type is dataclasses.InitVar
        or isinstance(f.type, dataclasses.InitVar)
        or (isinstance(f.type, str) and "InitVar" in f.type)
        for f in cls.__dataclass_fields__.values()
    ):
        raise TypeError(f"{cls.__name__}: stepswitch._dataclass does not take InitVar fields")

    _set_new(cls, "__init__", _init(cls, fields, frozen=frozen, slots=slots))
    if repr:
        _set_new(cls, "__repr__", _repr(tuple(f.name for f in fields if f.repr)))
    if eq:
        compared = _key(tuple(f.name for f in fields if f.compare))
        _set_new(cls, "__eq__", _eq(compared))
        if not explicit_hash:
            hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
            if frozen:
                _set_new(cls, "__hash__", _hash(_key(hashed)), replace=True)
            else:
                cls.__hash__ = None  # type: ignore[assignment]
    if frozen:
        names = tuple(f.name for f in fields)
        setter, deleter = _frozen(cls, names)
        cls.__setattr__ = setter  # type: ignore[assignment]
        cls.__delattr__ = deleter  # type: ignore[assignment]
        if slots:
            _set_new(cls, "__getstate__", _getstate, own=False)
            _set_new(cls, "__setstate__", _setstate, own=False)
    params = cls.__dataclass_params__
    values = {name: getattr(params, name) for name in type(params).__slots__}
    values.update(init=True, repr=repr, eq=eq, frozen=frozen)
    cls.__dataclass_params__ = type(params)(**values)
    if no_doc:
        try:
            signature = str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            signature = ""
        cls.__doc__ = cls.__name__ + signature
    return cls


def _set_new(
    cls: type[Any], name: str, value: Any, *, own: bool = True, replace: bool = False
) -> None:
    """Set ``name`` unless the class body defined it (as :mod:`dataclasses` does; the
    hash rules decide for ``__hash__`` themselves: ``replace``); a function made for this
    class (``own``) is named as its method."""
    if name in cls.__dict__ and not replace:
        return
    if own:
        value.__qualname__ = f"{cls.__qualname__}.{value.__name__}"
    setattr(cls, name, value)


_HAS_DEFAULT_FACTORY: Any = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", None)
if _HAS_DEFAULT_FACTORY is None:  # pragma: no cover - every CPython from 3.7 has it

    class _FactoryMarker:
        def __repr__(self) -> str:
            return "<factory>"

    _HAS_DEFAULT_FACTORY = _FactoryMarker()


def _init(
    cls: type[Any], fields: tuple[dataclasses.Field[Any], ...], *, frozen: bool, slots: bool
) -> Callable[..., None]:
    """The ``__init__`` :mod:`dataclasses` would write, compiled once. A slots class sets
    each field through its slot's descriptor (what ``object.__setattr__`` ends in, without
    looking it up per call); a frozen class without slots through ``object.__setattr__``."""
    names = {f.name for f in fields}
    me = "self" if "self" not in names else "__dataclass_self__"
    scope: dict[str, Any] = {
        "__dataclass_HAS_DEFAULT_FACTORY__": _HAS_DEFAULT_FACTORY,
        "__dataclass_object_setattr__": object.__setattr__,
    }
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    seen_default = False
    for i, f in enumerate(fields):
        default = f"__dataclass_dflt_{i}__"
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        if f.init:
            if has_factory:
                scope[default] = f.default_factory
                param = f"{f.name}=__dataclass_HAS_DEFAULT_FACTORY__"
                value: str | None = (
                    f"{default}() if {f.name} is __dataclass_HAS_DEFAULT_FACTORY__ else {f.name}"
                )
            elif has_default:
                scope[default] = f.default
                param, value = f"{f.name}={default}", f.name
            else:
                param, value = f.name, f.name
            if f.kw_only:
                keyword.append(param)
            else:
                if has_default or has_factory:
                    seen_default = True
                elif seen_default:
                    raise TypeError(f"non-default argument {f.name!r} follows default argument")
                positional.append(param)
        elif has_factory:
            scope[default] = f.default_factory
            value = f"{default}()"
        elif has_default and slots:
            scope[default] = f.default
            value = default
        else:
            value = None  # read from the class attribute, as dataclasses leaves it
        if value is None:
            continue
        if slots and (frozen or "__setattr__" not in cls.__dict__):
            scope[f"__dataclass_set_{i}__"] = cls.__dict__[f.name].__set__
            body.append(f"  __dataclass_set_{i}__({me}, {value})")
        elif frozen:
            body.append(f"  __dataclass_object_setattr__({me}, {f.name!r}, {value})")
        else:
            body.append(f"  {me}.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append(f"  {me}.__post_init__()")
    params = [me, *positional, *(["*", *keyword] if keyword else [])]
    source = f"def __init__({', '.join(params)}):\n" + ("\n".join(body) or "  pass")
    exec(source, scope)  # the text is made above from field names and placeholders only
    init: Callable[..., None] = scope["__init__"]
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    return init


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of these attributes (as the generated ``__eq__`` compares)."""
    if len(names) > 1:
        get: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
        return get
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = id(self), _thread.get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in names])
            return f"{self.__class__.__qualname__}({shown})"
        finally:
            running.discard(key)

    return __repr__


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _frozen(
    cls: type[Any], names: tuple[str, ...]
) -> tuple[Callable[[Any, str, Any], None], Callable[[Any, str], None]]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for fn in (__setattr__, __delattr__):
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    return __setattr__, __delattr__


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=False):
        object.__setattr__(self, f.name, value)
