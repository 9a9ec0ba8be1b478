"""``@dataclass`` for the package's own classes, made with less work than
:mod:`dataclasses` does.

Python 3.11's :mod:`dataclasses` compiles every method it writes from source, one
``exec`` each: ``__init__``, ``__repr__``, ``__eq__``, and for a frozen class
``__hash__``, ``__setattr__`` and ``__delattr__``; a process pays that for every
class it defines (what that comes to at start-up: bench/README.md). :func:`dataclass`
makes the same class without an ``exec`` at definition: :mod:`dataclasses` still
collects the fields, makes the slots and ``__match_args__`` (with its generated
methods switched off); ``__init__`` is compiled here when the class is first called
(until then a stand-in with the same parameters holds its place), ``__eq__``,
``__hash__`` and ``__repr__`` on their first use, and the others are functions closed
over the field names. Together they do what the generated ones do: equality and hash
over the same fields, the same (recursion-safe) repr, ``FrozenInstanceError`` on
assignment, pickling and copying of frozen slots classes, and ``__dataclass_params__``
telling the same story. So
``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` see an ordinary
dataclass, and mypy reads this decorator as :func:`dataclasses.dataclass` itself
(tests/test_dataclass.py compares the package's own classes made both ways).

Taken: the options the package uses (``repr``, ``eq``, ``frozen``, ``slots``); fields
with defaults, default factories, ``init=False``, ``repr=False``, ``compare=False``,
``KW_ONLY``; a ``__post_init__`` without ``InitVar`` s. A class with a dataclass base is
handed to :mod:`dataclasses` as it is (inheritance checks stay theirs); an ``InitVar``
is refused.
"""

from __future__ import annotations

import _thread
import abc
import dataclasses
import inspect
import re
import sys
from collections.abc import Callable
from types import CodeType, FunctionType, MemberDescriptorType
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
    collected = _collect(cls)
    if collected is None:  # something unusual: dataclasses decides (and words any error)
        cls = dataclasses.dataclass(
            cls, init=False, repr=False, eq=False, frozen=False, slots=slots
        )
    else:
        cls = _process(cls, collected, slots=slots)
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
        _set_new(cls, "__repr__", _repr([f.name for f in fields if f.repr]))
    if eq:
        _set_new(cls, "__eq__", _eq(cls, [f.name for f in fields if f.compare]))
        if not explicit_hash:
            hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
            if frozen:
                _set_new(cls, "__hash__", _hash(cls, hashed), replace=True)
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
    key = (repr, eq, frozen, slots)
    params = _PARAMS_MADE.get(key)
    if params is None:  # the same options tell the same story: one object per options
        made_params = cls.__dataclass_params__
        values = {name: getattr(made_params, name) for name in type(made_params).__slots__}
        values.update(init=True, repr=repr, eq=eq, frozen=frozen)
        params = _PARAMS_MADE[key] = type(made_params)(**values)
    cls.__dataclass_params__ = params
    if no_doc:
        try:
            signature = str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            signature = ""
        cls.__doc__ = cls.__name__ + signature
    return cls


@dataclasses.dataclass(init=False, repr=False, eq=False)
class _Probe:
    """A class made by :mod:`dataclasses` itself, to read its markers from (rather than
    its private names): what a real field's ``_field_type`` is, its parameters' type,
    and the ``__replace__`` it gives a class (3.13)."""

    x: int


_Field: Any = dataclasses.Field
_MISSING: Any = dataclasses.MISSING
_FIELD_TYPE: Any = getattr(_Probe.__dataclass_fields__["x"], "_field_type", None)
_PARAMS: Any = type(vars(_Probe)["__dataclass_params__"])
_REPLACE: Any = _Probe.__dict__.get("__replace__")
_FAST = sys.version_info[:2] in ((3, 11), (3, 12), (3, 13)) and _FIELD_TYPE is not None
"""Whether :func:`_collect` may stand in for :mod:`dataclasses`' own class processing:
on the versions whose processing it repeats (and tests against: tests/test_dataclass.py)."""


def _collect(cls: type[Any]) -> dict[str, dataclasses.Field[Any]] | None:
    """The fields :mod:`dataclasses` would find in ``cls`` (which has no dataclass base),
    without its per-annotation regular expressions and module lookups (three checks of
    each annotation, for ``ClassVar``, ``InitVar`` and ``KW_ONLY``). None, and
    :mod:`dataclasses` does it, for anything but the plain case:
    annotations that are not strings (no ``from __future__ import annotations``), that
    mention ``ClassVar`` or ``InitVar``, a ``KW_ONLY`` that is not plainly
    ``dataclasses.KW_ONLY``, a mutable default, a ``field()`` without an annotation,
    ``__slots__`` in a base, or a Python whose processing this does not repeat."""
    if not _FAST:
        return None
    for base in cls.__mro__[1:-1]:
        if "__slots__" in base.__dict__:
            return None
    own = cls.__dict__
    annotations: dict[str, Any] = own.get("__annotations__", {})
    found: list[tuple[str, str, dataclasses.Field[Any], bool]] = []
    kw_only = False
    for name, annotation in annotations.items():
        if type(annotation) is not str or "ClassVar" in annotation or "InitVar" in annotation:
            return None
        if "KW_ONLY" in annotation:
            module = sys.modules.get(cls.__module__)
            if (
                kw_only
                or annotation != "KW_ONLY"
                or module is None
                or module.__dict__.get("KW_ONLY") is not dataclasses.KW_ONLY
            ):
                return None
            kw_only = True
            continue
        default = getattr(cls, name, _MISSING)
        if isinstance(default, _Field):
            made = default
        else:
            if isinstance(default, MemberDescriptorType):
                default = _MISSING
            # what dataclasses.field(default=default) makes, without the call through it
            made = _Field(default, _MISSING, True, True, None, True, None, _MISSING)
        if made.default.__class__.__hash__ is None:  # a list default: dataclasses refuses
            return None
        found.append((name, annotation, made, kw_only))
    for key, value in own.items():
        if isinstance(value, _Field) and key not in annotations:
            return None
    fields: dict[str, dataclasses.Field[Any]] = {}
    for name, annotation, made, kw in found:  # only now: a fallback gets them untouched
        made.name = name
        made.type = annotation
        made._field_type = _FIELD_TYPE  # type: ignore[attr-defined]
        if made.kw_only is dataclasses.MISSING:
            made.kw_only = kw
        fields[name] = made
    return fields


def _process(
    cls: type[Any], fields: dict[str, dataclasses.Field[Any]], *, slots: bool
) -> type[Any]:
    """What ``dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)``
    does with the fields :func:`_collect` found: the class attributes of the defaults,
    the fields and parameters, ``__match_args__``, ``__replace__`` where this Python's
    dataclasses give one, and for ``slots`` the class made again with ``__slots__``."""
    for f in fields.values():
        if isinstance(getattr(cls, f.name, None), dataclasses.Field):
            if f.default is dataclasses.MISSING:
                delattr(cls, f.name)
            else:
                setattr(cls, f.name, f.default)
    values = {
        "init": False, "repr": False, "eq": False, "order": False, "unsafe_hash": False,
        "frozen": False, "match_args": True, "kw_only": False, "slots": slots,
        "weakref_slot": False,
    }
    cls.__dataclass_params__ = _PARAMS(**{k: values[k] for k in _PARAMS.__slots__})
    cls.__dataclass_fields__ = fields
    if "__match_args__" not in cls.__dict__:
        match_args = tuple(f.name for f in fields.values() if f.init and not f.kw_only)
        setattr(cls, "__match_args__", match_args)  # noqa: B010 (mypy: no assigning it)
    if _REPLACE is not None and "__replace__" not in cls.__dict__:
        setattr(cls, "__replace__", _REPLACE)  # noqa: B010
    if slots:
        if "__slots__" in cls.__dict__:
            raise TypeError(f"{cls.__name__} already specifies __slots__")
        namespace = dict(cls.__dict__)
        namespace["__slots__"] = tuple(fields)
        for name in fields:
            namespace.pop(name, None)
        namespace.pop("__dict__", None)
        namespace.pop("__weakref__", None)
        qualname = cls.__qualname__
        metaclass: Any = type(cls)
        cls = metaclass(cls.__name__, cls.__bases__, namespace)
        cls.__qualname__ = qualname
    abc.update_abstractmethods(cls)
    return cls


_PARAMS_MADE: dict[tuple[bool, bool, bool, bool], Any] = {}
"""``__dataclass_params__`` by (repr, eq, frozen, slots): every field of it follows from
those (the rest are dataclasses' defaults), so classes of one kind share one."""


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
    """The ``__init__`` :mod:`dataclasses` would write. A frozen slots class sets each
    field through its slot's descriptor (what ``object.__setattr__`` ends in, without
    looking it up per call), any other frozen class through ``object.__setattr__``, the
    rest with ``self.name = value``.

    What is returned first is that function's stand-in (:func:`_first_call_init`): the
    same parameters, defaults, annotations and name, so the class's signature and its
    argument errors are the real ones, and the real ``__init__`` is compiled when the
    class is first called (a class never instantiated in a process never compiles it)."""
    names = [f.name for f in fields]
    me = "self" if "self" not in names else "__dataclass_self__"
    by_slot = slots and frozen
    scope: dict[str, Any] = {
        "__dataclass_HAS_DEFAULT_FACTORY__": _HAS_DEFAULT_FACTORY,
        "__dataclass_object_setattr__": object.__setattr__,
    }
    positional: list[str] = []  # placeholders, as the source names the parameters
    keyword: list[str] = []
    positional_names: list[str] = []  # the same parameters by their fields' names
    keyword_names: list[str] = []
    defaults: list[Any] = []  # of the trailing positional parameters that have one
    kwdefaults: dict[str, Any] = {}
    body: list[str] = []
    for i, f in enumerate(fields):
        param = _placeholder(i)
        dflt = f"__dataclass_dflt_{i}__"
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        value: str | None
        if f.init:
            if has_factory:
                scope[dflt] = f.default_factory
                default: Any = _HAS_DEFAULT_FACTORY
                value = f"{dflt}() if {param} is __dataclass_HAS_DEFAULT_FACTORY__ else {param}"
            else:
                default = f.default
                value = param
            if f.kw_only:
                keyword.append(param)
                keyword_names.append(f.name)
                if default is not dataclasses.MISSING:
                    kwdefaults[f.name] = default
            elif default is not dataclasses.MISSING:
                positional.append(param)
                positional_names.append(f.name)
                defaults.append(default)
            elif defaults:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            else:
                positional.append(param)
                positional_names.append(f.name)
        elif has_factory:
            scope[dflt] = f.default_factory
            value = f"{dflt}()"
        elif has_default and slots:
            scope[dflt] = f.default
            value = dflt
        else:
            continue  # read from the class attribute, as dataclasses leaves it
        if by_slot:
            scope[f"__dataclass_set_{i}__"] = cls.__dict__[f.name].__set__
            body.append(f"  __dataclass_set_{i}__({me}, {value})")
        elif frozen:
            body.append(f"  __dataclass_object_setattr__({me}, {param!r}, {value})")
        else:
            body.append(f"  {me}.{param} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append(f"  {me}.__post_init__()")
    signature = [me, *positional, *(["*", *keyword] if keyword else [])]
    source = f"def __init__({', '.join(signature)}):\n" + ("\n".join(body) or "  pass")
    annotations = {f.name: f.type for f in fields if f.init} | {"return": None}

    def real() -> Callable[..., None]:
        init: Callable[..., None] = _function(source, names, scope, tuple(defaults) or None)
        init.__kwdefaults__ = kwdefaults or None
        init.__annotations__ = annotations
        return init

    return _first_call_init(
        cls, real, (me, *positional_names), tuple(keyword_names), tuple(defaults) or None,
        kwdefaults or None, annotations,
    )


def _first_call_init(
    cls: type[Any],
    real: Callable[[], Callable[..., None]],
    positional: tuple[str, ...],
    keyword: tuple[str, ...],
    defaults: tuple[Any, ...] | None,
    kwdefaults: dict[str, Any] | None,
    annotations: dict[str, Any],
) -> Callable[..., None]:
    """An ``__init__`` with the parameters ``positional`` (``self`` first) and ``keyword``,
    whose first call makes the real one (``real()``), puts it on ``cls`` in its own place
    and hands it the arguments. Its code is :data:`_STAND_IN`'s with these parameters:
    Python parses a call's arguments from the code's parameter names and the function's
    defaults, so a wrong call fails exactly as it would on the real ``__init__``."""
    made: list[Callable[..., None]] = []

    def first(arguments: dict[str, Any]) -> None:
        if not made:
            init = real()
            init.__qualname__ = stand_in.__qualname__
            made.append(init)
            if cls.__dict__.get("__init__") is stand_in:
                type.__setattr__(cls, "__init__", init)
        made[0](**arguments)

    varnames = (*positional, *keyword)
    code = _STAND_IN.replace(
        co_argcount=len(positional), co_kwonlyargcount=len(keyword),
        co_varnames=varnames, co_nlocals=len(varnames),
    )
    scope = {"__dataclass_first__": first, "__dataclass_locals__": locals}
    stand_in: Callable[..., None] = FunctionType(code, scope, "__init__", defaults)
    stand_in.__kwdefaults__ = kwdefaults
    stand_in.__annotations__ = annotations
    return stand_in


def _placeholder(i: int) -> str:
    """How method code names field ``i`` (its parameter, attribute and label)."""
    return _PLACEHOLDERS[i] if i < len(_PLACEHOLDERS) else f"__dataclass_f{i}__"


_PLACEHOLDERS = [f"__dataclass_f{i}__" for i in range(32)]


_PLACEHOLDER = re.compile(r"__dataclass_f(\d+)__")

_CODE: dict[str, _Template] = {}
"""Compiled method code by source text, which names fields by :func:`_placeholder`: one
compile serves every class of the same shape (field count, which fields have factories,
which are keyword-only, ...), renamed for each (:func:`_function`)."""

_BUILTINS: dict[str, Any] = {}
"""The globals of the methods that need no names of their own (``hash``, ``NotImplemented``
come from the builtins)."""


class _Template:
    """A compiled method and where its placeholders are: read once per source text."""

    __slots__ = ("code", "consts", "names", "others", "varnames")

    def __init__(
        self,
        code: CodeType,
        names: tuple[int | str, ...],
        varnames: tuple[int | str, ...],
        consts: bool,
        others: frozenset[str],
    ) -> None:
        self.code = code
        self.names = names
        """``co_names``: a field's index for a placeholder, else the name itself."""
        self.varnames = varnames
        """``co_varnames``, likewise."""
        self.consts = consts
        """Some string constant holds a placeholder (the repr's labels)."""
        self.others = others
        """The names the method uses that are not placeholders (a field may not be one)."""


def _template(source: str) -> _Template:
    code = _compiled(source)

    def slots(found: tuple[str, ...]) -> tuple[int | str, ...]:
        return tuple(
            int(m.group(1)) if (m := _PLACEHOLDER.fullmatch(n)) else n for n in found
        )

    names, varnames = slots(code.co_names), slots(code.co_varnames)
    return _Template(
        code,
        names,
        varnames,
        any(isinstance(c, str) and "__dataclass_f" in c for c in code.co_consts),
        frozenset(n for n in (*names, *varnames) if isinstance(n, str)),
    )


def _function(
    source: str, names: list[str], scope: dict[str, Any], defaults: tuple[Any, ...] | None = None
) -> Any:
    """The one function ``source`` defines, with ``names[i]`` for each placeholder ``i``
    in its parameters, attribute names and string constants (the repr's labels)."""
    template = _CODE.get(source)
    if template is None:
        template = _CODE[source] = _template(source)
    code = template.code
    if template.others.isdisjoint(names):
        code = code.replace(
            co_names=tuple([n if isinstance(n, str) else names[n] for n in template.names]),
            co_varnames=tuple([
                n if isinstance(n, str) else names[n] for n in template.varnames
            ]),
        )
        if template.consts:
            code = code.replace(co_consts=tuple([
                _PLACEHOLDER.sub(lambda m: names[int(m.group(1))], c)
                if isinstance(c, str) and "__dataclass_f" in c else c
                for c in code.co_consts
            ]))
    else:  # a field named like a name the method uses (a field called hash): its own text
        code = _compiled(_PLACEHOLDER.sub(lambda m: names[int(m.group(1))], source))
    return FunctionType(code, scope, code.co_name, defaults)


def _compiled(source: str) -> CodeType:
    """The code of the one function ``source`` defines."""
    module = compile(source, "<string>", "exec")  # text made from placeholders only
    return next(c for c in module.co_consts if isinstance(c, CodeType))


_STAND_IN: CodeType = _compiled(
    "def __init__():\n  __dataclass_first__(__dataclass_locals__())"
)
"""The body of every :func:`_first_call_init`: its parameters, as a dict, to the real
``__init__``. It reads them by ``locals()`` and no name of its own, so one code serves
any parameter list (the stand-in's code is this with its parameters put in)."""


def _fields_tuple(target: str, count: int) -> str:
    """``(target.f0,target.f1,)`` in placeholders, as the generated methods write it."""
    return "(" + "".join(f"{target}.{_placeholder(i)}," for i in range(count)) + ")"


def _repr(names: list[str]) -> Callable[[Any], str]:
    """The generated ``__repr__`` behind the recursion guard :mod:`dataclasses` puts
    around it; compiled on the first call (most classes are never shown)."""
    inner: Callable[[Any], str] | None = None
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        nonlocal inner
        key = id(self), _thread.get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            if inner is None:
                shown = ", ".join(
                    f"{_placeholder(i)}={{self.{_placeholder(i)}!r}}" for i in range(len(names))
                )
                source = (
                    f"def __repr__(self):\n  return self.__class__.__qualname__ + f\"({shown})\""
                )
                inner = _function(source, names, _BUILTINS)
            result: str = inner(self)
        finally:
            running.discard(key)
        return result

    return __repr__


def _eq(cls: type[Any], names: list[str]) -> Callable[..., Any]:
    count = len(names)
    return _on_first_call(cls, "__eq__", lambda: _function(
        "def __eq__(self, other):\n"
        "  if other.__class__ is self.__class__:\n"
        f"    return {_fields_tuple('self', count)}=={_fields_tuple('other', count)}\n"
        "  return NotImplemented",
        names, _BUILTINS,
    ))


def _hash(cls: type[Any], names: list[str]) -> Callable[..., Any]:
    return _on_first_call(cls, "__hash__", lambda: _function(
        f"def __hash__(self):\n  return hash({_fields_tuple('self', len(names))})",
        names, _BUILTINS,
    ))


def _on_first_call(
    cls: type[Any], name: str, make: Callable[[], Any]
) -> Callable[..., Any]:
    """A method that compiles the real one (``make``) on its first call and puts it on
    ``cls`` in its own place: a class whose instances are never compared or hashed (most
    of them, in a ``stepswitch check``) never compiles its ``__eq__`` or ``__hash__``."""

    def method(self: Any, *args: Any) -> Any:
        real = make()
        real.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, real)
        return real(self, *args)

    method.__name__ = name
    return method


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
